"""Arena pairing, as lichess runs its arenas: whoever finished a game waits, and waiting entrants are paired.

`ArenaPool` holds who is waiting, who is playing and everyone's points; it is told of joins,
pauses and game ends, and `pair()` answers the games to start now. Waiting entrants are taken
in ranking order (points, then who waited longest), each paired with the nearest one below
that neither played in their last game (an immediate rematch only when nobody else is
active). An entrant is in at most one game at a time. Points: win 2, draw 1, loss 0; with the
streak bonus, after two wins in a row a game counts double until a draw or a loss ends the
streak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from server.tournaments.records import Pairing

WIN, DRAW = 2, 1
"""Arena points for a win and a draw (a loss scores nothing)."""


@dataclass(slots=True)
class ArenaEntrant:
    """One entrant's state in the arena."""

    name: str
    joined: int
    """Order of joining: a tie in points goes to who joined first."""
    active: bool = True
    """False once paused (left): not paired again until they join again."""
    playing: bool = False
    waiting_since: int = 0
    points: int = 0
    streak: int = 0
    """Wins in a row (the bonus applies from the third)."""
    results: list[float] = field(default_factory=list)
    last_opponent: str | None = None
    souths: int = 0
    norths: int = 0

    @property
    def on_fire(self) -> bool:
        """Whether the next game counts double (two wins in a row before it)."""
        return self.streak >= 2


class ArenaError(Exception):
    """A game end the pool did not start (unknown players, or not in a game together)."""


class ArenaPool:
    """Who waits, who plays and with how many points; pairs the waiting (no I/O)."""

    def __init__(self, streak_bonus: bool = True) -> None:
        self.streak_bonus = streak_bonus
        self.entrants: dict[str, ArenaEntrant] = {}
        self._tick = 0
        self._games: set[tuple[str, str]] = set()

    def _next(self) -> int:
        self._tick += 1
        return self._tick

    def join(self, name: str) -> None:
        """Enter the arena, or come back after a pause: waiting from now."""
        entrant = self.entrants.get(name)
        if entrant is None:
            entrant = self.entrants[name] = ArenaEntrant(name, joined=len(self.entrants))
        entrant.active = True
        if not entrant.playing:
            entrant.waiting_since = self._next()

    def leave(self, name: str) -> None:
        """Pause: keep the points, finish a game in progress, and be paired no more."""
        if name in self.entrants:
            self.entrants[name].active = False

    def waiting(self) -> list[str]:
        """Entrants waiting for a game, in ranking order (points, then longest wait)."""
        ready = [e for e in self.entrants.values() if e.active and not e.playing]
        return [e.name for e in sorted(ready, key=lambda e: (-e.points, e.waiting_since, e.joined))]

    def playing(self) -> set[str]:
        """Entrants in a game now."""
        return {e.name for e in self.entrants.values() if e.playing}

    def pair(self) -> list[tuple[str, str]]:
        """Pair the waiting entrants now: (south, north) games to start; each entrant is then playing."""
        queue = self.waiting()
        active = sum(e.active for e in self.entrants.values())
        games: list[tuple[str, str]] = []
        while len(queue) >= 2:
            first = queue.pop(0)
            mate = next((other for other in queue if active == 2 or not self._rematch(first, other)), None)
            if mate is None:
                continue
            queue.remove(mate)
            games.append(self._start(first, mate))
        return games

    def _rematch(self, a: str, b: str) -> bool:
        """Whether `a` and `b` met in the last game of either of them."""
        return self.entrants[a].last_opponent == b or self.entrants[b].last_opponent == a

    def _start(self, a: str, b: str) -> tuple[str, str]:
        """Mark a game between `a` and `b` started; the one with fewer south games moves first."""
        ea, eb = self.entrants[a], self.entrants[b]
        south, north = (a, b) if (ea.souths - ea.norths, ea.joined) <= (eb.souths - eb.norths, eb.joined) else (b, a)
        return self._begin(south, north)

    def _begin(self, south: str, north: str) -> tuple[str, str]:
        """Mark the game south-north under way."""
        self.entrants[south].souths += 1
        self.entrants[north].norths += 1
        for entrant, opponent in ((self.entrants[south], north), (self.entrants[north], south)):
            entrant.playing = True
            entrant.last_opponent = opponent
        self._games.add((south, north))
        return south, north

    def replay(self, names: list[str], games: Sequence[Pairing]) -> None:
        """Rebuild the pool after a restart: `names` in joining order, then `games` in the order they began."""
        for name in names:
            self.join(name)
        for game in games:
            if game.north is None:
                continue
            self._begin(game.south, game.north)
            if game.score is not None:
                self.finish(game.south, game.north, game.score)

    def points_for(self, name: str, score: float) -> int:
        """What a game scored `score` (1, 0.5, 0) is worth to `name` now (before it is recorded)."""
        base = WIN if score == 1.0 else DRAW if score == 0.5 else 0
        return base * 2 if self.streak_bonus and self.entrants[name].on_fire else base

    def finish(self, south: str, north: str, score: float) -> None:
        """Record the end of the game south-north (`score` for south); both wait again if still active."""
        if (south, north) not in self._games:
            raise ArenaError(f"no game {south}-{north} is being played")
        self._games.discard((south, north))
        for name, mine in ((south, score), (north, 1.0 - score)):
            entrant = self.entrants[name]
            entrant.points += self.points_for(name, mine)
            entrant.streak = entrant.streak + 1 if mine == 1.0 else 0
            entrant.results.append(mine)
            entrant.playing = False
            entrant.waiting_since = self._next()

    def ranking(self) -> list[ArenaEntrant]:
        """Every entrant, best first: points, then wins, then who joined first."""
        return sorted(self.entrants.values(), key=lambda e: (-e.points, -e.results.count(1.0), e.joined))

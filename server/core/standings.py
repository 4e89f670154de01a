"""Standings: ratings with intervals, W/D/L, score and head-to-head, as a table or the wire reply."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol.messages import HeadToHead, StandingRow, Standings
from server.core.ratings import Rating, update_pair
from server.storage.games import GameReads


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game between two named players: `score` is 1, 0.5 or 0 for `first`."""

    first: str
    second: str
    score: float


@dataclass(slots=True)
class Standing:
    """One player's line of the table."""

    name: str
    rating: Rating = field(default_factory=Rating)
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points per game (win 1, draw 1/2)."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def compute(results: Iterable[GameResult], players: Iterable[str] = ()) -> tuple[
        list[Standing], dict[tuple[str, str], list[int]]]:
    """Standings (best rating first) and head-to-head [wins, draws, losses] of row vs column."""
    table: dict[str, Standing] = {p: Standing(p) for p in players}
    h2h: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in results:
        a = table.setdefault(r.first, Standing(r.first))
        b = table.setdefault(r.second, Standing(r.second))
        a.rating, b.rating = update_pair(a.rating, b.rating, r.score)
        col = 0 if r.score == 1 else 1 if r.score == 0.5 else 2
        for x, y, c in ((a, b, col), (b, a, 2 - col)):
            h2h[x.name, y.name][c] += 1
            if c == 0:
                x.wins += 1
            elif c == 1:
                x.draws += 1
            else:
                x.losses += 1
    ordered = sorted(table.values(), key=lambda s: (-s.rating.rating, s.name))
    return ordered, dict(h2h)


def render(standings: list[Standing], h2h: dict[tuple[str, str], list[int]]) -> str:
    """The standings and head-to-head tables as text."""
    width = max([len(s.name) for s in standings] + [6])
    lines = [f"{'#':>2}  {'player':<{width}}  {'rating':>12}  {'games':>5}  {'W':>4} {'D':>4} {'L':>4}  {'score':>6}"]
    for i, s in enumerate(standings, 1):
        lines.append(f"{i:>2}  {s.name:<{width}}  {s.rating.text():>12}  {s.games:>5}  "
                     f"{s.wins:>4} {s.draws:>4} {s.losses:>4}  {100 * s.score:>5.1f}%")
    names = [s.name for s in standings]
    lines += ["", "head to head (row's wins-draws-losses against column)"]
    cell = max(9, width)
    lines.append(" " * (width + 2) + "".join(f"{n[:cell]:>{cell + 2}}" for n in names))
    for a in names:
        row = "".join(f"{'-' if a == b else '-'.join(map(str, h2h.get((a, b), [0, 0, 0]))):>{cell + 2}}"
                      for b in names)
        lines.append(f"{a:<{width}}  {row}")
    return "\n".join(lines)


async def standings_table(reads: GameReads, ratings: dict[str, tuple[Rating, int]], limit: int) -> Standings:
    """Stored Glicko-2 ratings with results and head-to-head of every finished rated game."""
    rows = await reads.rated_results()
    names: dict[str, str] = {}
    results = []
    for first, second, score, name0, name1 in rows:
        names[first], names[second] = name0, name1
        results.append(GameResult(first, second, score))
    table, h2h = compute(results)
    for line in table:  # the stored rating is the one of record (same updates, same order)
        stored = ratings.get(line.name)
        if stored is not None:
            line.rating = stored[0]
    table.sort(key=lambda s: (-s.rating.rating, s.name))
    table = table[:limit]
    kept = {s.name for s in table}
    return Standings(
        rows=[StandingRow(name=names[s.name], rating=round(s.rating.rating, 1), rd=round(s.rating.rd, 1),
                          games=s.games, wins=s.wins, draws=s.draws, losses=s.losses) for s in table],
        head_to_head=[HeadToHead(player=names[p], opponent=names[o], wins=w, draws=d, losses=lo)
                      for (p, o), (w, d, lo) in sorted(h2h.items()) if p in kept and o in kept],
    )


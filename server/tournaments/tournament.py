"""One event as a state machine with no I/O: entry, start, the games to play next, results, the end.

The server's driver calls `join`, `leave`, `due`/`start`, `result` and `tick` and gets back the
pairings to play: it stores them, then starts their matches under the pairings' match ids
(`EVENT-rROUND-tTABLE`, so a pairing restarted after a crash finds its match instead of making a
second one). `Tournament.restore` rebuilds the same machine from what was stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from protocol.errors import EventFullError, EventStartedError, NotEligibleError
from protocol.event_settings import Entry, EventKind, EventSettings
from server.tournaments.arena_pairing import ArenaPool
from server.tournaments.records import Pairing
from server.tournaments.round_robin import round_robin_rounds
from server.tournaments.standings import Standing, standings
from server.tournaments.swiss import NoPairingError, swiss_round


class TournamentStatus(StrEnum):
    """Where an event is in its life."""

    OPEN = "open"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class EntrantKind(StrEnum):
    """What plays under an entrant's name."""

    PERSON = "person"
    BOT = "bot"
    """A hosted bot, added by the event's creator."""
    ENGINE = "engine"
    """An outside program (KGP gateway or `kalah bridge`)."""


@dataclass(slots=True)
class Entrant:
    """One entrant: name, kind, and whether still taking part (False: left; arena: paused)."""

    name: str
    kind: EntrantKind
    active: bool = True


class Tournament:
    """An event's entrants, pairings and status; every change is a method call that returns what to play."""

    def __init__(self, event_id: str, settings: EventSettings, creator: str, created_at: float) -> None:
        self.event_id = event_id
        self.settings = settings
        self.creator = creator
        self.created_at = created_at
        self.status = TournamentStatus.OPEN
        self.started_at: float | None = None
        self.entrants: dict[str, Entrant] = {}
        self.pairings: list[Pairing] = []
        self.round = 0
        self.pool = ArenaPool(settings.streak) if settings.kind is EventKind.ARENA else None
        self.pairing_stopped = False
        """An arena past its end: no new game (it finishes when the last one ends)."""
        self._schedule: list[list[tuple[str, str | None]]] = []
        self.version = 0
        """How many changes were stored (the server counts them; two nodes never store two from one)."""

    # --- entry ---------------------------------------------------------------------------------

    def check_entry(self, name: str, kind: EntrantKind, wins_against_random: int = 0) -> None:
        """Raise the typed refusal if `name` may not enter now; return if they may."""
        s = self.settings
        rejoin = name in self.entrants and self.pool is not None
        if self.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            raise EventStartedError(f"event {self.event_id} has ended: look up its results with event {self.event_id}")
        if self.status is TournamentStatus.RUNNING and s.kind is not EventKind.ARENA:
            raise EventStartedError(f"event {self.event_id} has started: a {s.kind.value} takes no new entrants")
        if name in self.entrants and not rejoin:
            raise NotEligibleError(f"{name} is already entered in event {self.event_id}")
        if not rejoin and len(self.entrants) >= s.max_entrants:
            raise EventFullError(f"event {self.event_id} is full ({s.max_entrants} entrants): try another event")
        if s.entry is Entry.PEOPLE and kind is not EntrantKind.PERSON:
            raise NotEligibleError(f"event {self.event_id} is for people only")
        if s.entry is Entry.ENGINES and kind is EntrantKind.PERSON:
            raise NotEligibleError(f"event {self.event_id} is for engines and bots only")
        if s.entry is Entry.LISTED and name not in s.names:
            raise NotEligibleError(f"event {self.event_id} is for a list of names, and {name} is not on it")
        if kind is EntrantKind.ENGINE and wins_against_random < s.sanity_games:
            wins = "1 win" if s.sanity_games == 1 else f"{s.sanity_games} wins"
            raise NotEligibleError(f"event {self.event_id} asks an engine for {wins} against random"
                                   f" first ({name} has {wins_against_random})")

    def join(self, name: str, kind: EntrantKind, wins_against_random: int = 0) -> list[Pairing]:
        """Enter `name` (or bring an arena entrant back from a pause); returns arena games to start now."""
        self.check_entry(name, kind, wins_against_random)
        entrant = self.entrants.setdefault(name, Entrant(name, kind))
        entrant.active = True
        if self.pool is not None and self.status is TournamentStatus.RUNNING:
            self.pool.join(name)
            return self._arena_wave()
        return []

    def leave(self, name: str) -> None:
        """Withdraw before the start (removed), or stop being paired (arena: a pause; games under way finish)."""
        if name not in self.entrants:
            return
        if self.status is TournamentStatus.OPEN:
            del self.entrants[name]
            return
        self.entrants[name].active = False
        if self.pool is not None:
            self.pool.leave(name)

    def cancel(self) -> list[Pairing]:
        """Cancel an open or running event (its creator, the operator, or its expiry): no more pairings; games
        under way are played out as ordinary matches."""
        if self.status in (TournamentStatus.OPEN, TournamentStatus.RUNNING):
            self.status = TournamentStatus.CANCELLED
        return []

    def joined(self) -> bool:
        """Whether anyone but the creator (and the hosted bots it entered) has entered."""
        return any(e.kind is not EntrantKind.BOT and name != self.creator for name, e in self.entrants.items())

    # --- start and play --------------------------------------------------------------------------

    def due(self, now: float) -> bool:
        """Whether the event should start now: its start time has come, or enough have joined."""
        if self.status is not TournamentStatus.OPEN:
            return False
        if self.settings.start_at is not None:
            return now >= self.settings.start_at
        return len(self.entrants) >= self.settings.min_entrants

    def start(self, now: float, ratings: Mapping[str, float] | None = None) -> list[Pairing]:
        """Start (or cancel, with too few entrants): returns the first pairings to play. The entrants are
        seeded by `ratings` (highest first; ties, and everyone without one, in joining order)."""
        if self.status is not TournamentStatus.OPEN:
            return []
        if len(self.entrants) < max(2, self.settings.min_entrants):
            self.status = TournamentStatus.CANCELLED
            return []
        self.status = TournamentStatus.RUNNING
        self.started_at = now
        if ratings:
            order = {name: i for i, name in enumerate(self.entrants)}
            seeded = sorted(self.entrants, key=lambda name: (-ratings.get(name, float("-inf")), order[name]))
            self.entrants = {name: self.entrants[name] for name in seeded}
        names = list(self.entrants)
        if self.settings.kind is EventKind.ROUND_ROBIN:
            self._schedule = round_robin_rounds(names, self.settings.cycles)
        if self.pool is not None:
            for name in names:
                self.pool.join(name)
            return self._arena_wave()
        return self._next_round()

    @property
    def ends_at(self) -> float | None:
        """When an arena stops pairing (None for other kinds, or before the start)."""
        if self.started_at is None or self.settings.duration_s is None:
            return None
        return self.started_at + self.settings.duration_s

    @property
    def total_rounds(self) -> int | None:
        """How many rounds a Swiss or round-robin plays (None for an arena)."""
        if self.settings.kind is EventKind.SWISS:
            return self.settings.rounds
        if self.settings.kind is EventKind.ROUND_ROBIN:
            return len(self._schedule) if self._schedule else None
        return None

    def live(self) -> list[Pairing]:
        """The games being played now."""
        return [p for p in self.pairings if not p.finished]

    def result(self, match_id: str, score: float, now: float) -> list[Pairing]:
        """Record a game's end (`score` for south); returns the pairings to play next."""
        index = next((i for i, p in enumerate(self.pairings) if p.match_id == match_id), None)
        if index is None or self.pairings[index].finished:
            return []
        p = self.pairings[index] = self.pairings[index].ended(score)
        if self.pool is not None:
            assert p.north is not None
            self.pool.finish(p.south, p.north, score)
            return self.tick(now)
        if self.live():
            return []
        return self._next_round()

    def tick(self, now: float) -> list[Pairing]:
        """An arena at or after its end pairs no more and finishes once its last game ends; else pairs waiters."""
        if self.pool is None or self.status is not TournamentStatus.RUNNING:
            return []
        ends = self.ends_at
        if ends is not None and now >= ends:
            self.pairing_stopped = True
            if not self.live():
                self.status = TournamentStatus.FINISHED
            return []
        return self._arena_wave()

    def _arena_wave(self) -> list[Pairing]:
        """Pair the arena's waiting entrants as one new round of pairings."""
        assert self.pool is not None
        if self.pairing_stopped:
            return []
        games = self.pool.pair()
        return self._add_round(games) if games else []

    def _next_round(self) -> list[Pairing]:
        """Pair the next Swiss or round-robin round, or finish the event when none is left."""
        total = self.total_rounds or 0
        active = [name for name, e in self.entrants.items() if e.active]
        if self.round >= total or len(active) < 2:
            self.status = TournamentStatus.FINISHED
            return []
        if self.settings.kind is EventKind.SWISS:
            try:
                games = swiss_round(active, self.pairings, self.round + 1, total)
            except NoPairingError:
                self.status = TournamentStatus.FINISHED
                return []
        else:
            games = [(s, n) for s, n in self._schedule[self.round]
                     if self.entrants[s].active and (n is None or self.entrants[n].active)]
        return self._add_round(games)

    def _add_round(self, games: Iterable[tuple[str, str | None]]) -> list[Pairing]:
        """Number a new round's games and keep them; a bye ends at once."""
        self.round += 1
        fresh = [Pairing(self.round, table, south, north, None if north is None else self.match_id(self.round, table))
                 for table, (south, north) in enumerate(games, start=1)]
        self.pairings += fresh
        if fresh and all(p.bye for p in fresh):
            return fresh + self._next_round()
        return fresh

    def match_id(self, rnd: int, table: int) -> str:
        """The match id of a round's table: the same after a restart, so a match is never made twice."""
        return f"{self.event_id}-r{rnd}-t{table}"

    # --- reading ------------------------------------------------------------------------------

    @property
    def bye_points(self) -> float:
        """What a bye scores: a point in a Swiss, nothing for a round-robin's free round."""
        return 0.0 if self.settings.kind is EventKind.ROUND_ROBIN else 1.0

    def standings(self) -> list[Standing]:
        """The table so far (an arena's points are in `pool`)."""
        return standings(list(self.entrants), self.pairings, self.bye_points)

    @classmethod
    def restore(cls, event_id: str, settings: EventSettings, creator: str, created_at: float, status: TournamentStatus,
                started_at: float | None, entrants: Sequence[Entrant], pairings: Sequence[Pairing]) -> Tournament:
        """The machine as it was, from stored rows: entrants in joining order, pairings in round and table order."""
        event = cls(event_id, settings, creator, created_at)
        event.status = status
        event.started_at = started_at
        event.entrants = {e.name: Entrant(e.name, e.kind, e.active) for e in entrants}
        event.pairings = sorted(pairings, key=lambda p: (p.round, p.table))
        event.round = max((p.round for p in pairings), default=0)
        if started_at is not None and settings.kind is EventKind.ROUND_ROBIN:
            event._schedule = round_robin_rounds(list(event.entrants), settings.cycles)
        if event.pool is not None and started_at is not None:
            event.pool.replay(list(event.entrants), event.pairings)
            for e in entrants:
                if not e.active:
                    event.pool.leave(e.name)
        return event

"""An event as the wire shows it: its line in the event list and its whole state (standings, pairings,
crosstable), built from the state machine alone."""

from __future__ import annotations

from typing import cast

from protocol.event_messages import (
    MAX_PAIRINGS_SHOWN,
    CrossRow,
    EntrantKindName,
    EntrantRow,
    EventState,
    EventSummary,
    PairingRow,
    ResultName,
)
from protocol.event_settings import EventKind
from server.tournaments.records import Pairing
from server.tournaments.standings import crosstable
from server.tournaments.tournament import Tournament


def summary(event: Tournament) -> EventSummary:
    """The event's line in the event list."""
    s = event.settings
    return EventSummary(event_id=event.event_id, name=s.name, kind=s.kind, variant=s.variant,
                        status=event.status.value, creator=event.creator, entrants=len(event.entrants),
                        max_entrants=s.max_entrants, round=event.round, rounds=event.total_rounds,
                        created_at=event.created_at, starts_at=s.start_at, ends_at=event.ends_at)


def _pairing_row(p: Pairing) -> PairingRow:
    """A pairing on the wire."""
    text = p.text()
    result = cast(ResultName, "bye" if p.bye else text.split()[2])
    return PairingRow(round=p.round, table=p.table, south=p.south, north=p.north, match_id=p.match_id,
                      result=result)


def standings_rows(event: Tournament) -> list[EntrantRow]:
    """The standings, best first: an arena's by points, the others by score and tiebreaks."""
    kinds: dict[str, tuple[EntrantKindName, bool]] = {
        name: (e.kind.value, e.active) for name, e in event.entrants.items()}
    pool = event.pool
    if pool is not None:
        rows = [EntrantRow(rank=rank, name=e.name, kind=kinds[e.name][0], active=kinds[e.name][1],
                           score=sum(e.results), points=e.points, on_fire=pool.streak_bonus and e.on_fire,
                           wins=e.results.count(1.0), draws=e.results.count(0.5), losses=e.results.count(0.0))
                for rank, e in enumerate(pool.ranking(), start=1)]
        waiting = [name for name in kinds if name not in pool.entrants]  # entered before the start: 0 points
        return rows + [EntrantRow(rank=len(rows) + i, name=name, kind=kinds[name][0], active=kinds[name][1],
                                  score=0.0, points=0) for i, name in enumerate(waiting, start=1)]
    return [EntrantRow(rank=r.rank, name=r.name, kind=kinds[r.name][0], active=kinds[r.name][1],
                       score=r.score, buchholz=r.buchholz, sonneborn_berger=r.sonneborn_berger, wins=r.wins,
                       draws=r.draws, losses=r.losses, byes=r.byes)
            for r in event.standings()]


def state(event: Tournament, seq: int, pairings_from: int | None = None) -> EventState:
    """The event's whole state as the `event_state` message (`seq`: how many changes it has seen): the games under
    way and the latest others, or (`pairings_from`) a page of the pairings in the order they were made."""
    if pairings_from is None:
        live = [p for p in event.pairings if not p.finished]
        done = [p for p in event.pairings if p.finished][-MAX_PAIRINGS_SHOWN:]
        shown = sorted(done + live, key=lambda p: (p.round, p.table))
    else:
        shown = event.pairings[pairings_from : pairings_from + MAX_PAIRINGS_SHOWN]
    cross: list[CrossRow] = []
    if event.settings.kind is not EventKind.ARENA and event.pairings:
        cross = [CrossRow(rank=row.rank, name=row.name, score=row.score, cells=row.cells)
                 for row in crosstable(list(event.entrants), event.pairings, bye_points=event.bye_points)]
    return EventState(event_id=event.event_id, seq=seq, settings=event.settings, creator=event.creator,
                      status=event.status.value, created_at=event.created_at, started_at=event.started_at,
                      ends_at=event.ends_at, round=event.round, rounds=event.total_rounds,
                      standings=standings_rows(event), pairings=[_pairing_row(p) for p in shown],
                      pairings_total=len(event.pairings), crosstable=cross)

"""Events in the database: the statements that write them (one SQL for both backends) and the reads that load them.

Three tables (schema version 6): `events` (settings as their JSON text, creator, status,
times), `event_entrants` (one row per entrant, `active` false once they left, and from version
8 its `seed`, its place in the starting order, written with the start) and
`event_pairings` (one row per game or bye, keyed by event, round and table; `match_id`
unique). A round is written in one transaction before its matches start: written again (a
crash between the write and the acknowledgement, another node pairing it too) it fails as
`ConflictError` on the first table taken and nothing of it is stored twice. A stored event
that no longer loads is reported, not fatal to start-up. From version 9 each change also stores the
event's `version` (how many changes it had), and in a cluster claims `e:<event>:<version before>` in
`guards`, so two nodes storing changes from one state store one; `event_owners` names the node that
pairs each open or running event.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.errors import KalahError
from protocol.event_settings import EventSettings
from server.storage.ops import Op, OpKind
from server.storage.writer import Storage
from server.tournaments.records import Pairing
from server.tournaments.tournament import Entrant, EntrantKind, Tournament, TournamentStatus

TOURNAMENT_SQL: dict[OpKind, str] = {
    OpKind.EVENT: "INSERT INTO events (id, settings, creator, status, created_at, started_at)"
                  " VALUES (?, ?, ?, ?, ?, ?)",
    OpKind.ENTRANT: "INSERT INTO event_entrants (event_id, name, kind, active, joined_at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (event_id, name) DO UPDATE SET active = excluded.active",
    OpKind.ENTRANT_SEED: "UPDATE event_entrants SET seed = ? WHERE event_id = ? AND name = ?",
    OpKind.ENTRANT_OUT: "DELETE FROM event_entrants WHERE event_id = ? AND name = ?",
    OpKind.EVENT_STATUS: "UPDATE events SET status = ?, started_at = ? WHERE id = ?",
    OpKind.PAIRING: "INSERT INTO event_pairings (event_id, rnd, tbl, south, north, match_id, score)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
    OpKind.PAIRING_RESULT: "UPDATE event_pairings SET score = ? WHERE match_id = ?",
    OpKind.EVENT_VERSION: "UPDATE events SET version = ? WHERE id = ?",
    OpKind.EVENT_OWN: "INSERT INTO event_owners (event_id, node) VALUES (?, ?)"
                      " ON CONFLICT (event_id) DO UPDATE SET node = excluded.node",
    OpKind.EVENT_DISOWN: "DELETE FROM event_owners WHERE event_id = ?",
}
"""The statement of each event `Op` kind, with `?` placeholders (PostgreSQL numbers them)."""

TOURNAMENT_ROW = "SELECT id, settings, creator, status, created_at, started_at, version FROM events"
UNFINISHED_TOURNAMENTS = f"{TOURNAMENT_ROW} WHERE status IN ('open', 'running') ORDER BY created_at, id"
ONE_TOURNAMENT = f"{TOURNAMENT_ROW} WHERE id = ?"
RECENT_TOURNAMENTS = f"{TOURNAMENT_ROW} ORDER BY created_at DESC, id LIMIT ?"
ENTRANTS = ("SELECT name, kind, active FROM event_entrants WHERE event_id = ?"
            " ORDER BY seed IS NULL, seed, joined_at, name")
"""An event's entrants in its starting order (seeds, given at the start), else in joining order."""
LIVE_VERSIONS = "SELECT id, version FROM events WHERE status IN ('open', 'running')"
PAIRINGS = "SELECT rnd, tbl, south, north, match_id, score FROM event_pairings WHERE event_id = ? ORDER BY rnd, tbl"


def op_tournament(event: Tournament) -> Op:
    """Store a new event."""
    return (OpKind.EVENT, (event.event_id, event.settings.text(), event.creator, event.status.value, event.created_at,
                      event.started_at))


def op_tournament_status(event: Tournament) -> Op:
    """Store an event's status and start time."""
    return (OpKind.EVENT_STATUS, (event.status.value, event.started_at, event.event_id))


def op_entrant(event_id: str, entrant: Entrant) -> Op:
    """Store an entrant (or their coming back, or their leaving a started event: `active`)."""
    return (OpKind.ENTRANT, (event_id, entrant.name, entrant.kind.value, bool(entrant.active), time.time()))


def op_seeds(event: Tournament) -> list[Op]:
    """Store each entrant's place in the starting order (written with the start)."""
    return [(OpKind.ENTRANT_SEED, (seed, event.event_id, name)) for seed, name in enumerate(event.entrants, start=1)]


def op_entrant_out(event_id: str, name: str) -> Op:
    """Take an entrant off an event that has not started."""
    return (OpKind.ENTRANT_OUT, (event_id, name))


def op_pairings(event_id: str, pairings: Iterable[Pairing]) -> list[Op]:
    """Store a round's pairings (in one write: the round is stored whole or not at all)."""
    return [(OpKind.PAIRING, (event_id, p.round, p.table, p.south, p.north, p.match_id, p.score)) for p in pairings]


def op_pairing_result(match_id: str, score: float) -> Op:
    """Store the result of an event's game (`score` for south)."""
    return (OpKind.PAIRING_RESULT, (score, match_id))


def op_tournament_version(event: Tournament) -> Op:
    """Store how many changes an event has had (with each change)."""
    return (OpKind.EVENT_VERSION, (event.version, event.event_id))


def op_tournament_own(event_id: str, node: str) -> Op:
    """Make `node` the one that pairs and drives an event (a cluster's)."""
    return (OpKind.EVENT_OWN, (event_id, node))


def op_tournament_disown(event_id: str) -> Op:
    """Forget the owner of an event that ended."""
    return (OpKind.EVENT_DISOWN, (event_id,))


class UnreadableTournamentError(Exception):
    """A stored event whose rows no longer load (settings of another version, a bad row)."""


@dataclass(frozen=True, slots=True)
class SetAside:
    """A stored event that could not be loaded, and why."""

    event_id: str
    reason: str


def tournament_of(row: Sequence[Any], entrants: Iterable[Sequence[Any]],
                  pairings: Iterable[Sequence[Any]]) -> Tournament:
    """The event machine of an event row, its entrant rows and pairing rows; `UnreadableTournamentError` if not."""
    try:
        settings = EventSettings.parse(row[1])
        event = Tournament.restore(
            row[0], settings, row[2], float(row[4]), TournamentStatus(row[3]),
            None if row[5] is None else float(row[5]),
            [Entrant(r[0], EntrantKind(r[1]), bool(r[2])) for r in entrants],
            [Pairing(int(r[0]), int(r[1]), r[2], r[3], r[4], None if r[5] is None else float(r[5])) for r in pairings],
        )
        event.version = int(row[6]) if len(row) > 6 else 0
        return event
    except (KalahError, ValueError, TypeError) as exc:
        raise UnreadableTournamentError(f"event {row[0]} cannot be loaded: {exc}") from None


async def load_tournament(storage: Storage, event_id: str) -> Tournament | None:
    """One stored event of any status, or None; `UnreadableTournamentError` if its rows do not load."""
    rows = await storage.fetch_rows(ONE_TOURNAMENT, event_id)
    if not rows:
        return None
    return await _with_rows(storage, rows[0])


async def _with_rows(storage: Storage, row: Sequence[Any]) -> Tournament:
    """The event of `row` with its entrants and pairings read."""
    return tournament_of(row, await storage.fetch_rows(ENTRANTS, row[0]), await storage.fetch_rows(PAIRINGS, row[0]))


async def load_unfinished(storage: Storage) -> tuple[list[Tournament], list[SetAside]]:
    """Every open or running event, oldest first, and the ones that could not be loaded (left as they are)."""
    events: list[Tournament] = []
    bad: list[SetAside] = []
    for row in await storage.fetch_rows(UNFINISHED_TOURNAMENTS):
        try:
            events.append(await _with_rows(storage, row))
        except UnreadableTournamentError as exc:
            bad.append(SetAside(str(row[0]), str(exc)))
    return events, bad


async def recent_tournaments(storage: Storage, limit: int = 50) -> list[tuple[str, str, str, float]]:
    """The latest events of any status, newest first: (id, settings text, status, created_at)."""
    return [(r[0], r[1], r[3], float(r[4])) for r in await storage.fetch_rows(RECENT_TOURNAMENTS, limit)]


async def live_versions(storage: Storage) -> dict[str, int]:
    """Every open or running event's id and stored version (what a node's copies are checked against)."""
    return {str(r[0]): int(r[1]) for r in await storage.fetch_rows(LIVE_VERSIONS)}

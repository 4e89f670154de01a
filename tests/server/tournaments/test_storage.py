"""Events in the database (SQLite and PostgreSQL): a round written before its games, read back once after a
reopen, never stored twice, results and leaving kept, and an unreadable event reported, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.errors import ConflictError
from protocol.event_settings import EventSettings
from server.storage import OpKind, Storage, open_storage
from server.storage.tournaments import (
    load_tournament,
    load_unfinished,
    op_entrant,
    op_entrant_out,
    op_pairing_result,
    op_pairings,
    op_seeds,
    op_tournament,
    op_tournament_status,
    recent_tournaments,
)
from server.tournaments.tournament import EntrantKind, Tournament, TournamentStatus


async def _swiss_started(storage: Storage) -> tuple[Tournament, list[str]]:
    """A five-entrant Swiss stored as the server stores it: created, entrants, started, round 1 written."""
    ev = Tournament("sw1", EventSettings.checked(name="Five", kind="swiss", rounds=3, min_entrants=5), "alice", 10.0)
    await storage.write([op_tournament(ev)])
    for name in ("a", "b", "c", "d", "e"):
        ev.join(name, EntrantKind.PERSON)
        await storage.write([op_entrant(ev.event_id, ev.entrants[name])])
    first = ev.start(20.0)
    await storage.write([op_tournament_status(ev), *op_pairings(ev.event_id, first)])
    return ev, [p.text() for p in first]


async def test_a_round_written_before_its_games_is_there_once_after_a_reopen(any_db: str | Path) -> None:
    """Round 1 written, the database closed and opened again: the event loads running with that round once,
    the same pairings and match ids; writing the round again fails as a conflict and adds nothing."""
    storage = await open_storage(any_db)
    try:
        ev, first = await _swiss_started(storage)
        assert first == ["1.1 a-c * sw1-r1-t1", "1.2 d-b * sw1-r1-t2", "1.3 e bye"]
    finally:
        await storage.close()
    storage = await open_storage(any_db)
    try:
        (loaded,), bad = await load_unfinished(storage)
        assert bad == [] and loaded.status is TournamentStatus.RUNNING and loaded.started_at == 20.0
        assert [p.text() for p in loaded.pairings] == first
        assert list(loaded.entrants) == ["a", "b", "c", "d", "e"]
        with pytest.raises(ConflictError):
            await storage.write(op_pairings(ev.event_id, ev.pairings))
        again = await load_tournament(storage, "sw1")
        assert again is not None and [p.text() for p in again.pairings] == first
    finally:
        await storage.close()


async def test_results_and_the_next_round_continue_after_a_reopen(any_db: str | Path) -> None:
    """Results stored with the round they finish and the next round; the reloaded machine is where it was and
    a game's end told again after the reopen changes nothing."""
    storage = await open_storage(any_db)
    try:
        ev, _ = await _swiss_started(storage)
        ev.leave("e")
        await storage.write([op_entrant(ev.event_id, ev.entrants["e"])])
        await storage.write([op_pairing_result("sw1-r1-t1", 1.0)])
        ev.result("sw1-r1-t1", 1.0, 30.0)
        second = ev.result("sw1-r1-t2", 0.5, 31.0)
        await storage.write([op_pairing_result("sw1-r1-t2", 0.5), *op_pairings(ev.event_id, second)])
    finally:
        await storage.close()
    storage = await open_storage(any_db)
    try:
        loaded = await load_tournament(storage, "sw1")
        assert loaded is not None
        assert [p.text() for p in loaded.pairings] == [p.text() for p in ev.pairings]
        assert not loaded.entrants["e"].active and all("e" not in p.players() for p in second)
        assert loaded.result("sw1-r1-t1", 0.0, 40.0) == []
        assert [(r.name, r.score) for r in loaded.standings()] == [(r.name, r.score) for r in ev.standings()]
    finally:
        await storage.close()


async def test_leaving_before_the_start_and_recent_events(any_db: str | Path) -> None:
    """An entrant who leaves before the start is gone from the stored list; a finished event is not loaded at
    start-up but is listed among the recent events and loads by id."""
    storage = await open_storage(any_db)
    try:
        ev = Tournament("rr1", EventSettings.checked(name="RR", kind="round_robin"), "bob", 5.0)
        await storage.write([op_tournament(ev)])
        for name in ("x", "y"):
            ev.join(name, EntrantKind.BOT)
            await storage.write([op_entrant(ev.event_id, ev.entrants[name])])
        await storage.write([op_entrant_out("rr1", "y")])
        ev.status = TournamentStatus.FINISHED
        await storage.write([op_tournament_status(ev)])
        assert await load_unfinished(storage) == ([], [])
        assert [(r[0], r[2]) for r in await recent_tournaments(storage)] == [("rr1", "finished")]
        loaded = await load_tournament(storage, "rr1")
        assert loaded is not None and list(loaded.entrants) == ["x"]
        assert await load_tournament(storage, "nope") is None
    finally:
        await storage.close()


async def test_an_unreadable_event_is_reported_and_the_others_load(tmp_path: Path) -> None:
    """An event row whose settings no longer parse is listed as set aside with the reason; the rest loads."""
    db = tmp_path / "arena.sqlite3"
    storage = await open_storage(db)
    try:
        await _swiss_started(storage)
        await storage.write([(OpKind.EVENT, ("bad1", '{"kind": "knockout"}', "z", "open", 1.0, None))])
        events, bad = await load_unfinished(storage)
        assert [e.event_id for e in events] == ["sw1"]
        assert [b.event_id for b in bad] == ["bad1"] and "cannot be loaded" in bad[0].reason
    finally:
        await storage.close()


async def test_the_starting_order_is_stored_with_the_start(any_db: str | Path) -> None:
    """Entrants seeded by rating at the start are read back in that order, not in joining order."""
    storage = await open_storage(any_db)
    try:
        settings = EventSettings.checked(name="Seeded", kind="swiss", rounds=1, min_entrants=3)
        ev = Tournament("seeded", settings, "z", 1.0)
        await storage.write([op_tournament(ev)])
        for name in ("x", "y", "w"):
            ev.join(name, EntrantKind.PERSON)
            await storage.write([op_entrant(ev.event_id, ev.entrants[name])])
        first = ev.start(2.0, {"w": 1800.0, "y": 1600.0})
        await storage.write([op_tournament_status(ev), *op_seeds(ev), *op_pairings(ev.event_id, first)])
        loaded = await load_tournament(storage, "seeded")
        assert loaded is not None and list(loaded.entrants) == ["w", "y", "x"] == list(ev.entrants)
    finally:
        await storage.close()

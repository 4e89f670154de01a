"""The arena's one change path: every kind of change is stored, committed, indexed and refused the same way."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest

from protocol import Sow, Variant
from protocol.errors import GameOverError
from server.assembly import RunningServer, start_server
from server.core.arena import Arena
from server.core.changes import CancelChange, ops_of
from server.core.errors import ShuttingDownError
from server.core.match import Seat
from server.core.ratings import Rating, update_pair
from server.core.rooms import Room
from server.storage.sqlite import SQLiteStorage
from tests.helpers.paths import ROOT_DIR

ROOT = ROOT_DIR
ALICE, BOB = Seat("p-alice", "alice"), Seat("p-bob", "bob")


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server on a fresh database, its players known to the arena."""
    server = await start_server(tmp_path / "arena.sqlite3")
    try:
        yield server
    finally:
        await server.close()


def rows(arena: Arena, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of a query on the arena's database file, read by a separate connection."""
    assert isinstance(arena.storage, SQLiteStorage)
    with closing(sqlite3.connect(arena.storage.path)) as db:
        return list(db.execute(sql, params).fetchall())


async def open_match(arena: Arena, rated: bool = False) -> Room:
    """An open match created by alice as South."""
    return await arena.create(Variant(), rated, 0, [(0, ALICE)])


async def test_create_is_stored_before_the_room_is_visible(running: RunningServer) -> None:
    """A created match is in the database (status open, creator seated) and then in the arena's rooms and index."""
    arena = running.arena
    room = await open_match(arena)
    mid = room.match.match_id
    assert rows(arena, "SELECT status, seat0, seat1 FROM matches WHERE id = ?", mid) == [("open", "p-alice", None)]
    assert arena.rooms[mid] is room and arena.rooms_of("p-alice") == [room]
    assert room.match.status == "open" and room.match.seq == 1


async def test_join_action_and_end_each_go_through_apply(running: RunningServer) -> None:
    """A join makes the match live, an action is stored at its ply, a resignation finishes it with ratings."""
    arena = running.arena
    room = await open_match(arena, rated=True)
    mid = room.match.match_id
    async with room.lock:
        await arena.apply(room, room.match.prepare_join(BOB))
    assert rows(arena, "SELECT status, seat1 FROM matches WHERE id = ?", mid) == [("live", "p-bob")]
    assert arena.rooms_of("p-bob") == [room]
    assert room.match.status == "live"
    await arena.act(room, 0, Sow(3), 0, None)
    assert rows(arena, "SELECT ply, seat, action FROM actions WHERE match_id = ?", mid) == [(0, 0, "3")]
    assert arena.actions == 1 and room.match.ply == 1
    async with room.lock:
        await arena.apply(room, room.match.prepare_resign(1))
    ended = rows(arena, "SELECT status, winner_seat, reason FROM matches WHERE id = ?", mid)
    assert ended == [("finished", 0, "resign")]
    assert sorted(str(r[0]) for r in rows(arena, "SELECT player_id FROM ratings")) == ["p-alice", "p-bob"]
    assert arena.ratings["p-alice"][0].rating > 1500 > arena.ratings["p-bob"][0].rating
    assert room.match.end is not None


async def test_two_rated_ends_at_once_of_one_player_both_count(running: RunningServer) -> None:
    """Alice wins two rated games whose ends are stored at the same moment: each end reads the rating the other
    wrote, so she has two games and the rating two wins give (one end's update is not lost to the other)."""
    arena = running.arena
    carol = Seat("p-carol", "carol")
    rooms = [await arena.create(Variant(), True, 0, [(0, ALICE), (1, other)]) for other in (BOB, carol)]

    async def resign(room: Room) -> None:
        """North resigns `room`."""
        async with room.lock:
            await arena.apply(room, room.match.prepare_resign(1))

    for room in rooms:
        await arena.act(room, 0, Sow(3), 0, None)
    await asyncio.gather(*(resign(room) for room in rooms))
    once = update_pair(Rating(), Rating(), 1.0)[0]
    twice = update_pair(once, Rating(), 1.0)[0]
    rating, games = arena.ratings["p-alice"]
    assert games == 2 and rating.rating == pytest.approx(twice.rating)
    assert rows(arena, "SELECT games FROM ratings WHERE player_id = 'p-alice'") == [(2,)]


async def test_a_forfeit_is_an_end_stored_with_its_reason_in_one_write(running: RunningServer) -> None:
    """A forfeit is prepared by the match like any end; its statements hold the end and the reason together,
    so both are stored by the one write `apply` makes (never the reason without the end)."""
    arena = running.arena
    room = await arena.create(Variant(), False, 0, [(0, ALICE), (1, BOB)])
    mid = room.match.match_id
    change = room.match.prepare_forfeit(1, "illegal move 9")
    assert [kind for kind, _ in ops_of(room.match, change)] == ["finish", "forfeit"]
    async with room.lock:
        await arena.apply(room, change)
    assert rows(arena, "SELECT status, winner_seat, reason FROM matches WHERE id = ?", mid) == [
        ("finished", 0, "forfeit")]
    assert rows(arena, "SELECT seat, player_id, detail FROM engine_forfeits WHERE match_id = ?", mid) == [
        (1, "p-bob", "illegal move 9")]
    with pytest.raises(GameOverError):
        room.match.prepare_forfeit(0, "too late")


async def test_cancel_drops_the_room_and_its_index(running: RunningServer) -> None:
    """A cancelled open match is marked in the database and forgotten by the arena."""
    arena = running.arena
    room = await open_match(arena)
    mid = room.match.match_id
    async with room.lock:
        await arena.apply(room, CancelChange())
    assert rows(arena, "SELECT status FROM matches WHERE id = ?", mid) == [("cancelled",)]
    assert mid not in arena.rooms and arena.rooms_of("p-alice") == []


async def test_every_kind_is_refused_while_closing_and_nothing_is_written(running: RunningServer) -> None:
    """Once the arena closes, creates, joins, actions, ends and cancels all raise `shutting_down` and store nothing."""
    arena = running.arena
    live = await arena.create(Variant(), False, 0, [(0, ALICE), (1, BOB)])
    still_open = await open_match(arena)
    before = rows(arena, "SELECT count(*) FROM matches")[0][0], rows(arena, "SELECT count(*) FROM actions")[0][0]
    arena.closing = True
    with pytest.raises(ShuttingDownError):
        await open_match(arena)
    with pytest.raises(ShuttingDownError):
        await arena.apply(still_open, still_open.match.prepare_join(BOB))
    with pytest.raises(ShuttingDownError):
        await arena.act(live, 0, Sow(1), 0, None)
    with pytest.raises(ShuttingDownError):
        await arena.apply(live, live.match.prepare_resign(0))
    with pytest.raises(ShuttingDownError):
        await arena.apply(still_open, CancelChange())
    after = rows(arena, "SELECT count(*) FROM matches")[0][0], rows(arena, "SELECT count(*) FROM actions")[0][0]
    assert after == before and arena.busy == 0
    assert live.match.ply == 0 and still_open.match.status == "open"
    arena.closing = False  # let the fixture's shutdown run its own drain


def test_only_the_arena_writes_to_storage() -> None:
    """No server module but the arena calls the storage writer (one change path)."""
    writers = [path.relative_to(ROOT).as_posix() for path in (ROOT / "server").rglob("*.py")
               if re.search(r"\.storage\.write\(", path.read_text())]
    assert writers == ["server/core/arena.py"]


def test_only_the_identity_service_makes_players() -> None:
    """No server module but the identity service builds a player row (one writer of players)."""
    makers = [path.relative_to(ROOT).as_posix() for path in (ROOT / "server").rglob("*.py")
              if re.search(r"\bop_player\(", path.read_text()) and path.parent.name != "storage"]
    assert makers == ["server/core/identities.py"]

"""The SQLite backend's batches on a bare connection: one transaction, multi-row inserts in chunks, retries alone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from protocol import EndReason
from server.storage import open_storage, sqlite
from server.storage.games import games_query
from server.storage.schema import SCHEMA
from server.storage.sqlite import _run_batch
from server.storage.writer import op_create, op_finish, op_join, op_player, op_rating
from tests.helpers.wire import eventually
from tests.server.storage.test_writer import act


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    """An in-memory database with the arena's schema, in autocommit mode as the writer uses it."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA)
    yield conn
    conn.close()


def actions(db: sqlite3.Connection) -> list[tuple[str, int, str]]:
    """Every stored action as (match, ply, token), in key order."""
    return list(db.execute("SELECT match_id, ply, action FROM actions ORDER BY match_id, ply"))


def test_a_clean_batch_commits_every_write(db: sqlite3.Connection) -> None:
    """Writes of several kinds commit together; each is reported as done."""
    items = [[op_player("p1", "ann", None), op_create("m1", "kalah(6,4)", True, 0), op_join("m1", 0, "p1", False)],
             [act("m1", 0)], [act("m1", 1, "9")]]
    assert _run_batch(db, items) == [None, None, None]
    assert actions(db) == [("m1", 0, "1"), ("m1", 1, "9")]
    assert list(db.execute("SELECT id, rated, seat0, status FROM matches")) == [("m1", 1, "p1", "open")]
    assert not db.in_transaction


def test_a_failing_write_is_retried_alone_with_its_own_integrity_error(db: sqlite3.Connection) -> None:
    """One write storing a (match, ply) twice fails with its own IntegrityError; the writes around it commit."""
    items = [[act("m1", 0)], [act("m1", 0, "2")], [act("m1", 1, "9")], [act("m2", 0, "3")]]
    results = _run_batch(db, items)
    assert results[0] is None and results[2] is None and results[3] is None
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert actions(db) == [("m1", 0, "1"), ("m1", 1, "9"), ("m2", 0, "3")]
    assert not db.in_transaction


def test_later_updates_of_one_row_win_within_a_batch(db: sqlite3.Connection) -> None:
    """Two rating updates of the same player in one batch leave the later one stored."""
    _run_batch(db, [[op_player("p1", "ann", None)]])
    results = _run_batch(db, [[op_rating("p1", 1600.0, 300.0, 0.06, 1)], [op_rating("p1", 1650.0, 280.0, 0.06, 2)]])
    assert results == [None, None]
    assert list(db.execute("SELECT rating, games FROM ratings")) == [(1650.0, 2)]


def test_rows_split_over_several_inserts_share_one_transaction(db: sqlite3.Connection,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A group too big for one INSERT runs in chunks inside one transaction: a late conflict undoes the early
    chunks, and the retry one by one stores every write but the conflicting one."""
    monkeypatch.setattr(sqlite, "MAX_ROWS_PER_INSERT", 2)
    items = [[act("m1", ply)] for ply in range(4)] + [[act("m1", 0, "2")]]
    results = _run_batch(db, items)
    assert results[:4] == [None] * 4 and isinstance(results[4], sqlite3.IntegrityError)
    assert actions(db) == [("m1", ply, "1") for ply in range(4)]
    assert _run_batch(db, [[act("m2", ply)] for ply in range(5)]) == [None] * 5
    assert len(actions(db)) == 9


async def test_the_file_is_durable_wal_and_readable_by_another_connection(tmp_path: Path) -> None:
    """The server's file is in WAL mode with full sync, and a committed write is there for a plain sqlite3 reader."""
    storage = await open_storage(f"sqlite:{tmp_path}/w.sqlite3")
    assert isinstance(storage, sqlite.SQLiteStorage)
    try:
        await storage.write([act("m1", 0)])
        modes = [await storage._conn.execute_fetchall(p) for p in ("PRAGMA journal_mode", "PRAGMA synchronous")]
        assert [next(iter(rows))[0] for rows in modes] == ["wal", 2]
        with closing(sqlite3.connect(tmp_path / "w.sqlite3")) as conn:
            assert actions(conn) == [("m1", 0, "1")]
    finally:
        await storage.close()


async def test_a_commits_writers_resume_in_the_second_turn_after_it_ends_and_the_next_commit_starts_in_the_first(
        tmp_path: Path) -> None:
    """The database thread hands a finished commit to the event loop, which settles its writers in that turn and
    starts the commit of the writes queued meanwhile: the writer resumes in the loop's second turn after the commit
    ended (through an awaited future it took three) and the next commit leaves the queue in the first (it took two)."""
    storage = await open_storage(f"sqlite:{tmp_path}/t.sqlite3")
    assert isinstance(storage, sqlite.SQLiteStorage)
    worker = storage._conn._tx  # the connection thread's queue: it runs what is put there, in order
    holding, gate, posted = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        """Hold the thread until the commit is queued behind."""
        holding.set()
        gate.wait()

    try:
        loop = asyncio.get_running_loop()  # aiosqlite's thread sets the future each item comes with
        worker.put_nowait((loop.create_future(), hold))
        assert holding.wait(10)
        write = asyncio.create_task(storage.write([act("m1", 0)]))
        await eventually(lambda: worker.qsize() == 1, what="the commit queued")
        later = asyncio.create_task(storage.write([act("m1", 1)]))
        await eventually(lambda: len(storage._pending) == 1, what="a write queued behind the commit in flight")
        worker.put_nowait((loop.create_future(), posted.set))  # runs once the commit has handed its outcome over
        gate.set()
        assert posted.wait(10)  # the loop's thread waits here: the outcome is queued before any turn below
        turns, queued_at_first_turn = 0, -1

        def tick() -> None:
            """Count a turn of the loop (and what waits for a commit in the first), and come again in the next."""
            nonlocal turns, queued_at_first_turn
            turns += 1
            if turns == 1:
                queued_at_first_turn = len(storage._pending)
            if not write.done():
                asyncio.get_running_loop().call_soon(tick)

        asyncio.get_running_loop().call_soon(tick)
        await write
        assert turns <= 2 and queued_at_first_turn == 0
        await later
    finally:
        gate.set()
        await storage.close()


def store_games(db: sqlite3.Connection, first: int, count: int, plies: int = 30) -> None:
    """Store `count` finished games of `plies` actions each, numbered from `first`, created in that order."""
    items = [[op_player("p1", "ann", None), op_player("p2", "bob", None)]]
    for i in range(first, first + count):
        mid = f"m{i:05d}"
        items.append([op_create(mid, "kalah(6,4)", True, 0), op_join(mid, 0, "p1", False), op_join(mid, 1, "p2", True),
                      *(act(mid, ply) for ply in range(plies)), op_finish(mid, 0, None, EndReason.EMPTY)])
    assert _run_batch(db, items) == [None] * len(items)


def vm_steps(db: sqlite3.Connection, sql: str, params: list[object]) -> int:
    """How many SQLite virtual-machine instructions a query takes (in hundreds): the work it does, untimed."""
    steps = [0]

    def count() -> int:
        """One more hundred instructions; go on."""
        steps[0] += 1
        return 0

    db.set_progress_handler(count, 100)
    try:
        db.execute(sql, params).fetchall()
    finally:
        db.set_progress_handler(None, 0)
    return steps[0]


def test_a_page_of_stored_games_reads_the_actions_of_its_own_games_only(db: sqlite3.Connection) -> None:
    """A page of 10 stored games, newest first (of every status, or of one player), reads the actions of those 10
    only: 300 more, older, stored games of 30 actions each add next to nothing to its work, since the matches
    are read in order of creation and the page stops at its last row (it used to make every game's record and
    sort them all)."""
    every = games_query("sqlite", 10, 0, None, None, None)
    ann = games_query("sqlite", 10, 0, None, "ann", None)
    store_games(db, 0, 300)
    before = [vm_steps(db, *every), vm_steps(db, *ann)]
    store_games(db, 300, 300)
    per_game = [(vm_steps(db, *query) - steps) * 100 / 300 for query, steps in zip((every, ann), before, strict=True)]
    for query in (every, ann):
        page = db.execute(*query).fetchall()
        assert [row[0] for row in page] == [f"m{i:05d}" for i in range(599, 589, -1)]
        assert all(row[11] == 30 and len(row[10].split()) == 30 for row in page)
    assert max(per_game) < 5, per_game  # reading an older game's record would cost hundreds

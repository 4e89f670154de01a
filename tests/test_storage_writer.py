"""The storage writer: how a batch of writes is planned, and how one failing write is kept from sinking the others."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from protocol import Game, Variant
from server.storage import Op, Storage
from server.storage import writer as writer_module
from server.storage.schema import SCHEMA
from server.storage.writer import (
    _run_batch,
    op_action,
    op_cancel,
    op_create,
    op_finish,
    op_join,
    op_player,
    op_rating,
    plan_batch,
)


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    """An in-memory database with the arena's schema, in autocommit mode as the writer uses it."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA)
    yield conn
    conn.close()


def act(match_id: str, ply: int, token: str = "1") -> Op:
    """The statement storing action `token` of `match_id` at `ply`."""
    return op_action(match_id, ply, ply % 2, token, (0, 0))


def finish(match_id: str) -> Op:
    """The statement storing the end of `match_id`, for the reason a one-house game ends."""
    reason = Game.from_record(Variant(houses=1, seeds=3), "1").position.end
    assert reason is not None
    return op_finish(match_id, 6, 0, reason)


def actions(db: sqlite3.Connection) -> list[tuple[str, int, str]]:
    """Every stored action as (match, ply, token), in key order."""
    return list(db.execute("SELECT match_id, ply, action FROM actions ORDER BY match_id, ply"))


def test_plan_groups_each_statement_and_runs_kinds_in_dependency_order() -> None:
    """Writes arriving in any order become one group per statement: players, matches, seats, actions, ends."""
    items = [
        [act("m1", 0)],
        [op_player("p1", "ann", None), op_create("m2", "kalah(6,4)", True, 0), op_join("m2", 0, "p1", False)],
        [finish("m1")],
        [act("m1", 1, "9")],
        [op_player("p2", "bob", None)],
    ]
    plan = plan_batch(items)
    assert [sql for sql, _ in plan] == [items[4][0][0], items[1][1][0], items[1][2][0], items[0][0][0], items[2][0][0]]
    rows = dict(plan)
    assert [r[0] for r in rows[items[4][0][0]]] == ["p1", "p2"]  # rows keep the order their writes came in
    assert [(r[0], r[1], r[3]) for r in rows[items[0][0][0]]] == [("m1", 0, "1"), ("m1", 1, "9")]
    assert sum(len(group) for _, group in plan) == sum(len(ops) for ops in items)


def test_plan_puts_cancellations_last_and_unknown_statements_after_them_in_arrival_order() -> None:
    """A cancellation runs after the other kinds; statements of no known kind come last, first seen first."""
    odd_b, odd_a = ("DELETE FROM ratings WHERE player_id = ?", ("b",)), ("DELETE FROM players WHERE id = ?", ("a",))
    plan = plan_batch([[odd_b], [op_cancel("m3")], [odd_a], [op_rating("p1", 1500.0, 350.0, 0.06, 1)]])
    assert [sql for sql, _ in plan] == [op_rating("p1", 0, 0, 0, 0)[0], op_cancel("m3")[0], odd_b[0], odd_a[0]]


def test_a_clean_batch_commits_every_write(db: sqlite3.Connection) -> None:
    """Writes of several kinds commit together; each is reported as done."""
    items = [[op_player("p1", "ann", None), op_create("m1", "kalah(6,4)", True, 0), op_join("m1", 0, "p1", False)],
             [act("m1", 0)], [act("m1", 1, "9")]]
    assert _run_batch(db, items) == [None, None, None]
    assert actions(db) == [("m1", 0, "1"), ("m1", 1, "9")]
    assert list(db.execute("SELECT id, seat0, status FROM matches")) == [("m1", "p1", "open")]
    assert not db.in_transaction


def test_a_failing_write_is_retried_alone_and_the_others_commit(db: sqlite3.Connection) -> None:
    """One write storing a (match, ply) twice fails with its own error; the writes around it still commit."""
    items = [[act("m1", 0)], [act("m1", 0, "2")], [act("m1", 1, "9")], [act("m2", 0, "3")]]
    results = _run_batch(db, items)
    assert results[0] is None and results[2] is None and results[3] is None
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert actions(db) == [("m1", 0, "1"), ("m1", 1, "9"), ("m2", 0, "3")]
    assert not db.in_transaction


def test_a_failing_write_stores_none_of_its_statements(db: sqlite3.Connection) -> None:
    """A write is all or nothing: its statement that would have succeeded is rolled back with the one that failed."""
    assert _run_batch(db, [[act("m1", 0)]]) == [None]
    results = _run_batch(db, [[act("m2", 0), act("m1", 0, "2")], [act("m3", 0)]])
    assert isinstance(results[0], sqlite3.IntegrityError) and results[1] is None
    assert actions(db) == [("m1", 0, "1"), ("m3", 0, "1")]


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
    monkeypatch.setattr(writer_module, "MAX_ROWS_PER_INSERT", 2)
    items = [[act("m1", ply)] for ply in range(4)] + [[act("m1", 0, "2")]]
    results = _run_batch(db, items)
    assert results[:4] == [None] * 4 and isinstance(results[4], sqlite3.IntegrityError)
    assert actions(db) == [("m1", ply, "1") for ply in range(4)]
    assert _run_batch(db, [[act("m2", ply)] for ply in range(5)]) == [None] * 5
    assert len(actions(db)) == 9


async def test_storage_groups_concurrent_writes_and_fails_only_the_bad_one(tmp_path: Path) -> None:
    """Writes queued together share one commit; the one that conflicts raises to its own writer only."""
    storage = await Storage.open(tmp_path / "w.sqlite3")
    try:
        await storage.write([act("m1", 0)])
        commits = storage.commits
        outcomes = await asyncio.gather(storage.write([act("m1", 1, "9")]), storage.write([act("m1", 0, "2")]),
                                        storage.write([act("m2", 0, "3")]), return_exceptions=True)
        assert outcomes[0] is None and outcomes[2] is None
        assert isinstance(outcomes[1], Exception) and "UNIQUE constraint failed" in str(outcomes[1])
        assert storage.commits == commits + 1
    finally:
        await storage.close()
    with closing(sqlite3.connect(tmp_path / "w.sqlite3")) as conn:
        assert actions(conn) == [("m1", 0, "1"), ("m1", 1, "9"), ("m2", 0, "3")]

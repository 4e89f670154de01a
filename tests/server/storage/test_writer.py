"""The storage writer on both backends: batch plans, group commits, conflicts, a failing write kept from the others,
and the reads a restart and the public listings need."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import EndReason, Game, Variant
from server.storage import ConflictError, Op, Storage, open_storage, sqlite
from server.storage.lobby import open_creators, open_summaries
from server.storage.moderation import op_audit, op_ban, op_close_player, op_rename, op_unban, op_unrate
from server.storage.ops import PHASES, OpKind, plan_batch
from server.storage.tournaments import op_entrant_out, op_pairing_result, op_tournament_disown, op_tournament_own
from server.storage.writer import (
    op_action,
    op_cancel,
    op_create,
    op_disown,
    op_finish,
    op_forfeit,
    op_guard,
    op_join,
    op_own,
    op_player,
    op_quarantine,
    op_rating,
)


def act(match_id: str, ply: int, token: str = "1") -> Op:
    """The statement storing action `token` of `match_id` at `ply`."""
    return op_action(match_id, ply, ply % 2, token, (0, 0))


def finish(match_id: str) -> Op:
    """The statement storing the end of `match_id`, for the reason a one-house game ends."""
    reason = Game.from_record(Variant(houses=1, seeds=3), "1").position.end
    assert reason is not None
    return op_finish(match_id, 6, 0, reason)


def new_match(match_id: str, south: str = "p1", north: str = "p2", rated: bool = True) -> list[Op]:
    """The statements of a live match between two stored players, South its creator."""
    return [op_create(match_id, "kalah(6,4)", rated, 0), op_join(match_id, 0, south, False),
            op_join(match_id, 1, north, True)]


@pytest.fixture
async def storage(any_db: str | Path) -> AsyncIterator[Storage]:
    """A fresh storage of each backend with two players, ann and bob."""
    opened = await open_storage(any_db)
    try:
        await opened.write([op_player("p1", "ann", None), op_player("p2", "bob", None)])
        yield opened
    finally:
        await opened.close()


async def plies(storage: Storage, match_id: str) -> list[tuple[int, str]]:
    """The stored actions of a match as (ply, token)."""
    stored = await storage.stored_match(match_id)
    return [] if stored is None else [(ply, token) for ply, _, token, _, _ in stored.actions]


def test_plan_groups_each_kind_and_runs_kinds_in_dependency_order() -> None:
    """Writes arriving in any order become one group per kind: players, matches, seats, actions, ends."""
    items = [
        [act("m1", 0)],
        [op_player("p1", "ann", None), op_create("m2", "kalah(6,4)", True, 0), op_join("m2", 0, "p1", False)],
        [finish("m1")],
        [act("m1", 1, "9")],
        [op_player("p2", "bob", None)],
    ]
    plan = plan_batch(items)
    assert [kind for kind, _ in plan] == ["player", "create", "join", "action", "finish"]
    rows = dict(plan)
    assert [r[0] for r in rows["player"]] == ["p1", "p2"]  # rows keep the order their writes came in
    assert [(r[0], r[1], r[3]) for r in rows["action"]] == [("m1", 0, "1"), ("m1", 1, "9")]
    assert sum(len(group) for _, group in plan) == sum(len(ops) for ops in items)


def test_plan_puts_cancellations_late_and_unknown_kinds_after_every_known_one_in_arrival_order() -> None:
    """A cancellation runs after ratings; kinds no backend knows come last, first seen first."""
    plan = plan_batch([[("odd_b", ("b",))], [op_cancel("m3")], [("odd_a", ("a",))],  # type: ignore[list-item]
                       [op_rating("p1", 1500.0, 350.0, 0.06, 1)]])
    assert [kind for kind, _ in plan] == ["rating", "cancel", "odd_b", "odd_a"]


def test_every_kind_has_a_statement_on_every_backend() -> None:
    """SQLite and PostgreSQL each have exactly one statement for every kind of write."""
    postgres = pytest.importorskip("server.storage.postgres")
    assert set(sqlite.SQL) == set(postgres.SQL) == set(PHASES)


def test_every_statement_is_made_with_a_kind_of_op_kind() -> None:
    """Each builder of statements (matches, players, ownership, events, moderation) names its kind by an `OpKind`
    member, and the members are the kinds in the order a batch runs them."""
    ops = [op_player("p1", "ann", None), *new_match("m1"), act("m1", 0), finish("m1"), op_cancel("m2"),
           op_rating("p1", 1500.0, 350.0, 0.06, 1), *op_quarantine("m3", "unreadable"), op_forfeit("m1", 0, "p1", "x"),
           op_guard("k"), op_own("m1", "n1"), op_disown("m1"), op_entrant_out("e1", "ann"),
           op_pairing_result("m1", 1.0), op_tournament_own("e1", "n1"), op_tournament_disown("e1"),
           op_ban("player", "p1", "r", "mod"), op_unban("player", "p1"),
           op_audit("mod", "ban", "p1", "r"), op_rename("p1", "anne"), op_close_player("p1"), op_unrate("m1")]
    assert [kind for kind, _ in ops if type(kind) is not OpKind] == []
    assert tuple(OpKind) == PHASES


async def test_concurrent_writes_share_one_commit_and_only_the_conflicting_one_fails(storage: Storage) -> None:
    """Writes queued together share one commit; the one storing a (match, ply) twice raises ConflictError alone."""
    await storage.write([*new_match("m1"), act("m1", 0)])
    commits = storage.commits
    outcomes = await asyncio.gather(storage.write([act("m1", 1, "9")]), storage.write([act("m1", 0, "2")]),
                                    storage.write([*new_match("m2"), act("m2", 0, "3")]), return_exceptions=True)
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], ConflictError)
    assert storage.commits == commits + 1
    assert await plies(storage, "m1") == [(0, "1"), (1, "9")]
    assert await plies(storage, "m2") == [(0, "3")]


async def test_a_match_id_taken_is_a_conflict(storage: Storage) -> None:
    """Creating a match under a stored id raises ConflictError and changes nothing."""
    await storage.write(new_match("m1"))
    with pytest.raises(ConflictError):
        await storage.write([op_create("m1", "kalah(4,3)", False, 1)])
    stored = await storage.stored_match("m1")
    assert stored is not None and (stored.variant, stored.rated, stored.creator_seat) == ("kalah(6,4)", True, 0)


async def test_a_failing_write_stores_none_of_its_statements(storage: Storage) -> None:
    """A write is all or nothing: its statement that would have succeeded is rolled back with the one that failed,
    and a write batched with it still commits."""
    await storage.write([*new_match("m1"), *new_match("m2"), *new_match("m3"), act("m1", 0)])
    outcomes = await asyncio.gather(storage.write([act("m2", 0), act("m1", 0, "2")]), storage.write([act("m3", 0)]),
                                    return_exceptions=True)
    assert isinstance(outcomes[0], ConflictError) and outcomes[1] is None
    assert (await plies(storage, "m1"), await plies(storage, "m2"), await plies(storage, "m3")) == (
        [(0, "1")], [], [(0, "1")])


async def test_later_rating_updates_of_one_player_win_within_a_batch(storage: Storage) -> None:
    """Two rating updates of the same player in one batch leave the later one stored."""
    outcomes = await asyncio.gather(storage.write([op_rating("p1", 1600.0, 300.0, 0.06, 1)]),
                                    storage.write([op_rating("p1", 1650.0, 280.0, 0.06, 2)]))
    assert list(outcomes) == [None, None]
    assert await storage.ratings() == {"p1": (1650.0, 280.0, 0.06, 2)}


async def test_seats_taken_in_one_batch_leave_each_match_with_the_status_of_its_last_join(storage: Storage) -> None:
    """Two matches created in one batch, one by South and one by North, both end up live with both seats."""
    north_first = [op_create("mn", "kalah(6,4)", True, 1), op_join("mn", 1, "p1", False),
                   op_join("mn", 0, "p2", True)]
    await asyncio.gather(storage.write(new_match("ms")), storage.write(north_first))
    for mid, seats in (("ms", ("p1", "p2")), ("mn", ("p2", "p1"))):
        stored = await storage.stored_match(mid)
        assert stored is not None and (stored.status, stored.seats) == ("live", seats)


async def test_reads_of_a_restart_and_of_the_listings(storage: Storage) -> None:
    """Players, unfinished matches, one match, ratings, quarantine, stored games and rated results read back."""
    await storage.write([op_player("pb", "bot:random", None, "random"), *new_match("m1"), act("m1", 0, "3"),
                         act("m1", 1, "1"), finish("m1"), op_rating("p1", 1600.0, 300.0, 0.06, 1)])
    await storage.write([*new_match("m2", "p2", "pb", rated=False), act("m2", 0, "4")])
    await storage.write([op_create("m3", "kalah(4,3)", False, 1), op_join("m3", 1, "p1", False)])
    await storage.write([op_create("m4", "kalah(4,3)", False, 0), op_join("m4", 0, "p2", False), op_cancel("m4")])
    await storage.write([*new_match("m5"), *op_quarantine("m5", "VariantError: no such variant")])
    assert {p.player_id: (p.name, p.bot) for p in await storage.players(10)} == {
        "p1": ("ann", None), "p2": ("bob", None), "pb": ("bot:random", "random")}
    unfinished = await storage.unfinished()
    assert [(m.match_id, m.seats, m.creator_seat) for m in unfinished] == [("m2", ("p2", "pb"), 0),
                                                                            ("m3", (None, "p1"), 1)]
    assert unfinished[0].actions == [(0, 0, "4", 0, 0)] and unfinished[0].rated is False
    ended = await storage.stored_match("m1")
    assert ended is not None and ended.status == "finished" and ended.end == (6, 0, EndReason.EMPTY)
    assert await storage.stored_match("nosuch") is None
    assert await storage.ratings() == {"p1": (1600.0, 300.0, 0.06, 1)}
    assert await storage.quarantined() == 1
    [note] = await storage.list_quarantined()
    assert (note.match_id, note.reason) == ("m5", "VariantError: no such variant")
    games = await storage.list_games(status=None)
    assert {g.match_id: g.status for g in games} == {
        "m1": "finished", "m2": "live", "m3": "open", "m4": "cancelled", "m5": "quarantined"}
    [m1] = await storage.list_games()
    assert (m1.south, m1.north, m1.record, m1.ply, m1.result, m1.winner, m1.reason) == (
        "ann", "bob", "3 1", 2, 6, "ann", "empty")
    assert [g.match_id for g in await storage.list_games(status=None, player="bot:random")] == ["m2"]
    assert [g.match_id for g in await storage.list_games(status=None, variant="kalah(4,3)", limit=1)] == ["m4"]
    assert [g.match_id for g in await storage.list_games(status=None, variant="kalah(4,3)", offset=1)] == ["m3"]
    assert await storage.fetch_game("m1") == m1 and await storage.fetch_game("nosuch") is None
    assert await storage.rated_results() == [("p1", "p2", 1.0, "ann", "bob")]
    assert [await storage.played(p, plies) for p, plies in (("p1", 2), ("p1", 3), ("pb", 1), ("pb", 2))] == [
        True, False, True, False]  # a finished game of 2 plies, a live one of 1 (open and cancelled ones: none)
    assert await open_creators(storage) == [("m3", ("m3", "m3"), ("p1",))]  # stored without its creator's address
    [(mid, summary)] = (await open_summaries(storage, ["m3", "m2"])).items()
    assert (mid, summary.south, summary.north, summary.status) == ("m3", None, "ann", "open")


async def test_a_write_that_commits_on_one_backend_commits_on_the_other(storage: Storage) -> None:
    """References are declared, not enforced, on both backends: a seat of an unknown player and an action of an
    unknown match commit (as SQLite with foreign_keys=OFF always did), and the match reads back."""
    await storage.write([*new_match("m1", "p-unknown", "p2"), act("m-unknown", 0)])
    stored = await storage.stored_match("m1")
    assert stored is not None and stored.seats == ("p-unknown", "p2")
    [listed] = await storage.list_games(status="live")
    assert (listed.south, listed.north) == (None, "bob")

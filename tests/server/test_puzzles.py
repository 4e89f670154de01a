"""Puzzles over the wire (`puzzle`, `puzzle_answer`, `puzzles`): a puzzle is shown without its answer, a wrong move is
told wrong with every move's proved value and its refutation, a first answer is rated, and an unproved row is never
served."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Serve
from tests.helpers.puzzles import make_puzzles, store_puzzles, store_unproved
from tests.helpers.wire import Client


async def test_a_wrong_move_is_told_wrong_with_the_proved_values_and_the_first_answer_is_rated(
        serve: Serve, tmp_path: Path) -> None:
    """The puzzle asked for is shown without its answer; a wrong move is answered `correct: false` with the answer,
    the value of every move and the wrong move's refutation, and rates the player down and the puzzle up; the right
    move afterwards is `correct: true` but rates nothing (only a first answer counts)."""
    db = tmp_path / "arena.sqlite3"
    puzzles = make_puzzles(2)
    store_puzzles(db, puzzles)
    arena = await serve(db)
    c = await Client.open(arena.url, "solver")
    shown = await c.request("puzzle_shown", type="puzzle", variant="kalah(4,3)")
    puzzle = next(p for p in puzzles if p.id == shown["id"])
    assert shown["position"] == puzzle.position and "answer" not in shown and "moves" not in shown
    assert shown["player_rating"] == 1500.0
    wrong = puzzle.moves[1]
    result = await c.request("puzzle_result", type="puzzle_answer", puzzle_id=puzzle.id, action=wrong.action)
    assert result["correct"] is False and result["answer"] == puzzle.answer and result["rated"] is True
    assert result["played"] == wrong.model_dump() and result["played"]["line"]
    assert {m["action"]: m["value"] for m in result["moves"]} == {m.action: m.value for m in puzzle.moves}
    assert result["played"]["loss"] >= puzzle.threshold
    assert result["player_rating"] < 1500.0 < result["puzzle_rating"]
    right = await c.request("puzzle_result", type="puzzle_answer", puzzle_id=puzzle.id, action=puzzle.answer)
    assert right["correct"] is True and right["rated"] is False
    assert right["player_rating"] == result["player_rating"]
    again = await c.request("puzzle_shown", type="puzzle")
    assert again["id"] != puzzle.id  # the next one is one not tried yet
    await c.send(type="puzzle_answer", puzzle_id=puzzle.id, action="5")
    assert await c.error() == "illegal_move"
    await c.close()


async def test_an_unproved_puzzle_is_never_served(serve: Serve, any_db: str | Path) -> None:
    """On either backend, a row not marked proved is neither shown (by id or as the next one), nor answered, nor
    listed; a guest (no hello) solves the proved one, unrated; a player's first answer is rated."""
    db = any_db
    [proved] = make_puzzles(1)
    store_puzzles(db, [proved])
    store_unproved(db, proved, "zunproved")
    arena = await serve(db)
    guest = await Client.open(arena.url, None)
    for request in ({"type": "puzzle", "puzzle_id": "zunproved"},
                    {"type": "puzzle_answer", "puzzle_id": "zunproved", "action": proved.answer}):
        await guest.send(**request)
        assert await guest.error() == "unknown_puzzle"
    listed = await guest.request("puzzle_list", type="puzzles")
    assert [p["id"] for p in listed["puzzles"]] == [proved.id]
    assert listed["puzzles"][0]["answer"] == proved.answer
    shown = await guest.request("puzzle_shown", type="puzzle")
    assert shown["id"] == proved.id and shown["player_rating"] is None
    solved = await guest.request("puzzle_result", type="puzzle_answer", puzzle_id=proved.id, action=proved.answer)
    assert solved["correct"] is True and solved["rated"] is False
    player = await Client.open(arena.url, "tried")
    rated = await player.request("puzzle_result", type="puzzle_answer", puzzle_id=proved.id, action=proved.answer)
    assert rated["rated"] is True and rated["player_rating"] > 1500.0
    await player.send(type="puzzle")
    assert await player.error() == "unknown_puzzle"  # only the unproved one is left: it is not served
    for client in (guest, player):
        await client.close()


async def test_puzzle_reads_count_against_the_public_read_budget(serve: Serve, tmp_path: Path) -> None:
    """A list of puzzles costs the rows it asks for and a puzzle one row, from the same budget as the other public
    reads: past it each is refused `rate_limited` with a retry hint."""
    db = tmp_path / "arena.sqlite3"
    [puzzle] = make_puzzles(1)
    store_puzzles(db, [puzzle])
    arena = await serve(db, read_rows_rate=0.5, read_rows_burst=200)
    c = await Client.open(arena.url, None)
    await c.request("puzzle_list", type="puzzles", limit=200)
    for request in ({"type": "puzzles", "limit": 200}, {"type": "puzzle"},
                    {"type": "puzzle_answer", "puzzle_id": puzzle.id, "action": puzzle.answer}):
        refusal = await c.request("error", **request)
        assert refusal["code"] == "rate_limited" and refusal["retry_ms"] >= 1 and refusal["request"] == request["type"]
    await c.close()

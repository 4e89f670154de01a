"""Puzzles made and stored for tests: proved ones from self-play on a small board, and rows no server may serve."""

from __future__ import annotations

import time
from pathlib import Path

from bots.pie import first_turn_boards
from bots.puzzles import Candidate, Prover, examine, find, make_engine, self_play
from bots.solver import Engine
from protocol import Position, Variant
from protocol.actions import parse_action
from protocol.position import Side
from protocol.puzzle_messages import PuzzleInfo
from server.storage.puzzle_shelf import PuzzleShelf

SMALL = Variant.parse("kalah(4,3)")


def make_puzzles(count: int = 3, variant: Variant = SMALL, seed: int = 3) -> list[PuzzleInfo]:
    """`count` proved puzzles found in self-play on `variant` (no databases: a small board is searched at once), each
    checked to have one answer."""
    engine = make_engine(variant, egdb_seeds=0)
    found = list(find(Prover(engine, 10.0), self_play(engine, 20, seed), time.monotonic() + 120, count))
    assert len(found) == count
    for puzzle in found:
        check_one_answer(puzzle)  # every puzzle a test makes has one answer, checked against the Python twin
    return found


def swap_puzzle(answer_is_swap: bool = True) -> PuzzleInfo:
    """A Kalah(3,3) pie-rule puzzle at North's swap decision whose answer is the swap (or a sowing)."""
    variant = Variant.parse("kalah(3,3,pie=on)")
    prover = Prover(make_engine(variant, egdb_seeds=0))
    for board in first_turn_boards(Position.initial(variant)):
        puzzle = examine(prover, Candidate(board, "self-play"))
        if puzzle is not None and (puzzle.answer == "swap") == answer_is_swap:
            check_one_answer(puzzle)
            return puzzle
    raise AssertionError("no such swap decision")


def store_puzzles(db: str | Path, puzzles: list[PuzzleInfo]) -> None:
    """Add puzzles to a database as `kalah puzzle build` does."""
    with PuzzleShelf(db) as shelf:
        assert shelf.add(puzzles) == len(puzzles)


def store_unproved(db: str | Path, puzzle: PuzzleInfo, new_id: str) -> None:
    """Store a copy of `puzzle` under `new_id` marked as not proved (as a row from another tool could be)."""
    text = puzzle.model_copy(update={"id": new_id}).model_dump_json()
    with PuzzleShelf(db) as shelf:
        shelf.rows("INSERT INTO puzzles (id, variant, puzzle, exact, rating, rd, volatility, plays, solved, created_at)"
                   " VALUES (?, ?, ?, ?, 1500, 350, 0.06, 0, 0, 0)", new_id, puzzle.variant, text, False)


def check_one_answer(puzzle: PuzzleInfo) -> None:
    """Against a fresh engine of the Python twin: the answer alone keeps the value for whoever chooses (after a swap
    the chooser holds South's side), every other move loses at least the threshold, each stored value is the
    solver's, and every move of the answer's line and of each refutation is a best move."""
    variant = Variant.parse(puzzle.variant)
    engine = Engine(variant, impl="py", tt_log2=16)
    position = Position.from_fen(variant, puzzle.position)
    solved = engine.solve(position, per_move=True)
    assert solved.exact
    values = {str(b): v for b, v in solved.per_move.items()}
    if position.swap_offered:
        values["swap"] = solved.value  # the board stands, North to move: its value goes to the swapper, now South
    sign = 1 if position.to_move == Side.SOUTH else -1
    mine = {a: v if a == "swap" else sign * v for a, v in values.items()}
    best = max(mine.values())
    assert [a for a, o in mine.items() if o == best] == [puzzle.answer]
    assert values[puzzle.answer] == puzzle.value
    assert {m.action: m.value for m in puzzle.moves} == values
    assert all(best - mine[m.action] == m.loss >= puzzle.threshold for m in puzzle.moves[1:])
    for move in puzzle.moves:
        board = position.apply(parse_action(move.action))
        for token in move.line:
            assert int(token) in engine.solve(board).best
            board = board.play(int(token))

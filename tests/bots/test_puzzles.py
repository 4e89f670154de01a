"""Puzzles (`bots.puzzles`): the answer is the one move that keeps the proved value, checked against the solver's
per-move values on small boards; the lines are proved best play; nothing unproved becomes a puzzle."""

from __future__ import annotations

import time

import pytest

from bots import pie
from bots.puzzles import (
    Candidate,
    Prover,
    UnprovableVariantError,
    examine,
    find,
    from_review,
    make_engine,
    puzzle_id,
    self_play,
)
from bots.review import perfect_valuer, review_game
from protocol import Position, Variant
from protocol.actions import Sow
from protocol.position import Side
from tests.helpers.puzzles import check_one_answer

SMALL = ["kalah(3,3)", "kalah(4,3)", "kalah(4,3,capture=empty)", "kalah(3,3,pie=on)"]


@pytest.mark.parametrize("name", SMALL)
def test_a_puzzle_answer_is_the_unique_move_keeping_the_proved_value(name: str) -> None:
    """Self-play on a small board gives puzzles whose answers `Engine.solve(per_move=True)` confirms, one each."""
    engine = make_engine(Variant.parse(name), egdb_seeds=0)
    puzzles = list(find(Prover(engine, 5.0), self_play(engine, 4, seed=3), time.monotonic() + 60, 6))
    assert puzzles, "self-play of four games finds a puzzle"
    assert len({p.id for p in puzzles}) == len(puzzles)
    for puzzle in puzzles:
        check_one_answer(puzzle)


def test_north_s_swap_decision_is_a_puzzle_with_the_swap_or_a_sowing_as_its_answer() -> None:
    """Under the pie rule, North's choice after each first turn of the opener is examined with the swap among the
    moves (worth the board's value to the swapper, now South): the puzzles found have one answer each, the swap in
    some, a sowing in others, all with the `pie` theme."""
    answers = set()
    for name in ("kalah(3,3,pie=on)", "kalah(4,3,pie=on)"):
        variant = Variant.parse(name)
        prover = Prover(make_engine(variant, egdb_seeds=0))
        for board in pie.first_turn_boards(Position.initial(variant)):
            puzzle = examine(prover, Candidate(board, "self-play"))
            if puzzle is not None:
                check_one_answer(puzzle)
                assert "pie" in puzzle.themes and [m.action for m in puzzle.moves].count("swap") == 1
                answers.add(puzzle.answer == "swap")
    assert answers == {True, False}


def test_a_position_where_two_moves_keep_the_value_is_no_puzzle() -> None:
    """Every position of self-play on Kalah(3,3) is a puzzle exactly when the solver's per-move values have one move
    alone keeping the value and the next best a threshold (2 seeds) behind."""
    variant = Variant.parse("kalah(3,3)")
    engine = make_engine(variant, egdb_seeds=0)
    prover = Prover(engine)
    examined = 0
    for candidate in self_play(engine, 3, seed=1):
        values = engine.solve(candidate.position, per_move=True).per_move
        sign = 1 if candidate.position.to_move == Side.SOUTH else -1
        ranked = sorted((sign * v for v in values.values()), reverse=True)
        expected = len(ranked) >= 2 and ranked[0] - ranked[1] >= 2
        assert (examine(prover, candidate) is not None) == expected
        examined += 1
    assert examined > 10


def test_a_position_not_proved_in_time_is_never_a_puzzle() -> None:
    """With no time to prove it, a Kalah(6,6) position is dropped, and past the build's deadline even a tiny board is
    not searched; a variant whose sowing can cycle is refused."""
    variant = Variant.parse("kalah(6,6)")
    engine = make_engine(variant, egdb_seeds=0)
    position = Position.initial(variant).play(1)
    assert Prover(engine, 0.01).per_move(position) is None
    assert examine(Prover(engine, 0.01), Candidate(position, "self-play")) is None
    spent = Prover(make_engine(Variant.parse("kalah(3,3)"), egdb_seeds=0), 60.0, deadline=time.monotonic() - 1)
    small = Position.initial(Variant.parse("kalah(3,3)"))
    assert spent.per_move(small) is None and spent.line(small, 4) is None  # past the deadline nothing is proved
    with pytest.raises(UnprovableVariantError):
        make_engine(Variant.parse("kalah(4,3,clockwise=on)"))


def test_a_review_s_mistakes_are_the_candidates_from_games() -> None:
    """The positions before the moves a review marks mistake or blunder (proved) are the candidates of a game."""
    variant = Variant.parse("kalah(2,3)")
    record = "1 5 1 4 2 4 5"
    review = review_game("g1", variant, record, ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    candidates = list(from_review(variant, record, review))
    marked = [p.ply for p in review.plies if p.mark in ("mistake", "blunder")]
    assert [c.ply for c in candidates] == marked and marked
    assert all(c.source == "game" and c.match_id == "g1" for c in candidates)


def test_the_same_board_is_one_puzzle_whatever_its_ply() -> None:
    """A puzzle's id is the board and side to move: the ply it was reached at does not count."""
    variant = Variant.parse("kalah(3,3)")
    a = Position.from_fen(variant, "0,4,4,1,3,3,3,0 S 1 -")
    b = Position.from_fen(variant, "0,4,4,1,3,3,3,0 S 9 -")
    assert puzzle_id(a) == puzzle_id(b) != puzzle_id(a.apply(Sow(2)))

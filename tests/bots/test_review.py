"""Game review (`bots.review`): each ply's loss checked against the solver's value of every move, on boards small
enough that every value is proved."""

from __future__ import annotations

import random

import pytest

from bots.review import assemble, mark_of, perfect_valuer, replay, review_game, thresholds
from bots.solver import Engine
from protocol import Game, Variant
from protocol.actions import Sow


def random_record(variant: Variant, seed: int) -> str:
    """A finished game of random sowings."""
    rng = random.Random(seed)
    game = Game(variant)
    while not game.over:
        game.play(Sow(rng.choice(game.position.legal_bins())))
    return game.record()


@pytest.mark.parametrize(("variant_text", "seed"), [("kalah(2,3)", 4), ("kalah(3,3)", 5),
                                                    ("kalah(3,3,capture=empty)", 7), ("kalah(4,3)", 3)])
def test_each_loss_is_the_solvers_best_value_minus_the_value_of_the_move_played(variant_text: str, seed: int) -> None:
    """For every ply the review's loss is, from the mover's side, the solver's value of the position minus its value
    of the move played (per move), every figure proved, and each mark follows the thresholds."""
    variant = Variant.parse(variant_text)
    record = random_record(variant, seed)
    review = review_game("m1", variant, record, ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    game = replay(variant, record)
    engine = Engine(variant, tt_log2=16)
    assert [p.action for p in review.plies] == record.split()
    for ply, position, action in zip(review.plies, game.positions[:-1], game.actions, strict=True):
        assert isinstance(action, Sow)
        solved = engine.solve(position, per_move=True)
        sign = 1 if ply.side == "south" else -1
        assert ply.exact and ply.value == solved.value
        assert ply.loss == sign * (solved.value - solved.per_move[action.bin]) >= 0
        assert ply.mark == mark_of(ply.loss, review.thresholds)
        assert int(ply.best[0]) in solved.best
    assert review.exact
    assert any(p.loss > 0 for p in review.plies)  # random play gives seeds away


def test_a_known_kalah_2_3_game_loses_what_the_solver_says() -> None:
    """A fixed game of Kalah(2,3): its losses, marks and the players' summaries, figure by figure."""
    variant = Variant.parse("kalah(2,3)")
    record = random_record(variant, 4)
    assert record == "1 5 1 4 2 4 5"
    review = review_game("m1", variant, record, ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    engine = Engine(variant, tt_log2=16)
    game = replay(variant, record)
    losses: dict[int, int] = {0: 0, 1: 0}
    worst: dict[int, tuple[int, int]] = {}
    for index, (position, action) in enumerate(zip(game.positions[:-1], game.actions, strict=True)):
        assert isinstance(action, Sow)
        solved = engine.solve(position, per_move=True)
        seat = int(position.to_move)
        loss = (1 if seat == 0 else -1) * (solved.value - solved.per_move[action.bin])
        losses[seat] += loss
        if loss > worst.get(seat, (0, 0))[0]:
            worst[seat] = (loss, index)
    assert [p.loss for p in review.plies] == [0, 10, 2, 0, 4, 2, 0]
    assert [p.mark for p in review.plies] == ["perfect", "blunder", "mistake", "perfect", "blunder", "mistake",
                                              "perfect"]
    for summary in review.players:
        assert summary.player == ("alice", "bob")[summary.seat]
        assert summary.lost == losses[summary.seat] and summary.exact
        assert (summary.worst_loss, summary.worst_ply) == worst.get(summary.seat, (0, None))
        mine = [p for p in review.plies if p.player == summary.player]
        assert summary.moves == len(mine) and summary.perfect == sum(p.loss == 0 for p in mine)


def test_thresholds_scale_with_the_seeds_of_the_board() -> None:
    """Kalah(6,4) (48 seeds): a mistake from 2 seeds, a blunder from 6; bigger boards need more, small ones less."""
    six_four = thresholds(Variant())
    assert (six_four.inaccuracy, six_four.mistake, six_four.blunder) == (1, 2, 6)
    big = thresholds(Variant(houses=6, seeds=6))
    assert (big.mistake, big.blunder) == (3, 9)
    small = thresholds(Variant(houses=2, seeds=3))
    assert (small.mistake, small.blunder) == (2, 3)
    assert [mark_of(n, six_four) for n in (0, 1, 2, 5, 6)] == ["perfect", "inaccuracy", "mistake", "mistake",
                                                              "blunder"]


def test_an_estimate_is_never_exact_and_pie_decisions_are_not_judged() -> None:
    """Valuations that are not proved make a ply inexact; the pie rule's first turn and the swap are listed as
    `unjudged`, with no loss, and count in no summary."""
    from bots.review import Valuation, needs_value

    variant = Variant.parse("kalah(3,3,pie=on)")
    game = Game.from_record(variant, "2 swap 5")
    values = {i: Valuation(0, ("1",), exact=False, depth=4) for i, p in enumerate(game.positions) if needs_value(p)}
    review = assemble("m1", game, ("alice", "bob"), values, 100)
    assert [p.mark for p in review.plies[:2]] == ["unjudged", "unjudged"]
    assert all(p.loss == 0 for p in review.plies[:2])
    judged = review.plies[2]
    assert not judged.exact and judged.depth == 4 and not review.exact
    assert judged.side == "north" and judged.player == "alice"  # the opener plays North after the swap
    assert sum(s.moves for s in review.players) == 1

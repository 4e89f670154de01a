"""A bot's iterative deepening in one call of the C core: the same search calls, move and value as the Python loop."""

from __future__ import annotations

import random
from typing import Any

import pytest

import bots._search as csearch
from bots import pysearch
from bots.solver import Engine, relative_board
from protocol import Position, Sow, Variant, compile_variant


def positions(variant: Variant, count: int, seed: int) -> list[Position]:
    """Positions of seeded random games (the mover sows), a few plies apart."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = Position.initial(variant)
        while not pos.over and len(out) < count:
            if rng.random() < 0.3 and len(pos.legal_bins()) > 1:
                out.append(pos)
            pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
    return out


@pytest.mark.parametrize(("variant", "max_depth"), [
    (Variant(), 7),
    (Variant(houses=4, seeds=3), -1),
    (Variant(houses=3, seeds=3, clockwise=True), 9),
    (Variant(houses=4, seeds=3, extra_turn=False), -1),
])
def test_c_deepening_makes_the_python_loops_searches(variant: Variant, max_depth: int) -> None:
    """Same position and depth: `Searcher.deepen` returns what the Python loop over the same core does, after
    as many nodes (the same search calls on the same table), for depth-limited, exact and cyclic deepening."""
    rules = csearch.Rules(compile_variant(variant))
    acyclic = not variant.can_repeat
    for pos in positions(variant, 6, seed=variant.houses * 10 + max_depth):
        board = relative_board(pos)
        kids = [(p, *csearch.play(rules, board, p)) for p in csearch.legal(rules, board)]
        in_c, in_py = csearch.Searcher(rules, 16), csearch.Searcher(rules, 16)
        got = in_c.deepen(board, 0.0, max_depth, acyclic)
        want = pysearch.deepen(in_py, kids, 0.0, max_depth, acyclic)
        assert got == want, pos.fen()
        assert in_c.nodes == in_py.nodes
        assert got is not None and got[2] == (acyclic and max_depth < 0)


def test_twins_deepen_alike() -> None:
    """The Python twin's `Searcher.deepen` proves the same value as the C core's (its own table, same rules)."""
    v = Variant(houses=3, seeds=3)
    for pos in positions(v, 4, seed=3):
        board = relative_board(pos)
        c = csearch.Searcher(csearch.Rules(compile_variant(v)), 12).deepen(board, 0.0)
        p = pysearch.Searcher(pysearch.Rules(compile_variant(v)), 12).deepen(board, 0.0)
        assert c is not None and p is not None
        assert (c[1], c[2]) == (p[1], p[2]) == (c[1], True)


def test_deepening_in_budget_plays_the_deepest_search_it_finished() -> None:
    """A board too large to prove in the budget: a legal move from a finished depth, not claimed exact."""
    v = Variant(houses=6, seeds=6)
    pos = Position.initial(v)
    move, _, exact, depth = Engine(v, tt_log2=16).best_by_deepening(pos, 0.05)
    assert move in pos.legal_bins() and not exact and depth >= 0


def test_deepening_refuses_a_finished_board() -> None:
    """A board whose game is over is refused with a clear error, as a search is."""
    rules = csearch.Rules(compile_variant(Variant(houses=2, seeds=1)))
    with pytest.raises(ValueError, match="game is over"):
        csearch.Searcher(rules, 8).deepen((0, 0, 3, 1, 0, 0), 0.0)


@pytest.mark.parametrize("core", [csearch, pysearch])
def test_a_recalled_searcher_does_not_deepen(core: Any) -> None:
    """A recall pending when the deepening starts stops it with `Recalled`, as it stops a one-thread search."""
    v = Variant(houses=3, seeds=3)
    searcher = core.Searcher(core.Rules(compile_variant(v)), 12)
    searcher.recall()
    with pytest.raises(core.Recalled):
        searcher.deepen(relative_board(Position.initial(v)), 0.0)
    assert searcher.deepen(relative_board(Position.initial(v)), 0.0) is not None  # the recall was used up

"""Differential tests: the C core and the Python twin agree on random positions of random variants."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bots._search as csearch
from bots import pysearch
from bots.solver import Engine, relative_board
from protocol import Capture, Leftover, Position, Sow, Variant, compile_variant

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def variants(draw: st.DrawFn, acyclic: bool = False, max_houses: int = 6) -> Variant:
    """Any non-relay variant (acyclic: counter-clockwise only)."""
    return Variant(
        houses=draw(st.integers(1, max_houses)),
        seeds=draw(st.integers(1, 6)),
        capture=draw(st.sampled_from(list(Capture))),
        extra_turn=draw(st.booleans()),
        clockwise=False if acyclic else draw(st.booleans()),
        leftover=draw(st.sampled_from(list(Leftover))),
        majority_end=draw(st.booleans()),
    )


def random_boards(variant: Variant, rng: random.Random, count: int, max_seeds: int) -> list[tuple[int, ...]]:
    """Mover-relative boards: positions of random games, and random pit contents."""
    out: list[tuple[int, ...]] = []
    pos = Position.initial(variant)
    while len(out) < count // 2 and not pos.over:
        pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
        if not pos.over:
            out.append(relative_board(pos))
        if len(out) > 200:
            break
    h = variant.houses
    total = variant.total_seeds
    while len(out) < count:
        houses = [rng.randint(0, 3) for _ in range(2 * h)]
        while sum(houses) > max_seeds:
            houses[rng.randrange(2 * h)] = 0
        if not any(houses[:h]) or not any(houses[h:]):
            houses[0] += 1
            houses[-1] += 1
        rest = max(0, total - sum(houses))
        mine = rng.randint(0, rest)
        out.append((*houses[:h], mine, *houses[h:], rest - mine))
    return out


def over(variant: Variant, board: tuple[int, ...]) -> bool:
    """Whether the game is over on a mover-relative board."""
    r = pysearch.Rules(compile_variant(variant))
    from protocol.sowing import end_reason

    return end_reason(r.tables, list(board)) is not None


@SETTINGS
@given(variant=variants(), seed=st.integers(0, 2**32))
def test_moves_agree(variant: Variant, seed: int) -> None:
    """Legal houses and every sowing's board, gain, extra turn and end agree."""
    t = compile_variant(variant)
    c, p = csearch.Rules(t), pysearch.Rules(t)
    for board in random_boards(variant, random.Random(seed), 20, 40):
        assert csearch.legal(c, board) == pysearch.legal(p, board)
        for pit in pysearch.legal(p, board):
            assert csearch.play(c, board, pit) == pysearch.play(p, board, pit)


@SETTINGS
@given(variant=variants(acyclic=True, max_houses=4), seed=st.integers(0, 2**32))
def test_exact_values_agree(variant: Variant, seed: int) -> None:
    """Exact values agree on boards with few seeds, and null windows bracket them."""
    t = compile_variant(variant)
    cs = csearch.Searcher(csearch.Rules(t), 16)
    ps = pysearch.Searcher(pysearch.Rules(t), 16)
    for board in random_boards(variant, random.Random(seed), 6, 10):
        if over(variant, board) or sum(board[: variant.houses]) + sum(board[variant.houses + 1 : -1]) > 12:
            continue
        v = ps.search(board, -1, -1000, 1000)
        assert cs.search(board, -1, -1000, 1000) == v
        assert cs.exact and ps.exact
        assert cs.search(board, -1, v - 1, v) >= v
        assert cs.search(board, -1, v, v + 1) <= v
        assert ps.search(board, -1, v, v + 1) <= v


@SETTINGS
@given(variant=variants(max_houses=5), seed=st.integers(0, 2**32), depth=st.integers(1, 4))
def test_bounded_values_agree(variant: Variant, seed: int, depth: int) -> None:
    """Depth-limited full-window values agree on any variant, clockwise included."""
    t = compile_variant(variant)
    for board in random_boards(variant, random.Random(seed), 6, 30):
        if over(variant, board):
            continue
        cs = csearch.Searcher(csearch.Rules(t), 18)
        ps = pysearch.Searcher(pysearch.Rules(t), 18)
        assert cs.search(board, depth, -1000, 1000) == ps.search(board, depth, -1000, 1000)


def test_relay_falls_back_to_python() -> None:
    """The C core refuses relay sowing; an engine for a relay variant uses the Python twin."""
    v = Variant(houses=3, seeds=2, relay=True)
    with pytest.raises(NotImplementedError):
        csearch.Rules(compile_variant(v))
    engine = Engine(v, impl="c")
    assert engine.module is pysearch
    sol = engine.solve(Position.initial(v), depth=4)
    assert not sol.exact


def test_search_rejects_finished_boards() -> None:
    """Searching a board whose game is over is a clear error in both twins."""
    t = compile_variant(Variant(houses=2, seeds=1))
    for mod in (csearch, pysearch):
        s = mod.Searcher(mod.Rules(t))
        with pytest.raises(ValueError, match="over"):
            s.search((0, 0, 3, 1, 0, 0), -1, -10, 10)


def test_time_limit_raises_timeout() -> None:
    """A search that runs out of time raises TimeoutError in both twins."""
    v = Variant(houses=6, seeds=6)
    board = relative_board(Position.initial(v))
    for mod in (csearch, pysearch):
        s = mod.Searcher(mod.Rules(compile_variant(v)), 16)
        with pytest.raises(TimeoutError):
            s.search(board, -1, -1, 0, 0.05)


def test_node_limit_raises_timeout_at_the_same_count() -> None:
    """A search past its node limit raises TimeoutError in both twins, after the same number of nodes."""
    v = Variant(houses=6, seeds=6)
    board = relative_board(Position.initial(v))
    counts = []
    for mod in (csearch, pysearch):
        s = mod.Searcher(mod.Rules(compile_variant(v)), 16)
        with pytest.raises(TimeoutError):
            s.search(board, -1, -1, 0, 0.0, 20_000)
        counts.append(s.nodes)
        assert 20_000 <= s.nodes < 30_000
        assert s.search(board, 3, -100, 100, 0.0, 10**9) == mod.Searcher(mod.Rules(compile_variant(v)), 16).search(
            board, 3, -100, 100)
    assert counts[0] == counts[1]

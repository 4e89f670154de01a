"""Exact searches on several threads over one table (simplified ABDADA) agree with one-thread searches.

The one-thread C search is checked against the Python twin in test_solver_differential.py; here the
twin is the reference on the smallest board.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from bots import _search, pysearch
from bots.core import CoreSearcher
from bots.solver import Engine, relative_board
from protocol import Capture, Position, Sow, Variant, compile_variant
from tests.bots.test_solver_differential import random_boards

VARIANTS = [
    Variant(houses=4, seeds=3),
    Variant(houses=4, seeds=4, capture=Capture.EMPTY),
    Variant(houses=5, seeds=3),
    Variant(houses=3, seeds=5, capture=Capture.NONE),
]


def boards(variant: Variant, count: int, seed: int) -> list[tuple[int, ...]]:
    """Mover-relative boards: positions of a random game and random pit contents."""
    return random_boards(variant, random.Random(seed), count, variant.total_seeds)


def mtdf(searcher: CoreSearcher, board: tuple[int, ...], threads: int) -> int:
    """Exact value of a board by MTD(f) null-window searches on `threads` threads."""
    lower, upper, g = -100, 100, 0
    while lower < upper:
        beta = max(g, lower + 1)
        g = searcher.search(board, -1, beta - 1, beta, 0.0, 0, threads)
        if g < beta:
            upper = g
        else:
            lower = g
    return g


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_threaded_values_match_one_thread(variant: Variant, threads: int) -> None:
    """Every exact value found on several threads (table shared, tiny so entries are replaced and raced for)
    is the one-thread search's, and every null-window answer falls on the same side of its window."""
    tables = compile_variant(variant)
    alone = _search.Searcher(_search.Rules(tables), 20)
    crowded = _search.Searcher(_search.Rules(tables), 6)
    for board in boards(variant, 12, seed=threads):
        want = mtdf(alone, board, 1)
        assert mtdf(crowded, board, threads) == want
        assert crowded.exact
        for beta in (want - 1, want, want + 1):
            got = crowded.search(board, -1, beta - 1, beta, 0.0, 0, threads)
            assert (got >= beta) == (want >= beta)


@pytest.mark.parametrize("variant", [Variant(houses=3, seeds=3), Variant(houses=3, seeds=4, capture=Capture.EMPTY),
                                     Variant(houses=4, seeds=2, extra_turn=False)], ids=str)
def test_threaded_values_match_the_python_twin(variant: Variant) -> None:
    """On small boards, the exact values two and four threads find are the pure-Python twin's."""
    tables = compile_variant(variant)
    twin = pysearch.Searcher(pysearch.Rules(tables), 12)
    for threads in (2, 4):
        shared = _search.Searcher(_search.Rules(tables), 8)
        for board in boards(variant, 8, seed=threads):
            assert mtdf(shared, board, threads) == mtdf(twin, board, 1)


def test_threads_share_the_databases_and_count_their_nodes(tmp_path: Path) -> None:
    """Solves with two workers give the one-worker values, and the nodes of every thread are counted."""
    v = Variant(houses=5, seeds=3)
    one = Engine(v, tt_log2=16, egdb_seeds=6, egdb_dir=tmp_path, workers=1)
    two = Engine(v, tt_log2=16, egdb_seeds=6, egdb_dir=tmp_path, workers=2)
    assert two.solve(Position.initial(v)).value == one.solve(Position.initial(v)).value
    for board in boards(v, 6, seed=1):
        assert mtdf(two.searcher, board, 2) == mtdf(one.searcher, board, 1)
    stats = two.searcher.stats
    assert stats["nodes"] == two.searcher.nodes > 0
    assert stats["egdb"] > 0 and stats["probes"] >= stats["hits"] >= stats["cuts"]


def test_depth_limited_searches_stay_on_one_thread() -> None:
    """A depth-limited search asked for threads searches exactly as on one (same value and node count)."""
    v = Variant(houses=6, seeds=4)
    rules = _search.Rules(compile_variant(v))
    for board in boards(v, 4, seed=3):
        one, many = _search.Searcher(rules, 16), _search.Searcher(rules, 16)
        assert one.search(board, 9, -100, 100) == many.search(board, 9, -100, 100, 0.0, 0, 4)
        assert one.nodes == many.nodes


def test_threaded_limits_raise_timeout() -> None:
    """A threaded exact search past its node or time limit raises TimeoutError, and the searcher works after."""
    v = Variant(houses=6, seeds=4)
    rules = _search.Rules(compile_variant(v))
    searcher = _search.Searcher(rules, 16)
    board = relative_board(Position.initial(v))
    with pytest.raises(TimeoutError):
        searcher.search(board, -1, 7, 8, 0.0, 50_000, 2)
    with pytest.raises(TimeoutError):
        searcher.search(board, -1, 7, 8, 0.01, 0, 2)
    small = Variant(houses=3, seeds=4)
    tiny = _search.Searcher(_search.Rules(compile_variant(small)), 12)
    sb = relative_board(Position.initial(small))
    assert mtdf(tiny, sb, 2) == mtdf(pysearch.Searcher(pysearch.Rules(compile_variant(small)), 12), sb, 1)


@pytest.mark.parametrize("threads", [0, -1, 65])
def test_thread_counts_out_of_range_are_refused(threads: int) -> None:
    """Both twins refuse a thread count outside 1..64 with ValueError."""
    v = Variant(houses=3, seeds=3)
    board = relative_board(Position.initial(v))
    for module in (_search, pysearch):
        searcher = module.Searcher(module.Rules(compile_variant(v)), 8)
        with pytest.raises(ValueError, match="threads"):
            searcher.search(board, -1, -1, 0, 0.0, 0, threads)


@pytest.mark.parametrize("module", [_search, pysearch], ids=["c", "py"])
def test_a_recalled_search_raises_recalled_and_runs_again(module: Any) -> None:
    """A recall (pending, or from another thread) stops a one-thread search with Recalled; run again, on more
    threads in the C core, it finds the value; recall(False) withdraws it, and a threaded search ignores it."""
    v = Variant(houses=4, seeds=3)
    rules = module.Rules(compile_variant(v))
    board = relative_board(Position.initial(v))
    want = mtdf(module.Searcher(rules, 16), board, 1)
    searcher = module.Searcher(rules, 16)
    searcher.recall()
    with pytest.raises(module.Recalled):
        searcher.search(board, -1, want - 1, want, 0.0, 0, 1)
    assert searcher.search(board, -1, want - 1, want, 0.0, 0, 1) >= want  # a recall stops one search only
    searcher.recall()
    searcher.recall(False)
    assert mtdf(searcher, board, 1) == want
    searcher.recall()
    assert mtdf(searcher, board, 2) == want  # already on more threads: nothing to recall
    assert searcher.search(board, -1, want, want + 1, 0.0, 0, 1) <= want


def test_recall_from_another_thread_stops_a_running_search() -> None:
    """recall() from another thread stops a long one-thread search of the C core within moments."""
    v = Variant(houses=6, seeds=6)
    searcher = _search.Searcher(_search.Rules(compile_variant(v)), 16)
    board = relative_board(Position.initial(v))
    timer = threading.Timer(0.05, searcher.recall)
    timer.start()
    try:
        with pytest.raises(_search.Recalled):
            searcher.search(board, -1, 0, 1, 0.0, 0, 1)  # hours without databases
    finally:
        timer.cancel()


@pytest.mark.parametrize("workers", [2, 3])
def test_per_move_values_on_threads_lent_to_the_last_moves_are_one_threads(tmp_path: Path, workers: int) -> None:
    """Every first move's value with workers lending their threads to the moves still being solved (the recalled
    searches run again on more threads) is the one-worker value, and no recall is left pending after."""
    v = Variant(houses=4, seeds=4)
    pos = Position.initial(v)
    one = Engine(v, tt_log2=16, egdb_seeds=6, egdb_dir=tmp_path, workers=1)
    engine = Engine(v, tt_log2=16, egdb_seeds=6, egdb_dir=tmp_path, workers=workers)
    for after in [pos, pos.apply(Sow(pos.legal_bins()[0]))]:
        want = one.solve(after, per_move=True)
        got = engine.solve(after, per_move=True)
        assert (got.value, got.per_move, got.exact) == (want.value, want.per_move, True)
    board = relative_board(pos)
    for searcher in engine._pool:
        searcher.search(board, -1, 0, 1, 0.0, 0, 1)  # raises Recalled if a recall were left pending

"""The perfect bot in Kalah(6,5), both capture rules, at the server's 1 s a move (slow; skipped without what it needs).

It needs the 28-seed databases of the rule set in $KALAH_EGDB_DIR (`kalah egdb build --seeds 28 [--capture empty]`,
5.3 GiB each) and reads them only; the bot's books are the shipped ones and those in $KALAH_BOOK_DIR (`kalah book build
-H 6 -s 5 --egdb-seeds 28 ...`). The bot plays itself and, two games a seat, random, greedy, alphabeta:8 and strong;
bench/perfect.py's judge (every level on disk, a 2**26-entry table) checks that each of its moves keeps the game's
published value (the issue's criterion: as South never below it, as North never above it), and against itself the game
ends at that value. Where a 1 s proof of the best move does not end, the bot plays a move proved to keep that value
(`PerfectPlayer.best_sowing`); the books hold the positions where even that takes longer.
"""

from __future__ import annotations

import gc
import sys

import pytest

from bots import egdb
from bots.engines import HOSTED_THREADS, Engines
from bots.solver import Engine
from protocol import Capture, Variant
from tests.helpers.processes import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import perfect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(7200)]

EGDB_SEEDS = 28
GAME_VALUES = {"standard": 10, "empty": 12}
"""Kalah(6,5) under perfect play, from SOLVER-NOTES.md."""


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_every_move_keeps_the_value(capture: str) -> None:
    """Against itself and the other bots in both seats, 1 s a move: no move of the bot is judged to give the game's
    value away or left unjudged, and perfect against perfect ends at the game's value."""
    variant = Variant(seeds=5, capture=Capture(capture))
    if egdb.present_seeds(variant) < EGDB_SEEDS:
        pytest.skip(f"needs the {EGDB_SEEDS}-seed databases of {variant.text()} in ${egdb.ENV_DIR}")
    gc.collect()  # what an earlier case left (its judge's 1.5 GiB table, its engines) goes now, not during a move
    engines = Engines(threads=HOSTED_THREADS)  # as a server hosts its bots
    assert engines.preload(variant, EGDB_SEEDS, timeout=600)
    judge = perfect.Judge(Engine(variant, tt_log2=26, egdb_seeds=egdb.present_seeds(variant), build_egdb=False),
                          engines.book(variant), game=GAME_VALUES[capture])
    tallies = perfect.run_variant(variant, engines, EGDB_SEEDS, 1.0, ["random", "greedy", "alphabeta:8", "strong"],
                                  4, judge)
    faults = [line for tally in tallies.values() for line in tally.lines()
              if line.startswith(("  LOST", "  not judged"))]
    assert not faults, "\n".join(faults)
    assert tallies[perfect.SELF, "both seats"].margins == [GAME_VALUES[capture]]

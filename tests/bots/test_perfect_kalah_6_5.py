"""The perfect bot in Kalah(6,5), both capture rules, at the server's 1 s a move: every move proved (slow; skipped
without what it needs).

It needs the 30-seed databases of the rule set in $KALAH_EGDB_DIR (`kalah egdb build --seeds 30 [--capture empty]`,
5.6 GiB each in format v2), which it reads only, and a complete book of the rule set's Kalah(6,5) start among the bot's
books (the shipped ones and those in $KALAH_BOOK_DIR): one whose header records a build that followed every answer
with databases up to at most 30 seeds (`kalah book build -H 6 -s 5 [--capture empty] --egdb-seeds 30 --node-limit
2000000`, hours, resumable; `kalah book status` says how far). The bot plays itself and, two games a seat, random,
greedy, alphabeta:8 and strong; every one of its moves must be proved (`Decision.exact`: from the book, proved at the
board, or forced), not only keep the game's value; bench/perfect.py's judge (every level on disk, a 2**26-entry table)
checks too that each keeps the game's published value (as South never below it, as North never above it), and against
itself the game ends at that value.
"""

from __future__ import annotations

import gc
import sys

import pytest

from bots import book as book_mod
from bots import egdb
from bots.engines import HOSTED_THREADS, Engines
from bots.inventory import BOOK_NODE_LIMIT, LARGE_SEEDS
from bots.solver import Engine
from protocol import Capture, Variant
from tests.helpers.processes import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import perfect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(7200)]

EGDB_SEEDS = LARGE_SEEDS
"""The databases the Kalah(6,5) books are built with, which the bot uses here."""
NODE_LIMIT = BOOK_NODE_LIMIT
GAME_VALUES = {"standard": 10, "empty": 12}
"""Kalah(6,5) under perfect play, from SOLVER-NOTES.md."""
OPPONENTS = ["random", "greedy", "alphabeta:8", "strong"]


def missing(variant: Variant, engines: Engines) -> str | None:
    """What the test lacks for `variant`, as one line naming the commands that make it; None when it has it all."""
    capture = "" if variant.capture is Capture.STANDARD else f" --capture {variant.capture.value}"
    lacks = []
    if egdb.present_seeds(variant) < EGDB_SEEDS:
        lacks.append(f"the {EGDB_SEEDS}-seed databases in ${egdb.ENV_DIR} (`kalah egdb build --seeds {EGDB_SEEDS}"
                     f"{capture}`)")
    book = engines.book(variant)
    if book is None or book.complete(variant, EGDB_SEEDS) is None:
        lacks.append(f"a complete book of {variant.text()} (`kalah book build -H 6 -s 5{capture} --egdb-seeds "
                     f"{EGDB_SEEDS} --node-limit {NODE_LIMIT}`, into ${book_mod.ENV_DIR})")
    return f"needs {' and '.join(lacks)}" if lacks else None


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_every_move_is_proved(capture: str) -> None:
    """Against itself and the other bots in both seats, 1 s a move: every move of the bot is proved (book, proof or
    forced), none is judged to give the game's value away or left unjudged, and perfect against perfect ends at the
    game's value."""
    variant = Variant(seeds=5, capture=Capture(capture))
    engines = Engines(threads=HOSTED_THREADS)  # as a server hosts its bots
    lacks = missing(variant, engines)
    if lacks is not None:
        pytest.skip(lacks)
    gc.collect()  # what an earlier case left (its judge's 1.5 GiB table, its engines) goes now, not during a move
    assert engines.preload(variant, EGDB_SEEDS, timeout=600)
    judge = perfect.Judge(Engine(variant, tt_log2=26, egdb_seeds=egdb.present_seeds(variant), build_egdb=False),
                          engines.book(variant), game=GAME_VALUES[capture])
    tallies = perfect.run_variant(variant, engines, EGDB_SEEDS, 1.0, OPPONENTS, 4, judge)
    assert {(name, where) for name, where in tallies} == {
        (perfect.SELF, "both seats"), *((name, seat) for name in OPPONENTS for seat in ("South", "North"))}
    unproved = [f"{name} ({where}) {move.where()} {move.position.fen()}: {move.decision.action} ({move.decision.source}"
                f", {move.decision.seconds:.2f} s)" for (name, where), tally in tallies.items() for move in tally.moves
                if not move.decision.exact]
    assert not unproved, "moves not proved:\n" + "\n".join(unproved)
    faults = [line for tally in tallies.values() for line in tally.lines()
              if line.startswith(("  LOST", "  not judged"))]
    assert not faults, "\n".join(faults)
    assert tallies[perfect.SELF, "both seats"].margins == [GAME_VALUES[capture]]

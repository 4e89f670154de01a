"""The solver's bench (bench/solver.py): `--where` counts each search of a value apart and words what it asked."""

from __future__ import annotations

import re
import sys

from bots.solver import Engine, SearchDone
from protocol import Position, Variant
from tests.helpers.processes import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import solver as bench_solver

SMALL = Variant(houses=4, seeds=3)
LINE = re.compile(r"(?:first guess \(depth \d+\), )?(the start|sowing (\d+)) at least ([+-]\d+)\? (yes|no): "
                  r"[\d,]+ nodes in \d+\.\d\d s")


def test_each_search_of_a_value_is_told_and_worded_truly() -> None:
    """Every search call of a value's solve reaches `on_search`, their nodes add up to the solve's, and each line's
    answer agrees with the exact values of the start and of each first move."""
    position = Position.initial(SMALL)
    engine = Engine(SMALL, tt_log2=16, egdb_seeds=0)
    searches: list[SearchDone] = []
    engine.on_search = searches.append
    value = engine.solve(position)
    assert len(searches) > 1 and sum(done.nodes for done in searches if done.depth < 0) == value.nodes
    per_move = Engine(SMALL, tt_log2=16, egdb_seeds=0).solve(position, per_move=True).per_move
    lines = bench_solver.value_searches(engine, position, searches)
    assert len(lines) == len(searches) and any(line.startswith("sowing") for line in lines)
    for line in lines:
        match = LINE.fullmatch(line)
        assert match, line
        if line.startswith("first guess"):
            continue  # a depth-limited search: its answer need not be the exact value's
        truth = value.value if match[2] is None else per_move[int(match[2])]
        assert (truth >= int(match[3])) == (match[4] == "yes"), line

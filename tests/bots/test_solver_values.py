"""Exact values of whole games, computed by both search twins (C core and pure Python)."""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

import pytest

from bots.solver import Engine, proof_order, relative_board
from protocol import Capture, Position, Sow, Variant
from tests.helpers.paths import ROOT_DIR

DATA = json.loads((ROOT_DIR / "tests" / "data" / "small_boards.json").read_text())
PUBLIC = json.loads((ROOT_DIR / "tests" / "data" / "public_record.json").read_text())
IMPLS = ["c", "py"]

# The table of RULES.md (standard capture), copied from the page.
RULES_TABLE = {1: [0, -2, 6, -2, 2, 0], 2: [2, -2, -2, -10, 6, 8], 3: [0, 4, 2, 2, 6, -8]}


def oracle(variant: Variant) -> int:
    """Plain memoised minimax over `Position` (no search tricks): South's final margin."""

    @cache
    def value(pos: Position) -> int:
        if pos.over:
            return int(pos.margin)
        values = [value(pos.apply(Sow(b))) for b in pos.legal_bins()]
        return max(values) if pos.to_move == 0 else min(values)

    return value(Position.initial(variant))


def test_rules_table_matches_data_file() -> None:
    """The data file's standard table is the one printed in RULES.md."""
    assert {int(h): row for h, row in DATA["standard"].items()} == RULES_TABLE


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("capture", ["standard", "empty"])
@pytest.mark.parametrize("houses", [1, 2, 3])
def test_small_boards(impl: str, capture: str, houses: int) -> None:
    """Kalah(h, s) for h 1..3 and s 1..6 has the tabled value under both capture rules."""
    got = []
    for seeds in range(1, 7):
        v = Variant(houses=houses, seeds=seeds, capture=Capture(capture))
        got.append(Engine(v, impl=impl).solve(Position.initial(v)).value)
    assert got == DATA[capture][str(houses)]


@pytest.mark.parametrize("capture", ["standard", "empty", "none"])
@pytest.mark.parametrize(("houses", "seeds"), [(1, 3), (1, 6), (2, 2), (2, 3), (2, 4), (3, 1)])
def test_matches_plain_minimax(capture: str, houses: int, seeds: int) -> None:
    """Both twins agree with a plain minimax over Position on boards it can finish."""
    v = Variant(houses=houses, seeds=seeds, capture=Capture(capture))
    want = oracle(v)
    for impl in IMPLS:
        assert Engine(v, impl=impl).solve(Position.initial(v)).value == want


@pytest.mark.parametrize("impl", IMPLS)
def test_per_move_values_and_best(impl: str) -> None:
    """Per-move values are each move's exact value; the best moves are those reaching the value."""
    v = Variant(houses=3, seeds=3)
    pos = Position.initial(v)
    sol = Engine(v, impl=impl).solve(pos, per_move=True)
    assert set(sol.per_move) == set(pos.legal_bins())
    assert sol.value == max(sol.per_move.values())
    assert sol.best == [b for b, x in sol.per_move.items() if x == sol.value]
    for b, x in sol.per_move.items():
        assert Engine(v, impl=impl).solve(pos.apply(Sow(b))).value == x


@pytest.mark.parametrize("impl", IMPLS)
def test_values_count_the_stores(impl: str) -> None:
    """A position's value includes the seeds already stored, seen from North to move too."""
    v = Variant(houses=2, seeds=3)
    pos = Position.initial(v).apply(Sow(1))
    assert pos.to_move == 1
    sol = Engine(v, impl=impl).solve(pos, per_move=True)
    assert sol.value == min(sol.per_move.values())
    assert sol.value == oracle_from(pos)


def oracle_from(start: Position) -> int:
    """Plain minimax from any position."""
    if start.over:
        return int(start.margin)
    values = [oracle_from(start.apply(Sow(b))) for b in start.legal_bins()]
    return max(values) if start.to_move == 0 else min(values)


def test_kalah_4_3_per_move_matches_public_record() -> None:
    """Kalah(4,3): the value and every first move's value match the published solver's."""
    v = Variant(houses=4, seeds=3)
    sol = Engine(v).solve(Position.initial(v), per_move=True)
    assert sol.value == PUBLIC["values"]["4,3"]
    assert {str(b): x for b, x in sol.per_move.items()} == PUBLIC["per_move"]["4,3"]


@pytest.mark.parametrize(("impl", "board"), [("c", "4,4"), ("c", "5,2"), ("py", "5,2"), ("c", "5,3"),
                                             ("c", "6,2")])
def test_public_record(impl: str, board: str) -> None:
    """Further boards solved in the public record get the published value."""
    h, s = map(int, board.split(","))
    v = Variant(houses=h, seeds=s)
    assert Engine(v, impl=impl).solve(Position.initial(v)).value == PUBLIC["values"][board]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["5,4", "6,3"])
def test_public_record_slow(board: str, tmp_path: Path) -> None:
    """Kalah(5,4) and Kalah(6,3) match the public record (C core with 16-seed databases)."""
    h, s = map(int, board.split(","))
    v = Variant(houses=h, seeds=s)
    engine = Engine(v, tt_log2=20, egdb_seeds=16, egdb_dir=tmp_path)
    assert engine.solve(Position.initial(v)).value == PUBLIC["values"][board]


@pytest.mark.slow
@pytest.mark.parametrize(("capture", "want"), [("standard", 8), ("empty", 10)])
def test_kalah_6_4(capture: str, want: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Kalah(6,4): South wins by 8 (standard) and by 10 (empty capture); C core with databases."""
    v = Variant(capture=Capture(capture))
    engine = Engine(v, tt_log2=22, egdb_seeds=20, egdb_dir=tmp_path_factory.mktemp("egdb"))
    assert engine.solve(Position.initial(v)).value == want


@pytest.mark.parametrize("impl", IMPLS)
def test_deepening_proves_small_boards(impl: str) -> None:
    """Iterative deepening ends with a proved value and a best move on a small acyclic board."""
    v = Variant(houses=3, seeds=3)
    pos = Position.initial(v).apply(Sow(2))
    engine = Engine(v, impl=impl)
    sol = engine.solve(pos, per_move=True)
    move, mover_value, exact, _ = engine.best_by_deepening(pos, 30.0)
    assert exact
    assert move in sol.best
    assert int(pos.margin) - mover_value == sol.value  # North to move: South's value is the negation


def test_deepening_never_claims_exact_when_sowing_can_cycle() -> None:
    """Clockwise sowing can repeat positions: deepening stops at its depth and is not exact."""
    v = Variant(houses=2, seeds=2, clockwise=True)
    move, _, exact, depth = Engine(v).best_by_deepening(Position.initial(v), 0.3, max_depth=9)
    assert not exact and depth == 9
    assert move in Position.initial(v).legal_bins()


@pytest.mark.parametrize("seed", range(6))
def test_keep_finds_a_move_keeping_a_value_and_none_above_the_best(seed: int) -> None:
    """`Engine.keep` returns the first move in proof order worth at least the value asked for, and None when the
    value asked for is above the position's (positions of random Kalah(4,3) games)."""
    v = Variant(houses=4, seeds=3)
    engine = Engine(v, tt_log2=16)
    rng = random.Random(seed)
    pos = Position.initial(v)
    while not pos.over:
        board = relative_board(pos)
        kids = sorted(engine.children(board), key=proof_order)
        values = {kid[0]: engine.child_value(kid[1:], -1, 0, 0.0) for kid in kids}
        best = max(values.values())
        for need in (best - 3, best - 1, best):
            assert engine.keep(board, need) == next(k[0] for k in kids if values[k[0]] >= need)
        assert engine.keep(board, best + 1) is None
        assert all(engine.reaches(board, pit, value) and not engine.reaches(board, pit, value + 1)
                   for pit, value in values.items())
        pos = pos.apply(rng.choice(pos.legal_actions()))

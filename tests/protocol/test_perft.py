"""Perft oracle: counts of sowing sequences from the start, for the Python rules and the C core alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bots._search as csearch
from bots.solver import relative_board
from protocol import Position, Sow, Variant, compile_variant
from tests.helpers.paths import ROOT_DIR

COUNTS: dict[str, list[int]] = json.loads((ROOT_DIR / "tests" / "data" / "perft.json").read_text())["counts"]


def perft_rules(pos: Position, depth: int) -> int:
    """Sowing sequences of length `depth` with the pure-Python rules."""
    if depth == 0:
        return 1
    if pos.over:
        return 0
    return sum(perft_rules(pos.apply(Sow(b)), depth - 1) for b in pos.legal_bins())


def perft_core(rules: Any, board: tuple[int, ...], depth: int) -> int:
    """The same count with the C core's `legal` and `play` on mover-relative boards."""
    if depth == 0:
        return 1
    total = 0
    for pit in csearch.legal(rules, board):
        after, _gain, _extra, over = csearch.play(rules, board, pit)
        if not over:
            total += perft_core(rules, after, depth - 1)
        elif depth == 1:
            total += 1
    return total


@pytest.mark.parametrize("variant", sorted(COUNTS))
def test_perft_python_rules(variant: str) -> None:
    """The Python rules reproduce every stored count."""
    start = Position.initial(Variant.parse(variant))
    assert [perft_rules(start, d) for d in range(1, len(COUNTS[variant]) + 1)] == COUNTS[variant]


@pytest.mark.parametrize("variant", sorted(COUNTS))
def test_perft_c_core(variant: str) -> None:
    """The C core's move generator reproduces every stored count."""
    v = Variant.parse(variant)
    rules = csearch.Rules(compile_variant(v))
    board = relative_board(Position.initial(v))
    assert [perft_core(rules, board, d) for d in range(1, len(COUNTS[variant]) + 1)] == COUNTS[variant]

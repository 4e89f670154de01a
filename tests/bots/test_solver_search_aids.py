"""Search aids of the solver: first guesses for MTD(f) change no value, and both cores count their work alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots import solver
from bots.solver import Engine
from protocol import Capture, Position, Sow, Variant

BOARDS = [
    (Variant(houses=4, seeds=3), ""),
    (Variant(houses=4, seeds=3, capture=Capture.EMPTY), "1"),
    (Variant(houses=3, seeds=4), "2 5"),
    (Variant(houses=5, seeds=2, capture=Capture.EMPTY), "3"),
]


def position(variant: Variant, moves: str) -> Position:
    """The position after a record of bins."""
    pos = Position.initial(variant)
    for m in moves.split():
        pos = pos.apply(Sow(int(m)))
    return pos


@pytest.mark.parametrize("impl", ["c", "py"])
@pytest.mark.parametrize(("variant", "moves"), BOARDS)
def test_guessed_first_values_change_no_value(impl: str, variant: Variant, moves: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Solves that start MTD(f) from depth-limited guesses find the values and best moves of solves that do not."""
    pos = position(variant, moves)
    plain = Engine(variant, impl=impl, tt_log2=16, egdb_seeds=4, egdb_dir=tmp_path, workers=1)
    want_value, want_moves = plain.solve(pos), plain.solve(pos, per_move=True)
    monkeypatch.setattr(solver, "GUESS_FAR_SEEDS", 0)
    monkeypatch.setattr(solver, "GUESS_DEPTH", 3)
    guessed = Engine(variant, impl=impl, tt_log2=16, egdb_seeds=4, egdb_dir=tmp_path, workers=1)
    assert guessed.far(solver.relative_board(pos))
    got_value, got_moves = guessed.solve(pos), guessed.solve(pos, per_move=True)
    assert (got_value.value, got_value.best, got_value.exact) == (want_value.value, want_value.best, True)
    assert (got_moves.per_move, got_moves.best, got_moves.exact) == (want_moves.per_move, want_moves.best, True)


@pytest.mark.parametrize("impl", ["c", "py"])
def test_searchers_count_probes_hits_cuts_and_database_reads(impl: str, tmp_path: Path) -> None:
    """`stats`: hits within probes, cut-offs within hits, database reads when databases are loaded."""
    v = Variant(houses=4, seeds=3)
    engine = Engine(v, impl=impl, tt_log2=16, egdb_seeds=6, egdb_dir=tmp_path, workers=1)
    assert engine.searcher.stats == {"nodes": 0, "probes": 0, "hits": 0, "cuts": 0, "egdb": 0, "etc": 0}
    engine.solve(Position.initial(v))
    stats = engine.searcher.stats
    assert stats["nodes"] == engine.searcher.nodes > 0
    assert 0 < stats["hits"] <= stats["probes"] < stats["nodes"]
    assert 0 <= stats["cuts"] <= stats["hits"]
    assert stats["egdb"] > 0 and stats["etc"] >= 0

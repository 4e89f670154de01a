"""The book-size bench (bench/book_size.py): Knuth's estimate of a full walk's hard and easy positions."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import bots._search as csearch
from bots import egdb
from bots.book import Book
from bots.book_builder import Builder, Plan
from bots.solver import Engine, relative_board
from protocol import Position, Variant
from tests.helpers.processes import ROOT


def bench(tmp_path: Path, *args: str) -> dict[str, tuple[float, float]]:
    """Run the bench on Kalah(3,2) with the databases in `tmp_path`; each line's (mean, standard error) by kind."""
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "book_size.py"), "-H", "3", "-s", "2", *args],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **{egdb.ENV_DIR: str(tmp_path)}))
    assert run.returncode == 0, run.stderr
    found = re.findall(r"^  (hard|easy) \(.*\): ([\d,]+) ± ([\d,]+) positions$", run.stdout, re.MULTILINE)
    assert [kind for kind, _, _ in found] == ["hard", "easy"], run.stdout
    return {kind: (float(mean.replace(",", "")), float(error.replace(",", ""))) for kind, mean, error in found}


def test_with_every_position_in_the_databases_the_walk_is_its_starts(tmp_path: Path) -> None:
    """Databases holding every position of the game make every start easy: no hard position, and the easy ones are the
    start (the player first) and each way the first turn can end (the player second), half the paths each."""
    variant = Variant(houses=3, seeds=2)
    egdb.load(variant, 12, csearch, tmp_path)
    engine = Engine(variant, egdb_seeds=12, build_egdb=False, egdb_dir=tmp_path)
    answers = len(Builder(engine, Book(egdb.rule_key(variant)), Plan()).replies(
        relative_board(Position.initial(variant))))
    assert answers > 1
    found = bench(tmp_path, "--check-egdb-seeds", "12", "--paths", "4")
    assert found["hard"] == (0.0, 0.0)
    assert found["easy"][0] == round((1 + answers) / 2)


def test_without_databases_and_with_a_tiny_node_limit_positions_are_hard(tmp_path: Path) -> None:
    """With no databases and a node limit of one node no start is proved, so every path has hard positions."""
    found = bench(tmp_path, "--check-egdb-seeds", "0", "--paths", "4", "--node-limit", "1")
    assert found["hard"][0] >= 1

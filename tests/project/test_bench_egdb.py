"""The database formats' bench (bench/egdb.py): bytes per level in v1 and v2, and the same solves with each."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import bots._search as csearch
from bots import egdb
from protocol import Variant
from tests.helpers.egdb_v1 import v1_levels, write_v1
from tests.helpers.processes import ROOT


def test_bench_prints_bytes_per_level_and_both_formats_solve_alike(tmp_path: Path) -> None:
    """Each v1 level's bytes in v1 and v2 with the ratio, then the same solves with v1 and v2 levels (same nodes and
    values, rates of each); the v1 files are left as they were and the v2 copies go to the directory given."""
    variant = Variant(houses=3, seeds=2)
    levels = v1_levels(variant, 8)
    write_v1(tmp_path / "v1", variant, levels)
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "egdb.py"), "--dir", str(tmp_path / "v1"), "-H", "3",
                          "--per-house", "2", "--levels", "1-8", "--rate", "--seeds", "8", "--rounds", "2",
                          "--copy-dir", str(tmp_path / "v2"), "--tt-bits", "16"],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    out = run.stdout
    row = re.search(r"^\s+8\s+([\d,]+)\s+([\d,]+)\s+([\d.]+)%", out, re.MULTILINE)
    assert row and int(row[1].replace(",", "")) == len(levels[8])
    assert int(row[2].replace(",", "")) == egdb.level_path(tmp_path / "v2", variant, 8).stat().st_size
    rounds = re.findall(r"round \d (v[12]): [\d.]+ s, ([\d,]+) nodes, [\d,]+ nodes/s, values (\[.*\])", out)
    assert sorted(name for name, _, _ in rounds) == ["v1", "v1", "v2", "v2"]
    assert len({(nodes, values) for _, nodes, values in rounds}) == 1
    assert re.search(r"v2 takes [\d.]+x the time of v1", out)
    assert [(tmp_path / "v1" / p.name).read_bytes() for p in sorted((tmp_path / "v1").iterdir())] == [
        levels[k] for k in range(1, 9)]


def test_bench_compares_v2_levels_on_disk_with_v1_copies(tmp_path: Path) -> None:
    """With v2 levels on disk the bench decodes v1 copies of them and solves alike with both."""
    variant = Variant(houses=3, seeds=2)
    egdb.load(variant, 7, csearch, tmp_path / "v2")
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "egdb.py"), "--dir", str(tmp_path / "v2"), "-H", "3",
                          "--per-house", "2", "--levels", "7", "--rate", "--seeds", "7", "--rounds", "2",
                          "--copy-dir", str(tmp_path / "v1"), "--tt-bits", "16"],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert "v1 copies of levels 1..7" in run.stdout
    rounds = re.findall(r"round \d (v[12]): [\d.]+ s, ([\d,]+) nodes, [\d,]+ nodes/s, values (\[.*\])", run.stdout)
    assert sorted(name for name, _, _ in rounds) == ["v1", "v1", "v2", "v2"] and len({r[1:] for r in rounds}) == 1
    assert egdb.level_path(tmp_path / "v1", variant, 7, egdb.OLD_FORMAT).read_bytes() == v1_levels(variant, 7)[7]

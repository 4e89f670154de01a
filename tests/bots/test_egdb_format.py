"""Database level format v2: the same values as v1 in about half the bytes, checked on opening, converted safely."""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import bots._search as csearch
from bots import egdb, pylevels, pysearch
from protocol import Capture, Leftover, Variant, compile_variant
from tests.helpers.egdb_v1 import v1_levels, write_v1
from tests.helpers.processes import KALAH

RULE_SETS = [
    (Variant(houses=2, seeds=3), 10),
    (Variant(houses=3, seeds=2, capture=Capture.EMPTY, leftover=Leftover.EMPTIER), 9),
    (Variant(houses=4, seeds=2, extra_turn=False, leftover=Leftover.DISCARD), 8),
    (Variant(houses=5, seeds=2), 7),
    (Variant(houses=6, seeds=2), 8),
    (Variant(houses=6, seeds=2, capture=Capture.EMPTY), 7),
]
"""Rule sets of 2 to 6 houses (capture, extra turn and leftovers varied) and the levels each test builds."""
PY_DECODE_MAX = 20_000
"""Levels of at most this many positions are also decoded by the Python twin (slow)."""


def whole_file(variant: Variant, k: int, values: bytes, impl: Any = csearch) -> bytes:
    """A v2 level file's bytes for the given values."""
    enc = egdb.encode(impl, variant, k, values)
    try:
        return enc.header + bytes(enc.body[: enc.used])
    finally:
        enc.body.close()


@pytest.mark.parametrize(("variant", "seeds"), RULE_SETS, ids=lambda x: x.text() if isinstance(x, Variant) else None)
def test_v2_levels_hold_every_value_of_v1(variant: Variant, seeds: int, tmp_path: Path) -> None:
    """Built as v2, every level decodes (by both twins where small) to exactly the v1 level's values; past its
    512-byte header it takes at most 55% of v1's bytes."""
    old = v1_levels(variant, seeds)
    new = egdb.load(variant, seeds, csearch, tmp_path)
    for k in range(1, seeds + 1):
        assert bytes(new[k][:8]) == pylevels.MAGIC
        assert egdb.values(csearch, variant, k, new[k]) == old[k], k
        if len(old[k]) <= PY_DECODE_MAX:
            assert egdb.values(pysearch, variant, k, new[k]) == old[k], k
        if len(old[k]) >= 5000:
            assert len(new[k]) - pylevels.HEADER <= 0.55 * len(old[k]), (k, len(new[k]), len(old[k]))


def test_discarded_leftovers_keep_odd_values() -> None:
    """Where leftovers are discarded a value need not have the seeds' parity: the level is stored unshifted."""
    variant = Variant(houses=4, seeds=2, extra_turn=False, leftover=Leftover.DISCARD)
    old = v1_levels(variant, 5)
    assert any((v + 5) & 1 for v in memoryview(old[5]).cast("b"))
    assert csearch.level_model(4, 5, old[5])[0] == 0
    assert csearch.level_model(2, 5, v1_levels(Variant(houses=2, seeds=3), 5)[5])[0] == 1


@pytest.mark.parametrize("impl", ["c", "py"])
def test_searches_agree_with_v1_v2_and_no_databases(impl: str, tmp_path: Path) -> None:
    """Searches of positions beyond the levels give the same values with v2 levels, v1 levels and none."""
    variant = Variant(houses=4, seeds=3)
    core: Any = csearch if impl == "c" else pysearch
    rules = core.Rules(compile_variant(variant))
    seeds = 9 if impl == "c" else 6
    old = v1_levels(variant, seeds)
    new = egdb.load(variant, seeds, core, tmp_path)
    searchers = [core.Searcher(rules, 16, levels) for levels in (new, old, None)]
    rng = random.Random(43)
    boards = 0
    while boards < (12 if impl == "c" else 4):
        houses = [rng.randint(0, 3) for _ in range(8)]
        if not any(houses[:4]) or not any(houses[4:]) or not seeds < sum(houses) <= seeds + (6 if impl == "c" else 3):
            continue
        board = (*houses[:4], 0, *houses[4:], 0)
        assert len({s.search(board, -1, -60, 60) for s in searchers}) == 1, board
        boards += 1
    assert searchers[0].stats["egdb"] > 0


def _with_groups(tmp_path: Path) -> tuple[Variant, Path, bytes]:
    """Kalah(6,n) levels up to 9 seeds (level 9: 1,377 blocks in 3 groups): the variant, level 9's file and bytes."""
    variant = Variant(houses=6, seeds=2)
    egdb.load(variant, 9, csearch, tmp_path)
    path = egdb.level_path(tmp_path, variant, 9)
    return variant, path, path.read_bytes()


def _damage(path: Path, data: bytes) -> None:
    """Replace a read-only level file with other bytes."""
    path.unlink()
    path.write_bytes(data)


def test_a_damaged_v2_level_is_refused_in_one_line_and_rebuilt(tmp_path: Path) -> None:
    """A v2 level cut short, with a flipped header byte, a damaged exception table or impossible exceptions is refused
    on opening with one line naming the file and the fix; a build rebuilds it."""
    variant, path, data = _with_groups(tmp_path)
    fields = pylevels.FIELDS.unpack_from(data)
    blocks, groups, exceptions = fields[9], fields[10], fields[11]
    assert groups == 3
    words_at = pylevels.HEADER + blocks * 64
    flipped = bytearray(data)
    flipped[17] ^= 1  # the level number
    beyond = bytearray(data)
    struct.pack_into("<Q", beyond, words_at + 16, exceptions + 1)
    backwards = bytearray(data)
    struct.pack_into("<Q", backwards, words_at + 8, 2**40)
    rng = random.Random(9)
    wild = bytearray(whole_file(variant, 9, bytes(rng.randint(-9, 9) & 0xFF for _ in range(fields[8]))))
    wild[-1] = 200  # an exception no level of 9 seeds holds
    cases = [(data[:-1], "bytes where its header says"), (bytes(flipped), "damaged header"),
             (bytes(beyond), "damaged exception table"), (bytes(backwards), "damaged exception table"),
             (bytes(wild), "exceptions out of range for 9 seeds"), (b"\x00" * 100, "shorter than a header")]
    for bad, why in cases:
        _damage(path, bad)
        with pytest.raises(egdb.LevelFileError, match=why) as info:
            egdb.load(variant, 9, csearch, tmp_path, build=False)
        assert "\n" not in str(info.value) and path.name in str(info.value) and "kalah egdb build" in str(info.value)
        assert info.value.k == 9
        assert egdb.plan(variant, 9, tmp_path)[-1].present == (len(bad) > 512 and bad != data[:-1])  # by its size
    egdb.load(variant, 9, csearch, tmp_path)
    assert path.read_bytes() == data


def test_a_level_of_outliers_decodes_exactly() -> None:
    """Values no predictor follows (a tenth of them and more escape, thousands in a group) decode exactly, by both
    twins, with the parity shift and without; both twins write the same bytes."""
    rng = random.Random(5)
    size = pysearch.level_size(6, 9)
    values = bytes(rng.randint(-9, 9) & 0xFF for _ in range(size))
    data = whole_file(Variant(houses=6, seeds=2), 9, values)
    assert pylevels.FIELDS.unpack_from(data)[5] == 0 and pylevels.FIELDS.unpack_from(data)[11] > size // 10
    assert egdb.values(csearch, Variant(houses=6, seeds=2), 9, data) == values
    for variant, k, shift, step in ((Variant(houses=2, seeds=20), 60, 1, 2), (Variant(houses=4, seeds=2), 9, 0, 1)):
        values = bytes((step * rng.randint(0, 2 * k // step) - k) & 0xFF
                       for _ in range(pysearch.level_size(variant.houses, k)))
        data = whole_file(variant, k, values)
        fields = pylevels.FIELDS.unpack_from(data)
        assert fields[5] == shift and fields[11] > len(values) // 10
        assert data == whole_file(variant, k, values, pysearch)
        assert egdb.values(pysearch, variant, k, data) == values == egdb.values(csearch, variant, k, data)


def test_builds_on_top_of_v1_levels_read_them(tmp_path: Path) -> None:
    """v1 levels on disk are read as they are (by searches and by builds of the levels above them, written as v2)."""
    variant = Variant(houses=3, seeds=3)
    old = v1_levels(variant, 10)
    write_v1(tmp_path, variant, old[:6])
    assert egdb.present_seeds(variant, tmp_path) == 5
    levels = egdb.load(variant, 10, csearch, tmp_path)
    assert [len(levels[k]) for k in range(1, 6)] == [len(old[k]) for k in range(1, 6)]
    for k in range(6, 11):
        assert egdb.level_path(tmp_path, variant, k).exists()
        assert egdb.values(csearch, variant, k, levels[k]) == old[k]


CONVERT_CHILD = """
import os, signal, sys
from pathlib import Path
import bots._search as core
from bots import egdb, egdb_convert
from protocol import Variant
kill_at, after = int(sys.argv[2]), sys.argv[3] == "after"
real = egdb._rename
def rename(src, dst):
    if dst.name.endswith(f"k{kill_at:03d}.egdb") and not after:
        os.kill(os.getpid(), signal.SIGKILL)  # the temporary file written, not renamed
    real(src, dst)
    if dst.name.endswith(f"k{kill_at:03d}.egdb"):
        os.kill(os.getpid(), signal.SIGKILL)  # renamed into place, the v1 file not yet checked against it
egdb._rename = rename
egdb_convert.convert(Variant(houses=4, seeds=2), core, Path(sys.argv[1]))
"""


def test_conversion_killed_midway_loses_nothing_and_resumes(tmp_path: Path) -> None:
    """`kalah egdb convert` killed while writing a level, or after renaming it, keeps every v1 file not yet checked
    against its v2 file; the next run finishes, and every level then holds the v1 values in format v2."""
    variant = Variant(houses=4, seeds=2)
    old = v1_levels(variant, 10)
    write_v1(tmp_path, variant, old)
    for kill_at, when in ((3, "before"), (6, "after")):
        child = subprocess.run([sys.executable, "-c", CONVERT_CHILD, str(tmp_path), str(kill_at), when],
                               capture_output=True, text=True, timeout=120, env=dict(os.environ))
        assert child.returncode == -signal.SIGKILL, child.stderr
        for k in range(1, 11):
            v1 = egdb.level_path(tmp_path, variant, k, egdb.OLD_FORMAT)
            v2 = egdb.level_path(tmp_path, variant, k)
            assert v1.exists() == (k >= kill_at), k
            assert v2.exists() == (k < kill_at or (k == kill_at and when == "after")), k
        assert egdb.present_seeds(variant, tmp_path) == 10  # every level readable meanwhile, in one format or the other
        assert bool(list(tmp_path.glob("*.tmp*"))) == (when == "before")  # removed by the next run
    run = subprocess.run([*KALAH, "egdb", "convert", "--dir", str(tmp_path), "-H", "4"], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert "converting 5 v1 levels of rule set h4-standard-extra-owner" in run.stdout
    assert "level 10: 19,448 bytes (v1) -> " in run.stdout and "converted 5 levels" in run.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [egdb.level_path(tmp_path, variant, k).name
                                                          for k in range(1, 11)]
    levels = egdb.load(variant, 10, csearch, tmp_path, build=False)
    assert [egdb.values(csearch, variant, k, levels[k]) for k in range(1, 11)] == old[1:]
    again = subprocess.run([*KALAH, "egdb", "convert", "--dir", str(tmp_path), "-H", "4"], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ))
    assert again.returncode == 0 and "nothing to convert" in again.stdout


def test_conversion_refuses_a_damaged_v1_level_in_one_line(tmp_path: Path) -> None:
    """A v1 file that is not a level stops the conversion with one line naming it (exit 1), and is kept."""
    variant = Variant(houses=2, seeds=3)
    write_v1(tmp_path, variant, v1_levels(variant, 4))
    bad = egdb.level_path(tmp_path, variant, 3, egdb.OLD_FORMAT)
    bad.write_bytes(b"\x7f" * len(bad.read_bytes()))
    run = subprocess.run([*KALAH, "egdb", "convert", "--dir", str(tmp_path), "-H", "2"], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ))
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and bad.name in run.stderr and "values out of range" in run.stderr
    assert bad.exists() and egdb.level_path(tmp_path, variant, 2).exists()


def test_a_c_extension_older_than_v2_still_builds_levels_in_v1(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Where the C extension predates format v2 (the package updated, the extension not rebuilt), a build still
    writes its levels, in format v1, and says how to rebuild the extension; they read back with the same values."""
    variant = Variant(houses=2, seeds=3)
    old = types.ModuleType("old_search")
    old.__dict__.update({name: getattr(csearch, name) for name in ("Rules", "Searcher", "level_size", "build_level")})
    levels = egdb.load(variant, 5, old, tmp_path)
    assert [bytes(x) for x in levels[1:]] == v1_levels(variant, 5)[1:]
    assert all(egdb.level_path(tmp_path, variant, k, egdb.OLD_FORMAT).exists() for k in range(1, 6))
    assert "written in format v1: the C extension predates format v2 (`pip install -e .` rebuilds it)" in (
        capsys.readouterr().err)


def test_conversion_with_a_c_extension_older_than_v2_names_the_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah egdb convert` with a C extension built before format v2 says in one line how to rebuild it (exit 2),
    and leaves the v1 levels as they are."""
    from cli.main import main

    variant = Variant(houses=2, seeds=3)
    write_v1(tmp_path, variant, v1_levels(variant, 3))
    old = types.ModuleType("old_search")
    monkeypatch.setitem(sys.modules, "bots._search", old)
    assert main(["egdb", "convert", "--dir", str(tmp_path), "-H", "2"]) == 2
    assert capsys.readouterr().err == ("kalah egdb: the C extension predates format v2: `pip install -e .` rebuilds "
                                       "it\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        egdb.level_path(tmp_path, variant, k, egdb.OLD_FORMAT).name for k in range(1, 4)]

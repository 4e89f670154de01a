"""Endgame databases: identical from both twins, exact, cached, and safe to interrupt."""

from __future__ import annotations

import gc
import logging
import mmap
import os
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import platformdirs
import pytest

import bots._search as csearch
from bots import egdb, pysearch
from bots import engines as engines_mod
from bots.solver import Engine
from protocol import Capture, Leftover, Position, Variant, compile_variant

SMALL = Variant(houses=2, seeds=3)


def test_twins_build_identical_files(tmp_path: Path) -> None:
    """The C core and the Python twin write byte-identical levels."""
    for v in (SMALL, Variant(houses=2, seeds=3, capture=Capture.EMPTY, leftover=Leftover.EMPTIER),
              Variant(houses=3, seeds=1, extra_turn=False, leftover=Leftover.DISCARD)):
        c = egdb.load(v, 7, csearch, tmp_path / "c")
        p = egdb.load(v, 7, pysearch, tmp_path / "py")
        assert [bytes(x) for x in c] == [bytes(x) for x in p]
        assert len(c) == min(7, v.total_seeds) + 1
        for k in range(1, len(c)):
            assert egdb.level_path(tmp_path / "c", v, k).read_bytes() == bytes(c[k])


@pytest.mark.parametrize("capture", list(Capture))
def test_values_are_exact(capture: Capture, tmp_path: Path) -> None:
    """Every sampled entry equals the exact search value of its board without databases."""
    v = Variant(houses=2, seeds=4, capture=capture)
    levels = egdb.load(v, 9, csearch, tmp_path)
    rules = pysearch.Rules(compile_variant(v))
    plain = pysearch.Searcher(rules)
    rng = random.Random(7)
    for _ in range(300):
        houses = [rng.randint(0, 3) for _ in range(4)]
        if not any(houses[:2]) or not any(houses[2:]) or sum(houses) > 9:
            continue
        board = (houses[0], houses[1], 0, houses[2], houses[3], 0)
        k = sum(houses)
        entry = memoryview(egdb.values(csearch, v, k, levels[k])).cast("b")[pysearch.rank(rules, board)]
        assert entry == plain.search(board, -1, -100, 100)


@pytest.mark.parametrize("impl", ["c", "py"])
def test_search_with_databases_keeps_values(impl: str, tmp_path: Path) -> None:
    """Solving with databases gives the same values as without."""
    v = Variant(houses=3, seeds=3)
    pos = Position.initial(v)
    with_db = Engine(v, impl=impl, egdb_seeds=10, egdb_dir=tmp_path).solve(pos, per_move=True)
    without = Engine(v, impl=impl).solve(pos, per_move=True)
    assert with_db.per_move == without.per_move
    assert with_db.value == without.value == 2


def test_interrupted_build_resumes(tmp_path: Path) -> None:
    """An interrupt during a level leaves no partial file; the next load resumes and matches."""
    calls = {"n": 0}

    def failing(rules: Any, k: int, levels: Any, out: Any, start: int, stop: int) -> None:
        """Build normally, but interrupt inside level 5."""
        if k == 5:
            calls["n"] += 1
            raise KeyboardInterrupt
        csearch.build_level(rules, k, levels, out, start, stop)

    fake = types.ModuleType("fake_search")
    fake.__dict__.update(Rules=csearch.Rules, level_size=csearch.level_size, build_level=failing,
                         level_model=csearch.level_model, encode_level=csearch.encode_level)
    with pytest.raises(KeyboardInterrupt):
        egdb.load(SMALL, 8, fake, tmp_path)
    assert calls["n"] >= 1
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [egdb.level_path(tmp_path, SMALL, k).name for k in range(1, 5)]
    resumed = egdb.load(SMALL, 8, csearch, tmp_path)
    fresh = egdb.load(SMALL, 8, csearch, tmp_path / "fresh")
    assert [bytes(x) for x in resumed] == [bytes(x) for x in fresh]


def test_interrupted_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while writing a level removes the temporary file and keeps no level file."""

    def broken(src: Any, dst: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(egdb, "_rename", broken)
    with pytest.raises(KeyboardInterrupt):
        egdb.load(SMALL, 3, csearch, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_wrong_size_file_is_rebuilt(tmp_path: Path) -> None:
    """A level file of the wrong size is ignored and rebuilt."""
    good = [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path)]
    path = egdb.level_path(tmp_path, SMALL, 6)
    path.write_bytes(b"\x00" * 5)
    assert [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path)] == good
    assert path.read_bytes() == good[6]


def test_progress_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow build reports progress up to the full size of each level."""
    seen: list[tuple[int, int, int]] = []
    clock = iter(range(0, 10**6))
    monkeypatch.setattr(egdb, "monotonic", lambda: float(next(clock)))
    egdb.load(SMALL, 4, csearch, tmp_path, lambda k, done, size: seen.append((k, done, size)))
    assert {k for k, _, _ in seen} == {1, 2, 3, 4}
    assert all((k, size, size) in seen for k, _, size in seen)


def test_cache_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$KALAH_EGDB_DIR chooses the directory; otherwise the user cache directory is used."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    assert egdb.cache_dir() == tmp_path
    monkeypatch.delenv("KALAH_EGDB_DIR")
    assert egdb.cache_dir() == platformdirs.user_cache_path("kalah-arena") / "egdb"


def test_rules_that_change_values_name_the_files(tmp_path: Path) -> None:
    """Capture, extra turn and leftover rules get their own files; cyclic or majority-end none."""
    keys = {egdb.rule_key(v) for v in (
        SMALL, Variant(houses=2, capture=Capture.EMPTY), Variant(houses=2, extra_turn=False),
        Variant(houses=2, leftover=Leftover.DISCARD), Variant(houses=3))}
    assert len(keys) == 5
    assert egdb.rule_key(Variant(houses=2, seeds=5, pie=True)) == egdb.rule_key(SMALL)
    for v in (Variant(clockwise=True), Variant(relay=True), Variant(majority_end=True)):
        assert not egdb.applies(v)
        assert egdb.load(v, 10, csearch, tmp_path) == []


def test_loading_without_build_uses_only_levels_on_disk(tmp_path: Path) -> None:
    """With build=False nothing is written: the levels on disk are used, up to the first missing one."""
    assert egdb.load(SMALL, 8, csearch, tmp_path / "none", build=False) == []
    assert not (tmp_path / "none").exists()
    built = [bytes(x) for x in egdb.load(SMALL, 4, csearch, tmp_path)]
    assert [bytes(x) for x in egdb.load(SMALL, 8, csearch, tmp_path, build=False)] == built
    egdb.level_path(tmp_path, SMALL, 3).unlink()
    assert [bytes(x) for x in egdb.load(SMALL, 8, csearch, tmp_path, build=False)] == built[:3]
    assert len(list(tmp_path.iterdir())) == 3


def test_plan_lists_levels_and_what_is_present(tmp_path: Path) -> None:
    """The plan names every level up to the seeds with its size, and which files are complete."""
    egdb.load(SMALL, 3, csearch, tmp_path)
    egdb.level_path(tmp_path, SMALL, 2).write_bytes(b"\x00")
    levels = egdb.plan(SMALL, 5, tmp_path)
    assert [(lv.k, lv.size, lv.present) for lv in levels] == [
        (k, csearch.level_size(2, k), k in (1, 3)) for k in range(1, 6)]
    assert egdb.plan(Variant(clockwise=True), 5, tmp_path) == []
    assert egdb.build_seconds(10 * egdb.BUILD_RATE, threads=2) == 5.0


def test_cli_build_prints_the_plan_builds_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah egdb build` says what it will build, builds it, and builds only what is missing next time."""
    from cli.main import main

    args = ["egdb", "build", "--seeds", "6", "-H", "2", "--dir", str(tmp_path)]
    assert main([*args, "--dry-run"]) == 0
    assert "to build: 6 (levels 1..6)" in capsys.readouterr().out and list(tmp_path.iterdir()) == []
    assert main(args) == 0
    out = capsys.readouterr()
    assert "estimated time" in out.out and "level 6:" in out.err
    assert [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path, build=False)] == \
        [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path / "fresh")]
    egdb.level_path(tmp_path, SMALL, 5).unlink()
    assert main([*args[:3], "7", *args[4:]]) == 0
    assert "to build: 2 (levels 5..7)" in capsys.readouterr().out
    assert main(args) == 0
    assert "nothing to build" in capsys.readouterr().out
    assert main(["egdb", "build", "--seeds", "6", "--clockwise", "--dir", str(tmp_path)]) == 2
    assert main(["egdb", "build", "--seeds", "0", "--dir", str(tmp_path)]) == 2


def test_solve_says_what_it_builds_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah solve` prints the databases it is about to build (once: the next run finds them)."""
    from cli.main import main

    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    args = ["solve", "-H", "2", "-s", "2", "--egdb-seeds", "5"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "to build: 5 (levels 1..5)" in err and "kalah egdb build" in err
    assert main(args) == 0
    assert "to build" not in capsys.readouterr().err


def test_present_seeds_counts_the_levels_on_disk_without_a_gap(tmp_path: Path) -> None:
    """`present_seeds`: the largest N with levels 1..N complete on disk, at most the limit; 0 with none."""
    assert egdb.present_seeds(SMALL, tmp_path) == 0
    egdb.load(SMALL, 5, csearch, tmp_path)
    assert egdb.present_seeds(SMALL, tmp_path) == 5
    assert egdb.present_seeds(SMALL, tmp_path, limit=3) == 3
    egdb.level_path(tmp_path, SMALL, 4).write_bytes(b"\x00")
    assert egdb.present_seeds(SMALL, tmp_path) == 3


MAPPED = Variant(houses=6, seeds=3)
"""Levels 1..14 of Kalah(6,n): 5 MB, level 14 over 2 MiB."""
MAPPED_SEEDS = 14


@pytest.fixture(scope="module")
def mapped_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kalah(6,n) levels up to 14 seeds, built once for the mapping tests."""
    directory = tmp_path_factory.mktemp("egdb-mapped")
    egdb.load(MAPPED, MAPPED_SEEDS, csearch, directory)
    return directory


def _read_chars() -> int:
    """Bytes this process has read through system calls so far (/proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_opening_levels_reads_none_of_them(mapped_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening 5 MB of levels maps them: almost nothing is read; KALAH_EGDB_READ=1 reads them all."""
    size = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir))
    before = _read_chars()
    levels = egdb.load(MAPPED, MAPPED_SEEDS, csearch, mapped_dir, build=False)
    assert _read_chars() - before < 64 << 10
    assert len(levels) == MAPPED_SEEDS + 1 and sum(len(x) for x in levels) == size
    monkeypatch.setenv(egdb.READ_ENV, "1")
    before = _read_chars()
    read = egdb.load(MAPPED, MAPPED_SEEDS, csearch, mapped_dir, build=False)
    big = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir) if lv.bytes >= egdb.HUGE_PAGE)
    assert big and _read_chars() - before >= big  # the levels of 2 MiB and more are read
    assert [bytes(x) for x in read] == [bytes(x) for x in levels]


def _huge_advised(directory: Path) -> dict[str, bool]:
    """Each of this process's mappings of a file in `directory`: whether it is advised huge pages (smaps 'hg')."""
    found: dict[str, bool] = {}
    name = ""
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and ":" not in fields[0]:  # a mapping's header line
            name = fields[5] if len(fields) >= 6 and fields[5].startswith(str(directory)) else ""
        elif name and fields[0] == "VmFlags:":
            found[Path(name).name] = "hg" in fields[1:]
    return found


@pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE") or not Path("/sys/kernel/mm/transparent_hugepage").is_dir(),
                    reason="no transparent huge pages on this system")
def test_large_levels_are_mapped_with_huge_pages_advised(mapped_dir: Path) -> None:
    """Levels of 2 MiB and more are mapped advised to use huge pages (the page cache reads them in 2 MiB folios,
    mapped whole: few faults and TLB misses); smaller ones are not."""
    levels = egdb.load(MAPPED, MAPPED_SEEDS, csearch, mapped_dir, build=False)
    advised = _huge_advised(mapped_dir)
    for k in range(1, MAPPED_SEEDS + 1):
        name = egdb.level_path(mapped_dir, MAPPED, k).name
        assert advised[name] == (len(levels[k]) >= egdb.HUGE_PAGE), name
    assert advised[egdb.level_path(mapped_dir, MAPPED, MAPPED_SEEDS).name]


CHILD = """
import sys
from pathlib import Path
import bots._search as core
from bots import egdb
from protocol import Variant
levels = egdb.load(Variant(houses=6, seeds=3), 14, core, Path(sys.argv[1]), build=False)
searcher = core.Searcher(core.Rules(__import__("protocol").compile_variant(Variant(houses=6, seeds=3))), 16, levels)
print(sum(sum(memoryview(x)[::4096]) for x in levels[1:]), flush=True)  # every page touched
sys.stdin.read()
"""


def _file_pages(pid: int, directory: Path) -> tuple[int, int]:
    """(resident, shared) kB of a process's mappings of files in `directory` (/proc/PID/smaps)."""
    resident = shared = 0
    inside = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and ":" not in fields[0]:  # a mapping's header line
            inside = len(fields) >= 6 and fields[5].startswith(str(directory))
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1])
        elif inside and fields[0] in ("Shared_Clean:", "Shared_Dirty:"):
            shared += int(fields[1])
    return resident, shared


def test_two_processes_share_the_pages(mapped_dir: Path) -> None:
    """Two processes that open the levels and touch every page hold them as shared file pages, not copies."""
    size_kib = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir)) // 1024
    procs: list[subprocess.Popen[str]] = []
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-c", CHILD, str(mapped_dir)], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True))
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip().isdigit()
        for proc in procs:
            resident, shared = _file_pages(proc.pid, mapped_dir)
            assert resident >= size_kib * 9 // 10
            assert shared >= resident * 9 // 10
    finally:
        for proc in procs:
            proc.kill()
            proc.communicate()


def test_truncated_or_overwritten_level_is_a_typed_error(tmp_path: Path) -> None:
    """A level file cut short, with another header or with impossible values: `LevelFileError` naming it when only
    opening, a rebuild when building; the values are those of a fresh build."""
    good = [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path)]
    path = egdb.level_path(tmp_path, SMALL, 5)
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[:-3])  # truncated
    cut = f"{path.name}.*bytes where its header says.*kalah egdb build"
    with pytest.raises(egdb.LevelFileError, match=cut) as info:
        egdb.load(SMALL, 6, csearch, tmp_path, build=False)
    assert info.value.k == 5 and info.value.path == path
    path.write_bytes(b"\x7f" * len(data))  # the right size, no header
    with pytest.raises(egdb.LevelFileError, match="no v2 header"):
        egdb.load(SMALL, 6, csearch, tmp_path, build=False)
    assert [bytes(x) for x in egdb.load(SMALL, 6, csearch, tmp_path)] == good
    assert path.read_bytes() == data and path.stat().st_mode & 0o222 == 0  # rebuilt, read-only


def test_a_v1_level_with_impossible_values_is_a_typed_error(tmp_path: Path) -> None:
    """A v1 level (one byte a position) of the wrong size or with values no level holds: `LevelFileError` naming it."""
    path = egdb.level_path(tmp_path, SMALL, 1, egdb.OLD_FORMAT)
    path.write_bytes(b"\x7f" * pysearch.level_size(2, 1))
    with pytest.raises(egdb.LevelFileError, match=f"{path.name}.*values out of range for 1 seeds"):
        egdb.load(SMALL, 2, csearch, tmp_path, build=False)
    path.write_bytes(b"\x01" * 3)
    with pytest.raises(egdb.LevelFileError, match="3 bytes where level 1 has 4"):
        egdb.load(SMALL, 2, csearch, tmp_path, build=False)


def test_bots_play_below_a_damaged_level(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A server's bots open the levels below a damaged one, say so in the log, and still play proved moves."""
    from bots.engines import Engines
    from bots.players import PerfectPlayer

    v = Variant(houses=3, seeds=3)
    egdb.load(v, 8, csearch, tmp_path)
    path = egdb.level_path(tmp_path, v, 6)
    path.unlink()
    path.write_bytes(b"\x00" * 10)
    engines = Engines(egdb_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="bots.engines"):
        decision = PerfectPlayer(egdb_seeds=8, engines=engines).explain(Position.initial(v), 2.0)
    assert decision.exact
    assert any(path.name in r.getMessage() for r in caplog.records)
    with engines.borrow("x", v, 10, 8) as engine:
        assert len(engine.levels) == 6  # levels 0..5


def test_a_killed_builds_temporary_file_is_removed_by_the_next_build(tmp_path: Path) -> None:
    """A temporary level file whose builder is gone (killed: no rename, no cleanup) is deleted when the level is
    built again; one of a builder still running is left to it."""
    path = egdb.level_path(tmp_path, SMALL, 3)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    tmp_path.mkdir(exist_ok=True)
    left = path.with_name(f"{path.name}.tmp{dead}")
    running = path.with_name(f"{path.name}.tmp{os.getppid()}")
    left.write_bytes(b"\x00" * 7)
    running.write_bytes(b"\x00" * 7)
    egdb.load(SMALL, 3, csearch, tmp_path)
    assert not left.exists() and running.exists() and path.exists()


def _mapped_kib(directory: Path) -> int:
    """Resident kB of this process's mappings of files in `directory` (what is mapped into it, not merely cached)."""
    gc.collect()  # levels of earlier tests, still unreferenced, are unmapped first
    return _file_pages(os.getpid(), directory)[0]


@pytest.mark.parametrize("impl", ["c", "py"])
def test_warming_maps_every_page_of_the_levels(mapped_dir: Path, impl: str) -> None:
    """Opened, the levels are mapped but barely read in; `egdb.warm` brings every page in and maps it, so that no
    probe of a later search waits for the disk (on a cold page cache a first move took twice its second)."""
    core = csearch if impl == "c" else pysearch
    size = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir))
    levels = egdb.load(MAPPED, MAPPED_SEEDS, core, mapped_dir, build=False)
    assert _mapped_kib(mapped_dir) < size // 1024 * 3 // 4  # the first and last page of each level were checked
    assert egdb.warm(levels, core) == size
    assert _mapped_kib(mapped_dir) >= size // 1024 * 99 // 100
    del levels


@pytest.mark.parametrize("background", [False, True])
def test_engines_warm_the_levels_they_open(mapped_dir: Path, background: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether opened during a move (small sets) or by a background thread (`preload` returns once it is done),
    an engine's levels are in memory before its first search."""
    monkeypatch.setattr(engines_mod, "SYNC_LOAD_BYTES", 0 if background else 1 << 30)
    size = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir))
    engines = engines_mod.Engines(egdb_dir=mapped_dir)
    if background:
        assert engines.preload(MAPPED, MAPPED_SEEDS, timeout=30)
    with engines.borrow("perfect", MAPPED, 16, MAPPED_SEEDS) as engine:
        assert len(engine.levels) == MAPPED_SEEDS + 1
        assert _mapped_kib(mapped_dir) >= size // 1024 * 99 // 100


def test_levels_larger_than_half_the_memory_available_are_not_read_ahead(
        mapped_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Where the levels would take more than half the memory the kernel has available, they are opened but not read
    in ahead (that would push out what the machine holds), and the log says the first searches wait for the disk."""
    assert (egdb.available_memory() or 0) > 0  # /proc/meminfo's MemAvailable
    size = sum(lv.bytes for lv in egdb.plan(MAPPED, MAPPED_SEEDS, mapped_dir))
    monkeypatch.setattr(egdb, "available_memory", lambda: 2 * size - 2)
    monkeypatch.setattr(engines_mod, "SYNC_LOAD_BYTES", 0)
    engines = engines_mod.Engines(egdb_dir=mapped_dir)
    with caplog.at_level("WARNING", logger="bots.engines"):
        assert engines.preload(MAPPED, MAPPED_SEEDS, timeout=30)
    with engines.borrow("perfect", MAPPED, 16, MAPPED_SEEDS) as engine:
        assert len(engine.levels) == MAPPED_SEEDS + 1
        assert _mapped_kib(mapped_dir) < size // 1024 * 3 // 4
    assert any("not read into memory ahead" in r.getMessage() and "wait for the disk" in r.getMessage()
               for r in caplog.records)

"""Endgame databases: the exact value of every position with few seeds in play, cached on disk.

One file per seed count k (1..N) and rule set: one signed byte per house contents, indexed
by the combinatorial rank of the 2h houses from the mover's side, holding what the mover
still gains over the opponent under perfect play. Values do not depend on the stores, so
majority-end variants have no databases; clockwise and relay sowing can cycle, so they
have none either (see `applies`).

Files live in `$KALAH_EGDB_DIR`, or else in the user cache directory
(`platformdirs.user_cache_path("kalah-arena") / "egdb"`, `user_cache`). A level is built in memory,
written to a temporary file and renamed into place (read-only), so an interrupted build leaves
no partial file: the next run resumes from the first missing level.

Opening a level maps its file read-only: nothing is read until the search probes it, and every
process on the machine shares the same pages (the kernel's page cache), so a solve or a server
starts in milliseconds and ten processes do not hold ten copies; levels of 2 MiB and more are
advised to use huge pages, so the page cache reads them in 2 MiB folios that each process maps
whole (few page faults and TLB misses; `advise_huge`). A file of the wrong size or
with impossible values at its ends raises `LevelFileError` (when building, it is rebuilt).
`KALAH_EGDB_READ=1` reads levels of 2 MiB and more into private huge-page memory instead (the
former loader, kept for comparison: each process its own copy; huge pages may save TLB misses).

Databases are built by `kalah egdb build` (and `kalah solve`) only: hosted bots load with
`build=False` and use the levels already on disk, so no request can start a build.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

from bots import pysearch
from protocol.tables import compile_variant
from protocol.variant import Variant

if TYPE_CHECKING:
    from bots.core import SearchCore

ENV_DIR = "KALAH_EGDB_DIR"
FORMAT = "v1"
READ_ENV = "KALAH_EGDB_READ"
CHUNKS = 64
HUGE_PAGE = 2 << 20
UNKNOWN = 0x80  # -128 as a byte: not yet computed
BUILD_RATE = 2_500_000
"""Positions a second one thread of the C core builds, about (24 seeds, h=6: 1.25e9 in 234 s on two)."""
_rename = os.replace

Progress = Callable[[int, int, int], None]
"""Called as progress(level, ranks done, level size) while a level is built, and once when it is done."""


def cache_dir() -> Path:
    """The database directory: `$KALAH_EGDB_DIR` or the user cache directory."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return user_cache() / "egdb"


def user_cache() -> Path:
    """The arena's user cache directory (platformdirs is imported here, on first need: a process that finds its
    directories in the environment starts without it)."""
    import platformdirs

    return platformdirs.user_cache_path("kalah-arena")


def applies(variant: Variant) -> bool:
    """Whether databases exist for a variant: counter-clockwise, no relay, no majority end."""
    return not (variant.clockwise or variant.relay or variant.majority_end)


def rule_key(variant: Variant) -> str:
    """The part of a file name naming the rules that change database values."""
    extra = "extra" if variant.extra_turn else "alt"
    return f"h{variant.houses}-{variant.capture.value}-{extra}-{variant.leftover.value}"


def level_path(directory: Path, variant: Variant, k: int) -> Path:
    """The file of level k for a variant's rules."""
    return directory / f"{FORMAT}-kalah-{rule_key(variant)}-k{k:03d}.egdb"


def print_progress(level: int, done: int, size: int) -> None:
    """Default progress report on stderr."""
    end = "\n" if done == size else ""
    sys.stderr.write(f"\rendgame database level {level}: {100 * done // max(size, 1):3d}% of {size:,}{end}")
    sys.stderr.flush()


class LevelFileError(ValueError):
    """A database level file that is not a complete level (truncated, overwritten or unreadable)."""

    def __init__(self, path: Path, k: int, why: str) -> None:
        super().__init__(f"endgame database {path} ({why}): delete it and run `kalah egdb build` to rebuild it")
        self.path = path
        self.k = k


def read_mode() -> bool:
    """Whether levels are read into private memory (`KALAH_EGDB_READ=1`) instead of mapped."""
    return os.environ.get(READ_ENV, "") not in ("", "0")


def _bad_bytes(k: int) -> bytes:
    """The byte values no entry of level k can hold (a value lies in -k..k)."""
    return bytes(b for b in range(256) if not -k <= (b - 256 if b > 127 else b) <= k)


def _check(data: mmap.mmap, k: int, path: Path) -> None:
    """Refuse a level whose first or last page holds a value out of -k..k (cheap: two pages)."""
    head, tail = data[:4096], data[-4096:]
    bad = _bad_bytes(k)
    if len(head.translate(None, bad)) != len(head) or len(tail.translate(None, bad)) != len(tail):
        raise LevelFileError(path, k, f"values out of range for {k} seeds")


def advise_huge(mapped: mmap.mmap) -> None:
    """Advise huge pages for a mapped level of 2 MiB and more (where the system has them).

    The search probes the levels at random: with 4 KiB pages nearly every probe misses the TLB, and a
    cold process faults in the mapping 64 KiB at a time (about 80,000 faults, 0.4-0.8 s of system time
    for the 5.3 GiB of Kalah(6,4)'s 28 levels). Advised, the pages the kernel reads in for this mapping
    are 2 MiB folios, which this and every later process map whole (800 faults for level 28's 1.6 GiB):
    the page cache keeps the level that way for every process on the machine.
    """
    if len(mapped) >= HUGE_PAGE and hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages refuses the advice
            mapped.madvise(mmap.MADV_HUGEPAGE)


def _open_level(path: Path, k: int, size: int, copy: bool) -> mmap.mmap | None:
    """Map a complete level file read-only; None if there is no file, `LevelFileError` if it is not a level.

    A mapped level of 2 MiB and more is advised to use huge pages (`advise_huge`). With `copy`, such a
    level is read once into anonymous memory advised to use huge pages instead (each process its own copy).
    """
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LevelFileError(path, k, exc.strerror or "unreadable") from None
    with fh:
        got = os.fstat(fh.fileno()).st_size
        if got != size:
            raise LevelFileError(path, k, f"{got:,} bytes where level {k} has {size:,}")
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        _check(mapped, k, path)
        if not copy or size < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
            advise_huge(mapped)
            return mapped
        mapped.close()
        mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        mem.madvise(mmap.MADV_HUGEPAGE)
        with memoryview(mem) as view:
            done = 0
            while done < size:
                got = fh.readinto(view[done:])
                if not got:
                    raise LevelFileError(path, k, "shorter than it was a moment ago")
                done += got
        return mem


def _scratch(size: int) -> mmap.mmap | bytearray:
    """Writable memory for a level being built (huge pages when large: it is probed at random)."""
    if size < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return bytearray(size)
    mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mem.madvise(mmap.MADV_HUGEPAGE)
    return mem


def _alive(pid: int) -> bool:
    """Whether a process of this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(path: Path) -> None:
    """Delete the temporary files of `path` left by builds that were killed (their process is gone)."""
    for tmp in path.parent.glob(f"{path.name}.tmp*"):
        pid = tmp.name.rpartition(".tmp")[2]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _write_atomic(path: Path, data: mmap.mmap | bytearray) -> None:
    """Write `data` to a temporary file beside `path`, fsync it and rename it into place."""
    _remove_stale(path)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.chmod(0o444)  # mapped by every process that uses it: replaced by a rename only, never rewritten
        _rename(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _build(impl: SearchCore[Any], rules: Any, k: int, size: int, levels: list[Any],
           progress: Progress | None) -> mmap.mmap | bytearray:
    """Compute level k in memory by chunks of ranks, on every core when the core releases the GIL."""
    out = _scratch(size)
    block = bytes([UNKNOWN]) * min(size, 1 << 24)
    for at in range(0, size, len(block)):
        out[at : at + len(block)] = block[: size - at]
    step = max(1, -(-size // CHUNKS))
    chunks = [(start, min(size, start + step)) for start in range(0, size, step)]
    workers = 1 if impl is pysearch else max(1, min(len(chunks), os.cpu_count() or 1))
    t0 = monotonic()
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(impl.build_level, rules, k, levels, out, a, b) for a, b in chunks]
        try:
            for (a, b), future in zip(chunks, futures, strict=True):
                future.result()
                done += b - a
                if progress is not None and (done == size or monotonic() - t0 > 0.5):
                    progress(k, done, size)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return out


@dataclass(frozen=True)
class Level:
    """One level of a planned build: its seed count, file, size in bytes (= positions) and presence."""

    k: int
    path: Path
    size: int
    present: bool


def build_seconds(positions: int, threads: int | None = None) -> float:
    """A rough time to build `positions` database entries with the C core on `threads` threads (all cores)."""
    return positions / (BUILD_RATE * max(1, threads or os.cpu_count() or 1))


def plan(variant: Variant, seeds: int, directory: Path | None = None) -> list[Level]:
    """Levels 1..seeds of a variant's databases and which of them are already on disk."""
    if seeds <= 0 or not applies(variant):
        return []
    directory = directory or cache_dir()
    out = []
    for k in range(1, min(seeds, variant.total_seeds) + 1):
        size = pysearch.level_size(variant.houses, k)
        path = level_path(directory, variant, k)
        try:
            present = path.stat().st_size == size
        except OSError:
            present = False
        out.append(Level(k, path, size, present))
    return out


def present_seeds(variant: Variant, directory: Path | None = None, limit: int = 40) -> int:
    """The largest N (at most `limit`) whose levels 1..N are all on disk; 0 when level 1 is not."""
    seeds = 0
    for level in plan(variant, limit, directory):
        if not level.present:
            break
        seeds = level.k
    return seeds


def available_memory() -> int | None:
    """Bytes of memory the kernel counts as available to new work, page cache it can drop included (MemAvailable in
    /proc/meminfo); None where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def worth_warming(nbytes: int) -> bool:
    """Whether `nbytes` of levels may be read into memory ahead (`warm`): at most half the memory available, so that
    reading them does not push out what the machine holds (the levels themselves among it) for pages a search may
    never probe."""
    available = available_memory()
    return available is None or nbytes <= available // 2


def warm(levels: list[Any], impl: SearchCore[Any]) -> int:
    """Bring every page of loaded levels into memory (from the disk where the page cache lost them) and map it into
    this process, so that no probe during a move waits for the disk: the bytes read through.

    Mapped levels are read the way a search would fault them in, so a level advised huge pages comes in as 2 MiB
    folios (2.6-3.2 s for a rule set's 28 levels, 5.3 GiB, from this machine's disk, 10 s beside another search;
    0.24 s when cached: docs/benchmarks.md). The C core reads without the GIL.
    """
    return sum(impl.warm(level) for level in levels if len(level))


def load(
    variant: Variant,
    seeds: int,
    impl: SearchCore[Any],
    directory: Path | None = None,
    progress: Progress | None = None,
    build: bool = True,
    have: list[Any] | None = None,
) -> list[Any]:
    """Levels 0..seeds (level 0 is empty) for a variant, building missing ones on first need.

    With `build=False` nothing is built or created: the levels already on disk are used, up
    to the first missing one (the search needs every level below the largest it uses), and a
    file that is not a complete level raises `LevelFileError` (with `build`, it is rebuilt).
    `have` gives levels 0..m already loaded: they are kept and loading goes on from m + 1.
    """
    if seeds <= 0 or not applies(variant):
        return []
    if seeds > 120:
        raise ValueError("endgame databases go up to 120 seeds")
    seeds = min(seeds, variant.total_seeds)
    directory = directory or cache_dir()
    if build:
        directory.mkdir(parents=True, exist_ok=True)
    rules = impl.Rules(compile_variant(variant))
    h = variant.houses
    levels: list[Any] = list(have) if have else [b""]
    copy = read_mode()
    for k in range(len(levels), seeds + 1):
        size = impl.level_size(h, k)
        path = level_path(directory, variant, k)
        try:
            mapped = _open_level(path, k, size, copy)
        except LevelFileError:
            if not build:
                raise
            mapped = None  # rebuilt below and renamed over the bad file
        if mapped is not None:
            levels.append(mapped)
        elif build:
            out = _build(impl, rules, k, size, levels, progress)
            _write_atomic(path, out)
            levels.append(_open_level(path, k, size, copy) or out)  # the file's pages, not a private copy
            del out
        else:
            break
    return levels if len(levels) > 1 else []

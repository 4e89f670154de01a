"""Endgame databases: the exact value of every position with few seeds in play, cached on disk.

One file per seed count k (1..N) and rule set: one signed byte per house contents, indexed
by the combinatorial rank of the 2h houses from the mover's side, holding what the mover
still gains over the opponent under perfect play. Values do not depend on the stores, so
majority-end variants have no databases; clockwise and relay sowing can cycle, so they
have none either (see `applies`).

Files live in `$KALAH_EGDB_DIR`, or else in the user cache directory
(`platformdirs.user_cache_path("kalah-arena") / "egdb"`). A level is built in memory,
written to a temporary file and renamed into place, so an interrupted build leaves no
partial file: the next run resumes from the first missing level. Loaded with mmap (large
levels are read once into huge-page anonymous mappings).

Databases are built by `kalah egdb build` (and `kalah solve`) only: hosted bots load with
`build=False` and use the levels already on disk, so no request can start a build.
"""

from __future__ import annotations

import mmap
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

import platformdirs

from bots import pysearch
from protocol.tables import compile_variant
from protocol.variant import Variant

if TYPE_CHECKING:
    from bots.core import SearchCore

ENV_DIR = "KALAH_EGDB_DIR"
FORMAT = "v1"
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
    return platformdirs.user_cache_path("kalah-arena") / "egdb"


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


def _map(path: Path, size: int) -> mmap.mmap | None:
    """Map a complete level file, or None if it is missing or the wrong size.

    Small levels are mapped read-only from the file. Levels of 2 MiB and more are read once
    into anonymous memory advised to use huge pages: the search probes them at random, and
    4 KiB pages would cost a TLB miss on nearly every probe.
    """
    try:
        with path.open("rb") as fh:
            if os.fstat(fh.fileno()).st_size != size:
                return None
            if size < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            mem.madvise(mmap.MADV_HUGEPAGE)
            view = memoryview(mem)
            try:
                done = 0
                while done < size:
                    got = fh.readinto(view[done:])
                    if not got:
                        return None
                    done += got
            finally:
                view.release()
            return mem
    except OSError:  # missing or unreadable: not there
        return None


def _scratch(size: int) -> mmap.mmap | bytearray:
    """Writable memory for a level being built (huge pages when large: it is probed at random)."""
    if size < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return bytearray(size)
    mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mem.madvise(mmap.MADV_HUGEPAGE)
    return mem


def _write_atomic(path: Path, data: mmap.mmap | bytearray) -> None:
    """Write `data` to a temporary file beside `path`, fsync it and rename it into place."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
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
    to the first missing one (the search needs every level below the largest it uses).
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
    for k in range(len(levels), seeds + 1):
        size = impl.level_size(h, k)
        path = level_path(directory, variant, k)
        mapped = _map(path, size)
        if mapped is not None:
            levels.append(mapped)
        elif build:
            out = _build(impl, rules, k, size, levels, progress)
            _write_atomic(path, out)
            levels.append(out)
        else:
            break
    return levels if len(levels) > 1 else []

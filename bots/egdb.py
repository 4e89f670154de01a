"""Endgame databases: the exact value of every position with few seeds in play, cached on disk.

One file per seed count k (1..N) and rule set, holding for each house contents (indexed by the combinatorial rank
of the 2h houses from the mover's side) what the mover still gains over the opponent under perfect play. Values do
not depend on the stores, so majority-end variants have no databases; clockwise and relay sowing can cycle, so they
have none either (see `applies`).

File format v2 (`v2-kalah-RULES-kNNN.egdb`; the C core's `_search_level.h` reads it, `bots.pylevels` is its twin),
about 53% of v1's bytes for Kalah(6,n)'s levels 20-28:

- a 512-byte header: magic `KALAHEGD`, format 2, header size, h, k, shift, codes per block (122), blocks per
  group (512), positions, blocks, groups, exceptions, file size (`pylevels.FIELDS`, little-endian), the rule key
  (bytes 64-127), the predictor ((h+1)^2 bytes from byte 128) and a CRC-32 of the rest (bytes 508-511);
- blocks of 64 bytes (one cache line) for 122 consecutive ranks each: byte 0 the block's base (a signed byte),
  bytes 1-2 the exceptions of its group before it, bytes 3-63 one 4-bit code per rank (low nibble first);
- one 8-byte word per group of 512 blocks: the index of the group's first exception;
- one byte per exception.

A value v is stored as u = (v + k) >> shift (shift 1 when every value of the level has k's parity, as when all
seeds end in the stores; 0 where leftovers are discarded), and u as the code c = u - base - predictor[e], where e
counts the empty houses of the mover (times h + 1) plus the opponent's: the predictor is the level's mean u of the
positions with that count. The base is the lowest of the 15 values holding most of the block's residuals. A code
of 15 escapes: u is then the exception at the group's first exception plus bytes 1-2 plus the escapes before it in
the block. So a probe reads one cache line, and for an escape (0.01% of the positions at 16 seeds, 0.8% at 26) the
group's word and the exception.

The former format v1 (`v1-kalah-RULES-kNNN.egdb`, one signed byte per rank) is still read where no v2 file is;
`kalah egdb convert` (bots/egdb_convert.py) turns such levels into v2, each checked value by value before its v1
file goes.

Files live in `$KALAH_EGDB_DIR`, or else in the user cache directory
(`platformdirs.user_cache_path("kalah-arena") / "egdb"`, `user_cache`). A level is built in memory at one byte a
rank, encoded, written to a temporary file and renamed into place (read-only), so an interrupted build leaves
no partial file: the next run resumes from the first missing level.

Opening a level maps its file read-only: nothing is read until the search probes it, and every
process on the machine shares the same pages (the kernel's page cache), so a solve or a server
starts in milliseconds and ten processes do not hold ten copies; levels of 2 MiB and more are
advised to use huge pages, so the page cache reads them in 2 MiB folios that each process maps
whole (few page faults and TLB misses; `advise_huge`). A v2 file whose header (magic, format, rule key, level,
sizes, checksum), group words or exceptions at its ends are not those of its level, or a v1 file of the wrong size
or with impossible values at its ends, raises `LevelFileError` (when building, it is rebuilt).
`KALAH_EGDB_READ=1` reads levels of 2 MiB and more into private huge-page memory instead (the
former loader, kept for comparison: each process its own copy; huge pages may save TLB misses).

Databases are built by `kalah egdb build` (and `kalah solve`) only: hosted bots load with
`build=False` and use the levels already on disk, so no request can start a build.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import os
import struct
import sys
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

from bots import pylevels, pysearch
from protocol.tables import compile_variant
from protocol.variant import Capture, Leftover, Variant

if TYPE_CHECKING:
    from bots.core import SearchCore

ENV_DIR = "KALAH_EGDB_DIR"
FORMAT = "v2"
OLD_FORMAT = "v1"
READ_ENV = "KALAH_EGDB_READ"
CHUNKS = 64
HUGE_PAGE = 2 << 20
UNKNOWN = 0x80  # -128 as a byte: not yet computed
BUILD_RATE = 2_500_000
"""Positions a second one thread of the C core builds, about (24 seeds, h=6: 1.25e9 in 234 s on two)."""
_rename = os.replace

Progress = Callable[[int, int, int], None]
"""Called as progress(level, ranks done, level size) while a level is built, and once when it is written."""


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


def build_command(variant: Variant, seeds: int) -> str:
    """The `kalah egdb build` command that builds a rule set's databases up to `seeds` seeds in play (the flags of the
    rules that change their values; `-H` only where the houses are not six)."""
    flags = [f"--seeds {seeds}"] + ([] if variant.houses == 6 else [f"-H {variant.houses}"])
    if variant.capture is not Capture.STANDARD:
        flags.append(f"--capture {variant.capture.value}")
    if not variant.extra_turn:
        flags.append("--no-extra-turn")
    if variant.leftover is not Leftover.OWNER:
        flags.append(f"--leftover {variant.leftover.value}")
    return "kalah egdb build " + " ".join(flags)


def level_path(directory: Path, variant: Variant, k: int, fmt: str = FORMAT) -> Path:
    """The file of level k for a variant's rules, in format `fmt` (v2, or the former v1)."""
    return directory / f"{fmt}-kalah-{rule_key(variant)}-k{k:03d}.egdb"


def v2_bytes(positions: int, exceptions: int = 0) -> int:
    """The size of a v2 level file of that many positions and exceptions."""
    blocks = pylevels.blocks_of(positions)
    return pylevels.HEADER + blocks * 64 + pylevels.groups_of(blocks) * 8 + exceptions


def disk_bytes(positions: int) -> int:
    """About the bytes of a v2 level of that many positions (exceptions counted at 2%, as at 28-30 seeds)."""
    return v2_bytes(positions, positions // 50)


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
        self.why = why


def read_mode() -> bool:
    """Whether levels are read into private memory (`KALAH_EGDB_READ=1`) instead of mapped."""
    return os.environ.get(READ_ENV, "") not in ("", "0")


def _bad_bytes(k: int) -> bytes:
    """The byte values no entry of level k can hold (a value lies in -k..k)."""
    return bytes(b for b in range(256) if not -k <= (b - 256 if b > 127 else b) <= k)


def check_v1(data: mmap.mmap, k: int, path: Path) -> None:
    """Refuse a v1 level whose first or last page holds a value out of -k..k (cheap: two pages)."""
    head, tail = data[:4096], data[-4096:]
    bad = _bad_bytes(k)
    if len(head.translate(None, bad)) != len(head) or len(tail.translate(None, bad)) != len(tail):
        raise LevelFileError(path, k, f"values out of range for {k} seeds")


def header(variant: Variant, k: int, shift: int, pred: bytes, exceptions: int) -> bytes:
    """The 512-byte header of a v2 level: magic, format, sizes, rule key, predictor and a CRC-32 of the rest."""
    positions = pysearch.level_size(variant.houses, k)
    blocks = pylevels.blocks_of(positions)
    out = bytearray(pylevels.HEADER)
    pylevels.FIELDS.pack_into(out, 0, pylevels.MAGIC, pylevels.VERSION, pylevels.HEADER, variant.houses, k, shift,
                              pylevels.CODES, pylevels.GROUP, positions, blocks, pylevels.groups_of(blocks),
                              exceptions, v2_bytes(positions, exceptions))
    key = rule_key(variant).encode()
    out[64 : 64 + len(key)] = key
    out[pylevels.PREDICTOR_AT : pylevels.PREDICTOR_AT + len(pred)] = pred
    struct.pack_into("<I", out, pylevels.HEADER - 4, zlib.crc32(out[: pylevels.HEADER - 4]))
    return bytes(out)


def _check_v2(data: mmap.mmap, variant: Variant, k: int, path: Path) -> None:
    """Refuse a v2 level whose header, group words or exceptions at its ends are not those of level k of these rules
    (cheap: the header, the group words and a page of exceptions at each end)."""
    h = variant.houses
    if len(data) < pylevels.HEADER:
        raise LevelFileError(path, k, f"{len(data):,} bytes, shorter than a header")
    head = data[: pylevels.HEADER]
    if head[:8] != pylevels.MAGIC:
        raise LevelFileError(path, k, "not a database level file: no v2 header")
    if struct.unpack_from("<I", head, pylevels.HEADER - 4)[0] != zlib.crc32(head[: pylevels.HEADER - 4]):
        raise LevelFileError(path, k, "damaged header (checksum)")
    f = pylevels.FIELDS.unpack_from(head)
    key = head[64:128].rstrip(b"\0").decode("ascii", "replace")
    if key != rule_key(variant) or f[3] != h or f[4] != k:
        raise LevelFileError(path, k, f"the header names rule set {key} level {f[4]}")
    positions = pysearch.level_size(h, k)
    exceptions = f[11]
    if (f[1:3] != (pylevels.VERSION, pylevels.HEADER) or f[5] > 1 or f[6:8] != (pylevels.CODES, pylevels.GROUP)
            or f[8] != positions or exceptions > positions):
        raise LevelFileError(path, k, "a header of another format or level size")
    if len(data) != v2_bytes(positions, exceptions) or f[12] != len(data):
        raise LevelFileError(path, k, f"{len(data):,} bytes where its header says {v2_bytes(positions, exceptions):,}")
    blocks = pylevels.blocks_of(positions)
    at = pylevels.HEADER + blocks * 64
    words = memoryview(data[at : at + pylevels.groups_of(blocks) * 8]).cast("Q")
    if words[0] != 0 or any(b < a for a, b in itertools.pairwise(words)) or words[-1] > exceptions:
        raise LevelFileError(path, k, "a damaged exception table")
    top = k if f[5] else 2 * k
    start = len(data) - exceptions
    for page in (data[start : start + 4096], data[max(start, len(data) - 4096) :]):
        if page and max(page) > top:
            raise LevelFileError(path, k, f"exceptions out of range for {k} seeds")


def map_file(path: Path) -> tuple[Any, mmap.mmap] | None:
    """The open file and its read-only mapping; None if there is no file."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LevelFileError(path, 0, exc.strerror or "unreadable") from None
    if os.fstat(fh.fileno()).st_size == 0:
        fh.close()
        raise LevelFileError(path, 0, "an empty file")
    return fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


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


def open_level(directory: Path, variant: Variant, k: int, copy: bool) -> mmap.mmap | None:
    """Map a complete level file read-only, v2 or else v1; None if there is none, `LevelFileError` if the file
    is not a level.

    A mapped level of 2 MiB and more is advised to use huge pages (`advise_huge`). With `copy`, such a
    level is read once into anonymous memory advised to use huge pages instead (each process its own copy).
    """
    path = level_path(directory, variant, k)
    opened = None
    try:
        opened = map_file(path)
        if opened is not None:
            _check_v2(opened[1], variant, k, path)
        else:
            path = level_path(directory, variant, k, OLD_FORMAT)
            opened = map_file(path)
            if opened is None:
                return None
            size = pysearch.level_size(variant.houses, k)
            if len(opened[1]) != size:
                raise LevelFileError(path, k, f"{len(opened[1]):,} bytes where level {k} has {size:,}")
            check_v1(opened[1], k, path)
    except LevelFileError as exc:
        if opened is not None:
            opened[1].close()
            opened[0].close()
        raise LevelFileError(path, k, exc.why) from None
    fh, mapped = opened
    with fh:
        size = len(mapped)
        if not copy or size < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
            advise_huge(mapped)
            return mapped
        mapped.close()
        mem = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        mem.madvise(mmap.MADV_HUGEPAGE)
        with memoryview(mem) as view:
            fh.seek(0)
            done = 0
            while done < size:
                got = fh.readinto(view[done:])
                if not got:
                    raise LevelFileError(path, k, "shorter than it was a moment ago")
                done += got
        return mem


def scratch(size: int) -> mmap.mmap | bytearray:
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


def _write_atomic(path: Path, *chunks: Any) -> None:
    """Write `chunks` (buffers) to a temporary file beside `path`, fsync it and rename it into place."""
    _remove_stale(path)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.chmod(0o444)  # mapped by every process that uses it: replaced by a rename only, never rewritten
        _rename(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class Encoded:
    """A level encoded to format v2: its header, its body (the buffer and the bytes of it used) and exceptions."""

    header: bytes
    body: Any
    used: int
    exceptions: int


def encode(impl: SearchCore[Any], variant: Variant, k: int, values: Any) -> Encoded:
    """Level k's values (one signed byte per rank) encoded to format v2 by the core `impl`."""
    h = variant.houses
    shift, pred = impl.level_model(h, k, values)
    positions = pysearch.level_size(h, k)
    body = mmap.mmap(-1, pylevels.body_room(positions), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    exceptions = impl.encode_level(h, k, values, shift, pred, body)
    used = v2_bytes(positions, exceptions) - pylevels.HEADER
    return Encoded(header(variant, k, shift, pred, exceptions), body, used, exceptions)


def write_level(path: Path, impl: SearchCore[Any], variant: Variant, k: int, values: Any) -> int:
    """Encode level k's values to format v2 and write them atomically to `path`: the exceptions."""
    enc = encode(impl, variant, k, values)
    view = memoryview(enc.body)
    used = view[: enc.used]
    try:
        _write_atomic(path, enc.header, used)
    finally:
        used.release()
        view.release()
        enc.body.close()
    return enc.exceptions


def _build(impl: SearchCore[Any], rules: Any, k: int, size: int, levels: list[Any],
           progress: Progress | None) -> mmap.mmap | bytearray:
    """Compute level k in memory by chunks of ranks, on every core when the core releases the GIL."""
    out = scratch(size)
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
                if progress is not None and done < size and monotonic() - t0 > 0.5:
                    progress(k, done, size)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return out


@dataclass(frozen=True)
class Level:
    """One level of a planned build: its seed count, file, positions (its size in format v1), presence and bytes on
    disk (of its file when present, else about what a build writes: `disk_bytes`)."""

    k: int
    path: Path
    size: int
    present: bool
    bytes: int


def _on_disk(directory: Path, variant: Variant, k: int) -> tuple[Path, int] | None:
    """Level k's file and its bytes when a complete one is on disk (cheap: a v2 file's size is the one its header
    gives, a v1 file's the level's positions); None when there is none."""
    path = level_path(directory, variant, k)
    with contextlib.suppress(OSError), path.open("rb") as fh:
        head = fh.read(pylevels.HEADER)
        size = os.fstat(fh.fileno()).st_size
        if len(head) == pylevels.HEADER and head[:8] == pylevels.MAGIC:
            return (path, size) if pylevels.FIELDS.unpack_from(head)[12] == size else None
        return None
    old = level_path(directory, variant, k, OLD_FORMAT)
    with contextlib.suppress(OSError):
        size = old.stat().st_size
        if size == pysearch.level_size(variant.houses, k):
            return old, size
    return None


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
        found = _on_disk(directory, variant, k)
        if found is None:
            out.append(Level(k, level_path(directory, variant, k), size, False, disk_bytes(size)))
        else:
            out.append(Level(k, found[0], size, True, found[1]))
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
        try:
            mapped = open_level(directory, variant, k, copy)
        except LevelFileError:
            if not build:
                raise
            mapped = None  # rebuilt below and renamed over the bad file
        if mapped is not None:
            levels.append(mapped)
        elif build:
            out = _build(impl, rules, k, size, levels, progress)
            if hasattr(impl, "encode_level"):
                write_level(level_path(directory, variant, k), impl, variant, k, out)
            else:  # a C extension built before format v2 (the package reinstalled without rebuilding it)
                sys.stderr.write(f"endgame database level {k}: written in format v1: the C extension predates "
                                 "format v2 (`pip install -e .` rebuilds it)\n")
                _write_atomic(level_path(directory, variant, k, OLD_FORMAT), out)
            del out
            if progress is not None:
                progress(k, size, size)  # the level is on disk
            levels.append(open_level(directory, variant, k, copy))  # the file's pages, not a private copy
        else:
            break
    return levels if len(levels) > 1 else []


def values(impl: SearchCore[Any], variant: Variant, k: int, level: Any) -> bytearray:
    """Every value of a level's bytes (format v1 or v2) decoded by the core `impl`, one signed byte per rank."""
    out = bytearray(pysearch.level_size(variant.houses, k))
    impl.decode_level(variant.houses, k, level, out)
    return out

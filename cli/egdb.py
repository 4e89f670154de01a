"""`kalah egdb build` and `kalah egdb convert`: build a rule set's endgame databases ahead, with a plan, progress
and resumption; convert levels of the former format v1 to v2.

Only the operator builds databases: hosted bots use the levels already on disk and never
start a build. The command first prints what it will build (levels, positions, disk and
memory, a time estimate), then builds the missing levels on every core with progress. Each
level is written to a temporary file and renamed, so an interrupted build (Ctrl-C or SIGTERM
stop it within a second, `cli.interrupts`) loses at most the level in progress; running the
command again resumes from there.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import time
from pathlib import Path

from bots import egdb, egdb_convert
from cli.interrupts import run_stoppable
from cli.variant_args import add_variant_args, variant_from_args
from protocol import KalahError, Variant

MAX_SEEDS = 40
MIB = 1 << 20
MAX_SEEDS_PER_HOUSE = 24


def configure(parser: argparse.ArgumentParser) -> None:
    """Register `kalah egdb build` and its flags."""
    sub = parser.add_subparsers(dest="egdb_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="build the databases of a rule set up to N seeds in play",
                           description="Build endgame databases up to N seeds in play (resumable). "
                                       "The variant flags choose the rule set; seeds per house do not matter.",
                           conflict_handler="resolve")
    add_variant_args(build)
    # replaces the variant's seeds per house: databases hold every position of up to N seeds in play
    build.add_argument("-s", "--seeds", dest="egdb_seeds", type=int, required=True, metavar="N",
                       help=f"every position with up to N seeds in play (1..{MAX_SEEDS})")
    build.add_argument("--dir", type=Path, default=None,
                       help=f"database directory (default: ${egdb.ENV_DIR} or the user cache directory)")
    build.add_argument("--dry-run", action="store_true", help="print the plan and build nothing")
    convert = sub.add_parser("convert", help="convert a rule set's levels of format v1 to v2 (about half the bytes)",
                             description="Convert every level of format v1 of a rule set to format v2, level by "
                                         "level (resumable): a v1 file is deleted only once its v2 file is in place "
                                         "and decodes to the same values. The variant flags choose the rule set.")
    add_variant_args(convert)
    convert.add_argument("--dir", type=Path, default=None,
                         help=f"database directory (default: ${egdb.ENV_DIR} or the user cache directory)")


def duration(seconds: float) -> str:
    """`0.4 s`, `42 s`, `3 min 20 s` or `2 h 5 min`."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _bytes(n: int) -> str:
    """`512 bytes`, `3.4 MiB`, `1.2 GiB`."""
    size, unit = float(n), "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            break
        size /= 1024
    return f"{n} bytes" if unit == "bytes" else f"{size:,.1f} {unit}"


def rule_set(variant: Variant, seeds: int) -> Variant:
    """The variant with enough seeds per house to hold `seeds` in play (the start does not change the databases)."""
    per_house = min(MAX_SEEDS_PER_HOUSE, max(variant.seeds, -(-seeds // (2 * variant.houses))))
    return variant.with_options(seeds=per_house, time_control=None)


def describe(variant: Variant, levels: list[egdb.Level], directory: Path) -> str:
    """The plan in words: what is there, what will be built, how big and about how long."""
    missing = [lv for lv in levels if not lv.present]
    total = sum(lv.bytes for lv in levels)
    lines = [f"endgame databases of rule set {egdb.rule_key(variant)}: positions of 1..{len(levels)} seeds in play",
             f"directory: {directory}"]
    if not missing:
        lines.append(f"all {len(levels)} levels are present ({_bytes(total)}): nothing to build")
        return "\n".join(lines)
    todo = sum(lv.size for lv in missing)
    lines += [
        f"present: {len(levels) - len(missing)} levels; "
        f"to build: {len(missing)} (levels {missing[0].k}..{missing[-1].k})",
        f"to build: {todo:,} positions, about {_bytes(sum(lv.bytes for lv in missing))} on disk (all levels: "
        f"{_bytes(total)}; memory while building: the largest level at a byte a position, "
        f"{_bytes(max(lv.size for lv in missing))})",
        f"estimated time: about {duration(egdb.build_seconds(todo))} on this machine's cores",
    ]
    return "\n".join(lines)


class Reporter:
    """Progress of the whole build: the level being built, the share done, the time left."""

    def __init__(self, levels: list[egdb.Level]) -> None:
        self.total = sum(lv.size for lv in levels if not lv.present)
        self.estimate = egdb.build_seconds(self.total)
        self.finished = 0
        self.t0 = self.level_t0 = time.monotonic()

    def left(self, so_far: int) -> float:
        """Seconds left: the plan's estimate at first, then the rate measured so far."""
        elapsed = time.monotonic() - self.t0
        if elapsed < 2 or not so_far:
            return max(0.0, self.estimate - elapsed)
        return elapsed / so_far * (self.total - so_far)

    def __call__(self, k: int, done: int, size: int) -> None:
        """One progress report from the builder (on a terminal as it goes; elsewhere once a level is done)."""
        if done != size and not sys.stderr.isatty():
            return
        so_far = self.finished + done
        level, whole = 100 * done // max(size, 1), 100 * so_far // max(self.total, 1)
        line = f"level {k}: {level:3d}%   all: {whole:3d}%   about {duration(self.left(so_far))} left"
        if done == size:
            now = time.monotonic()
            line = f"level {k}: {size:,} positions in {duration(now - self.level_t0)}   all: {whole:3d}%"
            self.finished += size
            self.level_t0 = now
        sys.stderr.write(f"\r{line:<64}" + ("\n" if done == size else ""))
        sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """`kalah egdb build` or `kalah egdb convert`."""
    if args.egdb_command == "convert":
        return run_convert(args)
    return run_build(args)


def converted_line(item: egdb_convert.Converted) -> str:
    """One converted level in words: bytes before and after, and the share of exceptions."""
    return (f"level {item.k}: {item.v1_bytes:,} bytes (v1) -> {item.v2_bytes:,} bytes (v2, "
            f"{100 * item.v2_bytes / max(item.v1_bytes, 1):.1f}%), {item.exceptions:,} exceptions "
            f"({100 * item.exceptions / max(item.positions, 1):.2f}% of the positions)")


def _databased(args: argparse.Namespace, seeds: int | None = None) -> Variant | None:
    """The rule set the variant flags name (its seeds sized for `seeds` in play when given), or None once a line said
    why it has no databases."""
    try:
        variant = variant_from_args(args)
        if seeds is not None:
            variant = rule_set(variant, seeds)
    except KalahError as exc:
        print(f"kalah egdb: {exc}", file=sys.stderr)
        return None
    if not egdb.applies(variant):
        print("kalah egdb: clockwise, relay and majority-end variants have no endgame databases", file=sys.stderr)
        return None
    return variant


def run_convert(args: argparse.Namespace) -> int:
    """Convert a rule set's v1 levels to v2, printing each level as it is done; exit 1 on a damaged v1 file."""
    variant = _databased(args)
    if variant is None:
        return 2
    directory = args.dir or egdb.cache_dir()
    todo = [k for k in range(1, 121) if egdb.level_path(directory, variant, k, egdb.OLD_FORMAT).exists()]
    if not todo:
        print(f"no v1 levels of rule set {egdb.rule_key(variant)} in {directory}: nothing to convert")
        return 0
    core = importlib.import_module("bots._search")
    if not hasattr(core, "encode_level"):
        print("kalah egdb: the C extension predates format v2: `pip install -e .` rebuilds it", file=sys.stderr)
        return 2
    print(f"converting {len(todo)} v1 levels of rule set {egdb.rule_key(variant)} in {directory} to v2", flush=True)

    def say(item: egdb_convert.Converted) -> None:
        """One line a level, as soon as it is converted."""
        print(converted_line(item), flush=True)

    t0 = time.monotonic()
    try:
        done = run_stoppable(lambda: egdb_convert.convert(variant, core, directory, say), "kalah egdb")
    except egdb.LevelFileError as exc:
        print(f"kalah egdb: {exc}", file=sys.stderr)
        return 1
    before, after = sum(x.v1_bytes for x in done), sum(x.v2_bytes for x in done)
    print(f"converted {len(done)} levels: {_bytes(before)} -> {_bytes(after)} "
          f"({100 * after / max(before, 1):.1f}%) in {duration(time.monotonic() - t0)}")
    return 0


def run_build(args: argparse.Namespace) -> int:
    """Print the plan, then build what is missing; exit 2 on bad input or too little disk space."""
    if not 1 <= args.egdb_seeds <= MAX_SEEDS:
        print(f"kalah egdb: --seeds must be 1..{MAX_SEEDS}", file=sys.stderr)
        return 2
    variant = _databased(args, args.egdb_seeds)
    if variant is None:
        return 2
    directory = args.dir or egdb.cache_dir()
    levels = egdb.plan(variant, args.egdb_seeds, directory)
    print(describe(variant, levels, directory), flush=True)
    todo = sum(lv.size for lv in levels if not lv.present)
    if args.dry_run or not todo:
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(directory).free
    need = sum(lv.bytes for lv in levels if not lv.present)
    if free < need:
        print(f"kalah egdb: {need / MIB:,.1f} MiB needed, {free / MIB:,.1f} MiB free in {directory}", file=sys.stderr)
        return 2
    core = importlib.import_module("bots._search")
    t0 = time.monotonic()
    run_stoppable(lambda: egdb.load(variant, args.egdb_seeds, core, directory, Reporter(levels)), "kalah egdb")
    print(f"built {todo:,} positions in {duration(time.monotonic() - t0)}")
    return 0

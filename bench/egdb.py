"""Database level formats compared: bytes per level in v1 and v2, and the search's node rate with each.

Run: `python bench/egdb.py [--dir D] [--levels 20-28] [--capture empty]` prints, for each level of the rule set on
disk, its bytes in format v1 and in v2 (a v1 level is encoded in memory, nothing is written), the ratio and the share
of exceptions. `--rate [--seeds N] [--copy-dir T] [--rounds R]` then copies levels 1..N into the other format in T
(v2 levels decoded to v1, or v1 levels encoded to v2; a temporary directory by default, deleted afterwards; the
levels in D are only read) and solves the same positions
(the start of Kalah(h,n), `-H h --per-house n`, Kalah(6,4) by default, and the boards after its
first sowings that pass the turn) on one thread with the v1 levels and with the v2 levels,
alternated in the same run: seconds and nodes per second of each (the nodes are the same: the values are).
Timings mean nothing while a database or book build runs beside it: the bench says so when one does.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import bots._search as csearch
from bots import egdb, pylevels
from bots.solver import Engine
from protocol import Capture, Position, Variant

MIB = 1 << 20


def level_range(text: str) -> range:
    """`20-28` or `24`: the levels to measure."""
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def measure(variant: Variant, k: int, directory: Path) -> tuple[int, int, int] | None:
    """(v1 bytes, v2 bytes, exceptions) of level k on disk (a v1 level encoded in memory); None when it is not there."""
    positions = csearch.level_size(variant.houses, k)
    new = egdb.level_path(directory, variant, k)
    if new.exists():
        with new.open("rb") as fh:
            head = fh.read(pylevels.HEADER)
        return positions, new.stat().st_size, pylevels.FIELDS.unpack_from(head)[11]
    old = egdb.level_path(directory, variant, k, egdb.OLD_FORMAT)
    if not old.exists():
        return None
    levels = egdb.load(variant, k, csearch, directory, build=False)
    if len(levels) <= k:
        return None
    enc = egdb.encode(csearch, variant, k, levels[k])
    enc.body.close()
    return positions, pylevels.HEADER + enc.used, enc.exceptions


def sizes(variant: Variant, levels: range, directory: Path) -> None:
    """Print each level's bytes in v1 and v2, the ratio and the exceptions, and the totals."""
    print(f"rule set {egdb.rule_key(variant)} in {directory}: bytes per level, format v1 and v2")
    print(f"{'level':>5} {'v1 bytes':>15} {'v2 bytes':>15} {'v2/v1':>7} {'exceptions':>13} {'share':>7}")
    total1 = total2 = 0
    for k in levels:
        got = measure(variant, k, directory)
        if got is None:
            continue
        v1, v2, exc = got
        total1, total2 = total1 + v1, total2 + v2
        print(f"{k:>5} {v1:>15,} {v2:>15,} {v2 / v1:>7.1%} {exc:>13,} {exc / v1:>7.2%}", flush=True)
    if total1:
        print(f"{'all':>5} {total1:>15,} {total2:>15,} {total2 / total1:>7.1%}   "
              f"({total1 / 2**30:,.2f} GiB -> {total2 / 2**30:,.2f} GiB)")


def busy() -> list[str]:
    """The database and book builds running on the machine (timings beside them mean nothing)."""
    found = subprocess.run(["pgrep", "-af", "egdb build|book build"], capture_output=True, text=True, check=False)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def positions_to_solve(variant: Variant) -> list[Position]:
    """The start and the boards after each first sowing that passes the turn."""
    start = Position.initial(variant)
    out = [start]
    for bin_number in start.legal_bins():
        after = start.play(bin_number)
        if not after.over and after.to_move != start.to_move:
            out.append(after)
    return out


def solve_all(levels: list[Any], variant: Variant, tt_bits: int,
              boards: list[Position]) -> tuple[float, int, list[int]]:
    """Seconds, nodes and values of solving every position on one thread on a fresh table with these levels."""
    engine = Engine(variant, tt_log2=tt_bits, workers=1, levels=levels)
    seconds, nodes, values = 0.0, 0, []
    for pos in boards:
        engine.searcher.clear()
        sol = engine.solve(pos)
        seconds += sol.seconds
        nodes += sol.nodes
        values.append(sol.value)
    return seconds, nodes, values


def rate(variant: Variant, seeds: int, directory: Path, copy_dir: Path | None, rounds: int, tt_bits: int) -> None:
    """Solve the same positions with the levels on disk and copies of them in the other format, alternated; print
    the rates of v1 and v2."""
    game = variant
    found = egdb.load(game, seeds, csearch, directory, build=False)
    if len(found) <= seeds:
        raise SystemExit(f"bench/egdb.py: --rate needs levels 1..{seeds} of {egdb.rule_key(game)} in {directory}")
    v2 = [bytes(level[:8]) == pylevels.MAGIC for level in found[1:]]
    if any(v2) and not all(v2):
        raise SystemExit(f"bench/egdb.py: --rate needs levels 1..{seeds} all in one format in {directory}")
    temporary = copy_dir is None
    target = Path(tempfile.mkdtemp(prefix="egdb-copies-")) if copy_dir is None else copy_dir
    try:
        target.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        for k in range(1, seeds + 1):
            if all(v2) and not egdb.level_path(target, game, k, egdb.OLD_FORMAT).exists():
                decoded = egdb.values(csearch, game, k, found[k])
                egdb._write_atomic(egdb.level_path(target, game, k, egdb.OLD_FORMAT), decoded)
            elif not all(v2) and not egdb.level_path(target, game, k).exists():
                egdb.write_level(egdb.level_path(target, game, k), csearch, game, k, found[k])
        copies = egdb.load(game, seeds, csearch, target, build=False)
        old, new = (copies, found) if all(v2) else (found, copies)
        print(f"{'v1' if all(v2) else 'v2'} copies of levels 1..{seeds} in {target} ({time.perf_counter() - t0:.1f} s):"
              f" {sum(len(x) for x in old) / MIB:,.0f} MiB in v1, {sum(len(x) for x in new) / MIB:,.0f} MiB in v2")
        egdb.warm(old, csearch)
        egdb.warm(new, csearch)
        boards = positions_to_solve(game)
        running = busy()
        if running:
            print("WARNING: builds are running beside this bench, the timings mean nothing: " + "; ".join(running))
        times: dict[str, list[float]] = {"v1": [], "v2": []}
        for r in range(rounds):
            for name, levels in (("v1", old), ("v2", new)) if r % 2 == 0 else (("v2", new), ("v1", old)):
                seconds, nodes, values = solve_all(levels, game, tt_bits, boards)
                times[name].append(seconds)
                print(f"  round {r + 1} {name}: {seconds:.2f} s, {nodes:,} nodes, {nodes / seconds:,.0f} nodes/s, "
                      f"values {values}", flush=True)
        for name in ("v1", "v2"):
            med = statistics.median(times[name])
            print(f"{name}: median {med:.2f} s, {nodes / med:,.0f} nodes/s over {rounds} rounds")
        ratio = statistics.median(times["v2"]) / statistics.median(times["v1"])
        print(f"v2 takes {ratio:.3f}x the time of v1 on the same {len(boards)} solves ({nodes:,} nodes each round)")
    finally:
        del old
        if temporary:
            shutil.rmtree(target, ignore_errors=True)


def main() -> None:
    """Parse the arguments and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=None, help="database directory (default: the cache directory)")
    parser.add_argument("--levels", type=level_range, default=range(1, 41), help="levels to measure: 20-28 or 24")
    parser.add_argument("--capture", choices=[c.value for c in Capture], default="standard")
    parser.add_argument("-H", "--houses", type=int, default=6)
    parser.add_argument("--per-house", type=int, default=4, help="--rate: seeds per house of the game solved")
    parser.add_argument("--rate", action="store_true", help="also compare the node rate with v1 and v2 levels")
    parser.add_argument("--seeds", type=int, default=20, help="--rate: levels 1..N (default 20)")
    parser.add_argument("--copy-dir", type=Path, default=None,
                        help="--rate: where the copies in the other format go (kept; default: a temporary directory)")
    parser.add_argument("--rounds", type=int, default=4, help="--rate: rounds of each format, alternated")
    parser.add_argument("--tt-bits", type=int, default=22)
    args = parser.parse_args()
    variant = Variant(houses=args.houses, seeds=args.per_house, capture=Capture(args.capture))
    directory = args.dir or egdb.cache_dir()
    sizes(variant, args.levels, directory)
    if args.rate:
        rate(variant, args.seeds, directory, args.copy_dir, args.rounds, args.tt_bits)


if __name__ == "__main__":
    main()

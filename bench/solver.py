"""Benchmark of the solver: C vs Python nodes per second, full solves of Kalah(6,3) and Kalah(6,4), perfect play.

Run: `python bench/solver.py [--egdb-seeds N] [--tt-bits B] [--workers W] [--games 6,3:standard,...]`
(Kalah(6,4) as the issue measures it: `--egdb-seeds 26 --games 6,4:standard,6,4:empty --no-twins`;
Kalah(6,5): `--games 6,5:standard,6,5:empty --egdb-seeds 28 --tt-bits 24 --no-twins --no-baseline`), or
`python bench/solver.py --perfect [--seeds 5 --book-dir DIR] [--egdb-seeds 0 --judge]` for the perfect bot's games
in Kalah(6,N) (both rule sets) against itself and other bots: results, how each of its moves was found and (`--judge`)
whether each kept the value (bench/perfect.py; `--egdb-seeds 0`: the bot without databases, from the books alone,
judged with the databases on disk), or
`python bench/solver.py --cold-start [--runs N] [--value | --per-move] [--solve-args "-H 6 -s 5 --moves '2 1'"]
[--baseline REV | --levels N,M] [--page-cache huge|small]`: wall time, search time, processor time, nodes and
memory (peak, private, file pages) of whole `kalah solve --no-book --json` processes with the database levels on
disk (none: one line saying how to build them), the value's solves and then every first move's (`--value`,
`--per-move`: one of them), then each setup's nodes on one thread: the databases mapped (now) against read into
each process (before), or with `--baseline REV` git revision REV's code (a temporary worktree, its C extension
built there) against this tree's, or with `--levels N,M` this tree's with the databases up to N seeds against up to
M, runs alternated in the same run (`--page-cache`: the levels first dropped from the page cache and read back in
2 MiB or 4 KiB folios; each setup prints how much it mapped as 2 MiB pages); or `python bench/solver.py --where
[--solve-args ARGS] [--workers W] [--value]`: where such a solve's time goes (imports, opening the databases, the
value's searches each counted apart on W threads, one by default, and unless `--value` each first move's nodes and
seconds on one thread).
Databases are cached in $KALAH_EGDB_DIR (or the user cache directory); the first run builds
them (24 seeds: about 1.2 GB per rule set, minutes on two cores) and reports the build
time, later runs load them. The value is solved on every thread over one table, and again on one
thread as the baseline; per-move values one move per thread (a thread with no move left lent to one still solved), or
for boards of more than 48 seeds (a 2**24-entry table) one move after another on every thread over the one table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import mmap
import os
import random
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import perfect
from trees import ROOT, baseline_tree

from bots import egdb
from bots.core import pit_to_bin
from bots.solver import Engine, SearchDone, auto_egdb_seeds, auto_tt_bits, implementation, relative_board
from cli import solve as solve_cli
from cli.variant_args import variant_from_args
from protocol import Capture, KalahError, Position, Sow, Variant, compile_variant

GOAL_VALUE_S = 1.0
GOAL_PER_MOVE_S = 1.0
"""Kalah(6,4), each rule set: the goals for the value alone and for every first move (from a cold start)."""
GOAL_LARGE_VALUE_S = 60.0
GOAL_LARGE_PER_MOVE_S = 600.0
"""Kalah(6,5) and larger, 28-seed databases: the goals, the value in a minute and every first move in ten."""
GOAL_BUILD_S = 600.0


def sample_boards(variant: Variant, count: int, seed: int = 5) -> list[tuple[int, ...]]:
    """Mover-relative boards from random games, 6 to 20 plies in."""
    rng = random.Random(seed)
    out: list[tuple[int, ...]] = []
    while len(out) < count:
        pos = Position.initial(variant)
        for _ in range(rng.randint(6, 20)):
            if pos.over:
                break
            pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
        if not pos.over:
            out.append(relative_board(pos))
    return out


def nodes_per_second(impl: str, boards: list[tuple[int, ...]], depth: int, variant: Variant) -> tuple[int, float]:
    """(nodes, seconds) of fresh depth-limited full-window searches of every board."""
    module = implementation(impl)
    rules = module.Rules(compile_variant(variant))
    nodes, t0 = 0, time.perf_counter()
    for board in boards:
        searcher = module.Searcher(rules, 18)
        searcher.search(board, depth, -1000, 1000)
        nodes += searcher.nodes
    return nodes, time.perf_counter() - t0


def compare_twins(depth: int) -> None:
    """Print nodes per second of both twins on the same Kalah(6,4) positions, and the ratio."""
    v = Variant()
    boards = sample_boards(v, 12)
    c_nodes, c_s = nodes_per_second("c", boards, depth, v)
    p_nodes, p_s = nodes_per_second("py", boards, depth, v)
    c_rate, p_rate = c_nodes / c_s, p_nodes / p_s
    print(f"nodes/s on 12 Kalah(6,4) positions, depth {depth}:")
    print(f"  C      {c_rate:>14,.0f}  ({c_nodes:,} nodes, {c_s:.2f} s)")
    print(f"  Python {p_rate:>14,.0f}  ({p_nodes:,} nodes, {p_s:.2f} s)")
    print(f"  ratio  {c_rate / p_rate:>14,.0f}x")


def rates(stats: dict[str, int]) -> str:
    """Table hit and cut-off rates, database reads and enhanced transposition cut-offs of a searcher's counts."""
    probes = max(stats["probes"], 1)
    return (f"table probes {stats['probes']:,}: {stats['hits'] / probes:.1%} hits, {stats['cuts'] / probes:.1%} "
            f"cut-offs; database reads {stats['egdb']:,} ({stats['egdb'] / max(stats['nodes'], 1):.2f} a node); "
            f"enhanced transposition cut-offs {stats['etc']:,}")


def by_seeds(searcher: object, rows: int = 8) -> str:
    """The C core's counts by seeds in play (`Searcher.by_seeds`) for the `rows` seed counts with the most interior
    nodes: their share of the interior nodes, and how those nodes ended (enhanced transposition cut-off, table
    cut-off, cut-off by a searched move and how often by the first one); empty for the Python twin."""
    counts = getattr(searcher, "by_seeds", None)
    if counts is None:
        return ""
    nodes = counts["nodes"]
    total = max(sum(nodes), 1)
    top = sorted(range(len(nodes)), key=lambda k: -nodes[k])[:rows]
    return "interior nodes by seeds in play: " + "; ".join(
        f"{k}: {nodes[k] / total:.0%} (ETC {counts['etc'][k] / nodes[k]:.0%}, "
        f"table {counts['cuts'][k] / nodes[k]:.0%}, "
        f"searched cut {counts['cutoffs'][k] / nodes[k]:.0%}, first move "
        f"{counts['first_move_cutoffs'][k] / max(counts['cutoffs'][k], 1):.0%} of them)"
        for k in sorted(top) if nodes[k])


def goals(variant: Variant) -> tuple[float, float]:
    """The issue's goals (seconds) for the value and for every first move of a game of this size."""
    return (GOAL_VALUE_S, GOAL_PER_MOVE_S) if variant.total_seeds <= 48 else (GOAL_LARGE_VALUE_S, GOAL_LARGE_PER_MOVE_S)


def full_solve(variant: Variant, seeds: int, tt_bits: int, workers: int | None = None, baseline: bool = True) -> None:
    """Build/load the databases, solve the start on every thread (and, as the baseline, on one thread on a
    fresh table), then every first move; print the figures."""
    t0 = time.perf_counter()
    engine = Engine(variant, tt_log2=tt_bits, egdb_seeds=seeds, progress=egdb.print_progress, workers=workers)
    build_s = time.perf_counter() - t0
    size = sum(len(level) for level in engine.levels)
    goal_value, goal_moves = goals(variant)
    for level in engine.levels[1:]:
        sum(memoryview(level)[:: 1 << 12])  # the databases' pages in memory before anything is timed
    value = engine.solve(Position.initial(variant))
    print(f"{variant.text()}: value {value.value:+d}  best {value.best}  in {value.seconds:.2f} s "
          f"(goal {goal_value:.0f} s) on {engine.workers} threads, {value.nodes:,} nodes, "
          f"{value.nodes / max(value.seconds, 1e-9):,.0f} nodes/s", flush=True)
    print(f"  {rates(engine.searcher.stats)}", flush=True)
    if line := by_seeds(engine.searcher):
        print(f"  {line}", flush=True)
    if baseline and engine.workers > 1:
        alone = Engine(variant, tt_log2=tt_bits, workers=1, levels=engine.levels)
        one = alone.solve(Position.initial(variant))
        print(f"  baseline on one thread: value {one.value:+d} in {one.seconds:.2f} s, {one.nodes:,} nodes; "
              f"{engine.workers} threads are {one.seconds / max(value.seconds, 1e-9):.2f}x as fast "
              f"with {value.nodes / max(one.nodes, 1):.2f}x the nodes", flush=True)
        del alone
    t1 = time.perf_counter()
    sol = engine.solve(Position.initial(variant), per_move=True)
    solve_s = time.perf_counter() - t1
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_move = "  ".join(f"{b}:{v:+d}" for b, v in sol.per_move.items())
    print(f"  every first move: value {sol.value:+d}  best {sol.best}  per move {per_move}")
    print(f"  every first move {solve_s:.2f} s (goal {goal_moves:.0f} s), {sol.nodes:,} nodes on "
          f"{engine.workers} threads ({sol.nodes / max(solve_s, 1e-9):,.0f} nodes/s); "
          f"value and every first move {value.seconds + solve_s:.1f} s")
    print(f"  databases up to {len(engine.levels) - 1} seeds: {size / 2**20:,.0f} MiB, "
          f"built or loaded in {build_s:.1f} s (goal {GOAL_BUILD_S:.0f} s to build); max RSS {rss_mib:,.0f} MiB")


COLD_START = "-H 6 -s 4"
"""The position of the cold starts measured by default: Kalah(6,4)'s start (`kalah solve` arguments)."""


@dataclass
class Setup:
    """What one series of cold starts runs: a name, the source tree run from, and extra environment."""

    name: str
    root: Path
    env: dict[str, str]
    args: tuple[str, ...] = ()
    """Arguments added to the `kalah solve` command line (e.g. `--egdb-seeds 29`)."""


@dataclass
class ColdStart:
    """One `kalah` process: wall time, peak resident memory, and the most private and file-backed memory (MiB)."""

    wall: float
    peak: float
    anon: float
    file: float
    out: str
    cpu: float = 0.0
    """Seconds of processor time (user and system, every thread): what a loaded machine changes least."""
    huge: float = 0.0
    """MiB of the file pages mapped whole as 2 MiB pages (FilePmdMapped): the page cache's folios for the levels."""


def _memory(pid: int) -> tuple[int, int, int]:
    """(peak resident, private anonymous, file-backed) kB of a running process (/proc/PID/status)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    peak, anon, file = (int(fields.get(k, "0 kB").split()[0]) for k in ("VmHWM", "RssAnon", "RssFile"))
    return peak, anon, file


def _file_pmd(pid: int) -> int:
    """kB of a running process's file pages mapped as 2 MiB pages (/proc/PID/smaps_rollup FilePmdMapped)."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("FilePmdMapped:"):
            return int(line.split()[1])
    return 0


def cold_start(argv: list[str], setup: Setup) -> ColdStart:
    """One `kalah ARGV` process run from `setup`'s tree, its memory sampled as it runs; exit with its one-line
    error if it fails."""
    env = dict(os.environ, **setup.env)
    env["PYTHONPATH"] = os.pathsep.join([str(setup.root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    t0 = time.perf_counter()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-m", "cli.main", *argv, *setup.args], stdout=subprocess.PIPE,
                                stderr=err, text=True, env=env, cwd=setup.root)
        most = [0, 0, 0]
        huge, samples = 0, 0
        try:
            while proc.poll() is None:
                with contextlib.suppress(OSError, ValueError):
                    most = [max(a, b) for a, b in zip(most, _memory(proc.pid), strict=True)]
                    if samples % 10 == 9:  # smaps_rollup walks the page tables: now and then only
                        huge = max(huge, _file_pmd(proc.pid))
                samples += 1
                time.sleep(0.02)
            out = proc.stdout.read() if proc.stdout is not None else ""
        finally:
            proc.kill()
            proc.wait()
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            err.seek(0)
            why = (err.read().strip().splitlines() or ["no message"])[-1]
            raise SystemExit(f"kalah {shlex.join([*argv, *setup.args])} ({setup.name}) failed with status "
                             f"{proc.returncode}: {why}")
    peak, anon, file = (x / 1024 for x in most)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
    return ColdStart(wall, peak, anon, file, out.strip(), cpu, huge / 1024)


def open_seconds(variant: Variant, read: bool) -> float:
    """Seconds to open a rule set's levels on disk in this process, mapped or (`read`) read in."""
    os.environ[egdb.READ_ENV] = "1" if read else "0"
    try:
        t0 = time.perf_counter()
        levels = egdb.load(variant, egdb.present_seeds(variant), implementation("c"), build=False)
        seconds = time.perf_counter() - t0
        del levels
        return seconds
    finally:
        del os.environ[egdb.READ_ENV]


def solve_target(solve_args: str) -> tuple[Position, list[str]]:
    """The position and `kalah solve` arguments of a cold start: `solve_args` searched (`--no-book --json`) with
    the database levels on disk; `SystemExit` with one line when the position is not one or there are no levels
    (a solve would want to build them)."""
    parser = argparse.ArgumentParser(prog="kalah solve")
    solve_cli.configure(parser)
    words = shlex.split(solve_args)
    args = parser.parse_args(words)
    try:
        variant = variant_from_args(args)
        position = solve_cli.start_position(variant, args.moves, args.position)
    except KalahError as exc:
        raise SystemExit(f"--solve-args {solve_args!r}: {exc}") from None
    seeds = egdb.present_seeds(variant)
    if egdb.applies(variant) and seeds == 0:
        command = egdb.build_command(variant, auto_egdb_seeds(variant))
        raise SystemExit(f"no endgame databases of {variant.text()} in {egdb.cache_dir()}: build them first "
                         f"(`{command}`) or point ${egdb.ENV_DIR} at them")
    extra = [] if args.egdb_seeds is not None else ["--egdb-seeds", str(seeds)]
    return position, ["solve", *words, *extra, "--no-book", "--json"]


def _median_line(name: str, runs_of: list[ColdStart], files_shared: bool) -> str:
    """One setup's medians: wall time and its search share, nodes, and memory (and what ten processes hold)."""
    wall, peak = statistics.median(r.wall for r in runs_of), statistics.median(r.peak for r in runs_of)
    anon, file = statistics.median(r.anon for r in runs_of), statistics.median(r.file for r in runs_of)
    search = statistics.median(float(json.loads(r.out)["seconds"]) for r in runs_of)
    nodes = statistics.median(int(json.loads(r.out)["nodes"]) for r in runs_of)
    ten = 10 * anon + (file if files_shared else 10 * file)
    huge, cpu = statistics.median(r.huge for r in runs_of), statistics.median(r.cpu for r in runs_of)
    return (f"  {name:<34}: whole process {wall:6.2f} s (of it the search {search:6.2f} s, the rest "
            f"{wall - search:5.2f} s; processor time {cpu:5.2f} s), {nodes:,.0f} nodes; peak RSS {peak:6,.0f} MiB, "
            f"of it private {anon:6,.0f} "
            f"and file pages {file:6,.0f} ({huge:,.0f} mapped as 2 MiB pages); ten such processes hold about "
            f"{ten:7,.0f} MiB")


def cold_starts(runs: int, argv: list[str], variant: Variant, setups: list[Setup], loaders: bool) -> None:
    """Medians of `kalah ARGV` processes of each setup, runs alternated so that a loaded machine weighs on all
    alike, then each setup's nodes on one thread (which do not depend on the load); with `loaders`, also the time
    to open the levels read in and mapped in this process."""
    seeds = egdb.present_seeds(variant)
    size = sum(lv.bytes for lv in egdb.plan(variant, seeds)) / 2**20
    print(f"`kalah {shlex.join(argv)}`, {seeds} database levels ({size:,.0f} MiB) on disk in {egdb.cache_dir()}, "
          f"median of {runs} runs each, load average {os.getloadavg()[0]:.1f} at the start:", flush=True)
    found: dict[str, list[ColdStart]] = {setup.name: [] for setup in setups}
    for _ in range(runs):
        for setup in setups:
            found[setup.name].append(cold_start(argv, setup))
    for setup in setups:
        print(_median_line(setup.name, found[setup.name], setup.env.get(egdb.READ_ENV) != "1"), flush=True)
    if loaders:
        for read in (True, False):
            opened = statistics.median(open_seconds(variant, read) for _ in range(runs))
            print(f"  opening the levels {'read in' if read else 'mapped'}: {opened * 1000:,.1f} ms")
    for setup in setups:
        one = cold_start([*argv, "--threads", "1"], setup)
        print(f"  {setup.name:<34}: {int(json.loads(one.out)['nodes']):,} nodes on one thread", flush=True)
    print(f"  load average {os.getloadavg()[0]:.1f} at the end; answer: {found[setups[-1].name][0].out}")


def recache(variant: Variant, folios: str) -> None:
    """Drop the page cache's copy of the rule set's levels on disk (the pages no process maps) and read them back in
    2 MiB folios (`huge`: through mappings advised huge pages, as the loader maps them) or in 4 KiB ones (`small`:
    read without read-ahead, as a loader that gives no advice leaves them after its random probes)."""
    t0 = time.perf_counter()
    paths = [lv.path for lv in egdb.plan(variant, egdb.present_seeds(variant))]
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            if folios == "small":
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
                while os.read(fd, 1 << 20):
                    pass
                continue
            with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mapped:
                egdb.advise_huge(mapped)
                sum(memoryview(mapped)[:: 1 << 16])
        finally:
            os.close(fd)
    print(f"the page cache's copy of {len(paths)} levels dropped and read back in {folios} folios in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


def import_seconds(runs: int) -> float:
    """Median seconds a fresh interpreter takes to import what `kalah solve` imports (its start-up less Python's)."""
    code = "import time; t = time.perf_counter(); import cli.main, cli.solve; print(time.perf_counter() - t)"
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                  check=True, cwd=ROOT).stdout) for _ in range(runs))


def value_searches(engine: Engine, position: Position, searches: list[SearchDone]) -> list[str]:
    """Each search call of a solve of `position`'s value in words: what it asked (the start, or a first move, at least
    some value for the mover; depth-limited ones are the first guess's, on a table of their own), the answer, its
    nodes and seconds."""
    board = relative_board(position)
    kids = {after: (pit_to_bin(position, pit), gain, extra) for pit, after, gain, extra, over in engine.children(board)}
    lines = []
    for done in searches:
        yes = done.value >= done.beta
        if done.board == board:
            what, need = "the start", done.beta
        elif done.board in kids:
            b, gain, extra = kids[done.board]
            what = f"sowing {b}"
            need, yes = (gain + done.beta, yes) if extra else (gain - done.alpha, not yes)
        else:
            what, need = "another board", done.beta
        guess = f"first guess (depth {done.depth}), " if done.depth >= 0 else ""
        lines.append(f"{guess}{what} at least {need:+d}? {'yes' if yes else 'no'}: {done.nodes:,} nodes in "
                     f"{done.seconds:.2f} s")
    return lines


def where_time_goes(solve_args: str, runs: int, workers: int, value_only: bool) -> None:
    """Where a cold `kalah solve --per-move` spends its time: imports, opening the databases, then the value's
    searches (each counted apart) on `workers` threads and each first move's search on one thread, each move from an
    empty table as the threads of a solve do (not with `value_only`)."""
    position, _ = solve_target(solve_args)
    variant = position.variant
    print(f"{variant.text()}, position {position.fen()}: imports {import_seconds(runs) * 1000:,.0f} ms "
          f"(median of {runs})", flush=True)
    t0 = time.perf_counter()
    engine = Engine(variant, tt_log2=auto_tt_bits(variant), egdb_seeds=egdb.present_seeds(variant), build_egdb=False,
                    workers=workers)
    print(f"  opening {len(engine.levels) - 1 if engine.levels else 0} database levels and the engine: "
          f"{(time.perf_counter() - t0) * 1000:,.1f} ms", flush=True)
    searches: list[SearchDone] = []
    engine.on_search = searches.append
    value = engine.solve(position)
    engine.on_search = None
    print(f"  the value {value.value:+d} on {workers} thread{'s' if workers > 1 else ''}: {value.nodes:,} nodes in "
          f"{value.seconds:.2f} s (the first guess's not counted); its searches, in the mover's margin of the seeds "
          "in play:", flush=True)
    for line in value_searches(engine, position, searches):
        print(f"    {line}")
    if line := by_seeds(engine.searcher):
        print(f"  {line}", flush=True)
    if not value_only:
        engine.workers = 1
        board = relative_board(position)
        moves = []
        for pit, after, gain, extra, over in engine.children(board):
            engine.searcher.clear()
            n0, t1 = engine.searcher.nodes, time.perf_counter()
            engine.child_value((after, gain, extra, over), -1, 0, 0.0)
            moves.append((pit_to_bin(position, pit), engine.searcher.nodes - n0, time.perf_counter() - t1))
        total = sum(n for _, n, _ in moves)
        print("  every first move, each from an empty table: "
              + "  ".join(f"{b}: {n:,} ({s:.2f} s)" for b, n, s in moves)
              + f"; {total:,} nodes, the largest {max(n for _, n, _ in moves) / max(total, 1):.0%} of them")
    print(f"  load average {os.getloadavg()[0]:.1f} (times depend on it, nodes do not)")


def main() -> None:
    """Print the solver's figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--egdb-seeds", type=int, default=24, help="databases up to this many seeds in play")
    parser.add_argument("--tt-bits", type=int, default=22, help="log2 of table entries per searcher")
    parser.add_argument("--depth", type=int, default=15, help="depth of the nodes/s comparison")
    parser.add_argument("--workers", type=int, default=None, help="threads of each solve (default: every core)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one-thread solve of the value")
    parser.add_argument("--no-twins", action="store_true", help="skip the C-against-Python nodes/s comparison")
    parser.add_argument("--games", default="6,3:standard,6,4:standard,6,4:empty",
                        help="comma-separated h,s:capture list")
    parser.add_argument("--perfect", action="store_true",
                        help="instead: the perfect bot against itself and other bots (bench/perfect.py)")
    perfect.add_arguments(parser)
    parser.add_argument("--cold-start", action="store_true",
                        help="instead: whole `kalah solve` processes with the databases mapped and read in")
    parser.add_argument("--runs", type=int, default=3, help="runs of each setup for --cold-start")
    parser.add_argument("--per-move", action="store_true",
                        help="for --cold-start: only the solves of every first move (default: the value's, then those)")
    parser.add_argument("--value", action="store_true",
                        help="for --cold-start and --where: only the solves of the value")
    parser.add_argument("--solve-args", default=COLD_START, metavar="ARGS",
                        help='for --cold-start: the position solved, as `kalah solve` arguments, e.g. '
                             '"-H 6 -s 5 --moves \'2 1\'"')
    parser.add_argument("--baseline", metavar="REV",
                        help="for --cold-start: the same processes run from git revision REV too (a temporary "
                             "worktree with its C extension built), alternating with this tree's: before and after")
    parser.add_argument("--levels", metavar="N,M",
                        help="for --cold-start: this tree's processes with the databases up to N seeds against up to "
                             "M (`--egdb-seeds`), alternated: what one more level buys")
    parser.add_argument("--where", action="store_true",
                        help="instead: where a cold solve of --solve-args spends its time (imports, databases, "
                             "the value's searches each counted apart on --workers threads (default one), then each "
                             "first move on one thread unless --value)")
    parser.add_argument("--page-cache", choices=["huge", "small"], default=None,
                        help="for --cold-start: first drop the levels from the page cache and read them back in "
                             "2 MiB folios (what the loader's advice gives) or 4 KiB ones (what a loader without it "
                             "leaves), then measure")
    args = parser.parse_args()
    if args.where:
        where_time_goes(args.solve_args, args.runs, args.workers or 1, args.value)
        return
    if args.cold_start:
        position, solve_argv = solve_target(args.solve_args)
        variant = position.variant
        series = [[]] if args.value else [["--per-move"]] if args.per_move else [[], ["--per-move"]]
        if args.page_cache:
            recache(variant, args.page_cache)
        with contextlib.ExitStack() as stack:
            if args.levels:
                setups = [Setup(f"databases up to {n} seeds", ROOT, {}, ("--egdb-seeds", n))
                          for n in args.levels.split(",")]
            elif args.baseline:
                before = stack.enter_context(baseline_tree(args.baseline))
                setups = [Setup(f"before ({args.baseline})", before, {}), Setup("after (this tree)", ROOT, {})]
            else:
                setups = [Setup("read into each process (before)", ROOT, {egdb.READ_ENV: "1"}),
                          Setup("mapped, shared (now)", ROOT, {egdb.READ_ENV: "0"})]
            for extra in series:
                cold_starts(args.runs, solve_argv + extra, variant, setups,
                            loaders=not args.baseline and not args.levels and not extra)
        value_goal, moves_goal = goals(variant)
        print(f"goals for {variant.text()} (a quiet machine, from a cold start): the value in under {value_goal:g} s "
              f"and every first move in under {moves_goal:g} s of wall time")
        return
    if args.perfect:
        perfect.run(args)
        return
    if not args.no_twins:
        compare_twins(args.depth)
    items = args.games.split(",")
    for i in range(0, len(items), 2):
        h, rest = items[i], items[i + 1]
        s, _, capture = rest.partition(":")
        variant = Variant(houses=int(h), seeds=int(s), capture=Capture(capture or "standard"))
        full_solve(variant, args.egdb_seeds, args.tt_bits, args.workers, not args.no_baseline)


if __name__ == "__main__":
    main()

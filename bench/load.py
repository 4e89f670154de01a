"""Load benchmark of the game server: N concurrent matches of random players plus spectators.

Starts `kalah serve` in a child process with a fresh database, opens 2N player connections
and S spectator connections, and lets every pair play random legal actions as fast as the
acks come back (a new match as soon as one ends) for a fixed time. Prints durable actions
per second, the latency from sending an action to the opponent receiving its event (p50,
p99), the server's CPU and memory, and errors. Then it kills the server with SIGKILL and
checks that every acknowledged action is in the database. Clients connect from loopback
addresses 127.x.y.1, each in a /24 of its own, under the server's per-address and per-network caps: 20 to
an address, fewer when their tables together would play faster than the address's message budget.

    python bench/load.py --matches 200 --spectators 200 --seconds 20
    python bench/load.py --backup          # also a kalah backup halfway, restored and checked after
    python bench/load.py --baseline main   # also main's server, in turn with this tree's: before/after
    python bench/load.py --matches 200 --rate 2000   # the latency at about 2,000 actions/s
    python bench/load.py --rate 2000 --stalls /tmp/st  # where the slow actions' time went (bench/stall_probe.py)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import stall_probe
import stall_report
from harness import ROOT, FrozenHeap, LeanConnection, action_msg, health, loopback, proc_usage, quantile, spawn_server
from trees import baseline_tree

from cli.serve import fast_loop_factory
from protocol import Game, Swap, Variant, parse_action


@dataclass
class Stats:
    """What the clients measured."""

    acked: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    sent_at: dict[tuple[str, int], float] = field(default_factory=dict)
    durable: list[tuple[str, int]] = field(default_factory=list)
    games: int = 0
    tables: int = 0
    events_seen_by_spectators: int = 0
    slow: list[tuple[float, float]] = field(default_factory=list)
    """(sent, received) of each action slower than `stall_report.SLOW_S`."""


class Player:
    """A scripted player: keeps its own copy of the game from the events and moves at once."""

    def __init__(self, conn: LeanConnection, name: str, stats: Stats, rng: random.Random,
                 think_s: float = 0.0, paced: bool = False) -> None:
        self.conn, self.name, self.stats, self.rng, self.think_s = conn, name, stats, rng, think_s
        self.paced = paced
        """Count the pause from when the previous action was sent, not from when its event came (`--rate`)."""
        self.thinking: set[asyncio.Task[None]] = set()
        self.sent = ("", -1)
        self.side = ""
        self.match_id = ""
        self.game = Game()
        self.done: asyncio.Event = asyncio.Event()
        self.snapshots: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        conn.handler = self.on_message

    def start(self, match_id: str, variant: str, side: str) -> None:
        """Begin following a new match."""
        self.match_id, self.side, self.game = match_id, side, Game(Variant.parse(variant))
        self.done = asyncio.Event()

    def maybe_move(self) -> None:
        """Play a random legal action if it is this player's turn."""
        g = self.game
        if g.over or g.position.to_move.name.lower() != self.side or self.sent == (self.match_id, g.ply):
            return
        self.sent = (self.match_id, g.ply)
        action = self.rng.choice(g.position.legal_actions())
        self.stats.sent_at[(self.match_id, g.ply)] = time.perf_counter()
        with contextlib.suppress(ConnectionError):
            self.conn.send(action_msg(action, self.match_id, g.ply))

    async def think_then_move(self, match_id: str, ply: int) -> None:
        """Wait a human-like moment (half to one and a half times the think time), then move at `ply`; paced, the
        moment counts from when the previous action was sent, so each table plays one action a think time
        whatever the latency (as long as the latency is shorter)."""
        pause = self.think_s * self.rng.uniform(0.5, 1.5)
        previous = self.stats.sent_at.get((match_id, ply - 1)) if self.paced else None
        await asyncio.sleep(pause if previous is None else max(0.0, previous + pause - time.perf_counter()))
        if match_id == self.match_id and ply == self.game.ply:
            self.maybe_move()

    def on_message(self, raw: bytes) -> None:
        """Track the game from events; answer the turn."""
        msg: dict[str, Any] = json.loads(raw)
        kind = msg["type"]
        if kind == "event" and msg["match_id"] == self.match_id:
            if msg["kind"] == "action":
                ply = msg["ply"]
                if ply != self.game.ply:
                    return
                action = parse_action(msg["action"])
                sent = self.stats.sent_at.get((self.match_id, ply))
                if msg["side"] != self.side and sent is not None:
                    now = time.perf_counter()
                    self.stats.latencies.append(now - sent)
                    if now - sent > stall_report.SLOW_S:
                        self.stats.slow.append((sent, now))
                self.game.play(action)
                if isinstance(action, Swap):
                    self.side = "south" if self.side == "north" else "north"
                if self.think_s:
                    task = asyncio.create_task(self.think_then_move(self.match_id, self.game.ply))
                    self.thinking.add(task)
                    task.add_done_callback(self.thinking.discard)
                else:
                    self.maybe_move()
            elif msg["kind"] == "game_over":
                self.done.set()
        elif kind == "snapshot":
            self.snapshots.put_nowait(msg)
        elif kind == "ack":
            self.stats.acked += 1
            self.stats.durable.append((msg["match_id"], msg["ply"]))
        elif kind == "error":
            self.stats.errors.append(f"{self.name}: {msg['code']} {msg['message']}")


def clients_per_address(think_ms: float, matches: int) -> int:
    """How many clients share a loopback address: 20 (10 tables) at most, fewer when the tables play fast.

    The server budgets messages per address (200/s), so the tables of one address together keep to about
    100 actions a second; unpaced, the tables share the server's 2,000 or so a second, at most about 100
    each (one action per round trip).
    """
    table_rate = 1000 / think_ms if think_ms > 0 else min(100.0, 2000 / matches)
    return 2 * max(1, min(10, int(100 / table_rate)))


async def open_ws(url: str, name: str, gate: asyncio.Semaphore, source: int, per_address: int = 20) -> LeanConnection:
    """Connect from the `source`-th loopback address and say hello (a few handshakes at a time)."""
    async with gate:
        conn = await LeanConnection.open(url, loopback(source, per_address))
        conn.send(json.dumps({"type": "hello", "name": name}))
        await conn.recv()
        return conn


async def pair_loop(url: str, index: int, variant: str, stats: Stats, watchers: list[LeanConnection],
                    gate: asyncio.Semaphore, go: asyncio.Event, stop: asyncio.Event, think_s: float,
                    paced: bool = False, per_address: int = 20) -> None:
    """One table: once every table is connected (`go`), two players play match after match until `stop`."""
    rng = random.Random(index)
    try:
        ws_s = await open_ws(url, f"s{index}", gate, 2 * index, per_address)
        ws_n = await open_ws(url, f"n{index}", gate, 2 * index + 1, per_address)
        south = Player(ws_s, f"s{index}", stats, rng, think_s, paced)
        north = Player(ws_n, f"n{index}", stats, rng, think_s, paced)
        stats.tables += 1
        await go.wait()
        while not stop.is_set():
            ws_s.send(json.dumps({"type": "create", "variant": variant, "seat": "south"}))
            match_id = (await south.snapshots.get())["match_id"]
            ws_n.send(json.dumps({"type": "join", "match_id": match_id}))
            await north.snapshots.get()
            for w in watchers:
                w.send(json.dumps({"type": "watch", "match_id": match_id}))
            south.start(match_id, variant, "south")
            north.start(match_id, variant, "north")
            south.maybe_move()
            waits = [asyncio.create_task(stop.wait()), asyncio.create_task(south.done.wait())]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for w8 in waits:
                w8.cancel()
            if south.done.is_set():
                stats.games += 1
            for w in watchers:
                w.send(json.dumps({"type": "leave", "match_id": match_id}))
    except (ConnectionError, OSError, TimeoutError) as exc:
        stats.errors.append(f"table {index}: {exc!r}")


def spectate(conn: LeanConnection, stats: Stats) -> None:
    """Count the events a spectator receives."""

    def count(raw: bytes) -> None:
        """Count one message if it is an event."""
        if b'"type":"event"' in raw:
            stats.events_seen_by_spectators += 1

    conn.handler = count


async def run(args: argparse.Namespace, root: Path = ROOT, label: str = "") -> Figures:
    """Start the server (from the source tree `root`), drive the load, print the figures, then kill -9 and check
    durability; the figures."""
    tmp = Path(tempfile.mkdtemp(prefix="kalah-load-"))
    db = tmp / "arena.sqlite3"
    profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
    if args.stalls:
        Path(args.stalls).mkdir(parents=True, exist_ok=True)
        probes = Path(tempfile.mkstemp(dir=args.stalls, prefix="server-", suffix=".jsonl")[1])
        profile = [str(Path(stall_probe.__file__).resolve()), str(probes)]
    proc, url = await spawn_server(db, "--log-level", "warning", "--synchronous", args.synchronous,
                                   "--rate", "1000", "--burst", "1000", python_flags=profile, root=root)
    stats = Stats()
    gate = asyncio.Semaphore(50)
    stop = asyncio.Event()
    t_setup = time.perf_counter()
    spectators = await asyncio.gather(*(open_ws(url, f"w{i}", gate, 2 * args.matches + i,
                                                clients_per_address(args.think_ms, args.matches))
                                        for i in range(args.spectators)))
    by_table: list[list[LeanConnection]] = [[] for _ in range(args.matches)]
    for i, conn in enumerate(spectators):
        for j in range(args.watch):  # spectator i follows tables iK ... iK + K - 1 (round the tables)
            by_table[(i * args.watch + j) % args.matches].append(conn)
        spectate(conn, stats)
    go = asyncio.Event()
    tables = [asyncio.create_task(pair_loop(url, i, args.variant, stats, by_table[i], gate, go, stop,
                                             args.think_ms / 1000, args.rate is not None,
                                             clients_per_address(args.think_ms, args.matches)))
              for i in range(args.matches)]
    while stats.tables < args.matches and time.perf_counter() - t_setup < 120:
        await asyncio.sleep(0.05)
    go.set()
    while stats.acked < args.matches and time.perf_counter() - t_setup < 120:
        await asyncio.sleep(0.05)
    setup_s = time.perf_counter() - t_setup
    frozen = FrozenHeap()  # with Python's defaults, collections of up to 48 ms at 2,000 actions/s (8% of the time)
    stats.latencies.clear()
    stats.slow.clear()
    client_probes: list[dict[str, Any]] = []

    def client_record(kind: str, **fields: Any) -> None:
        """Keep one record of the clients' own probes."""
        client_probes.append({"kind": kind, **fields})

    watcher = asyncio.create_task(stall_probe.watch_loop(client_record, stacks=False)) if args.stalls else None
    unwatch_gc = stall_probe.probe_gc(client_record, freezes=False) if args.stalls else None
    h0 = await asyncio.to_thread(health, url)
    acked0, cpu0, writes0, t0 = stats.acked, proc_usage(proc.pid)[0], loop_writes(proc.pid), time.perf_counter()
    own0 = time.process_time()
    if args.backup:
        await asyncio.sleep(args.seconds / 2)
        backup = await backup_mid_load(db, tmp / "backup.sqlite3", stats)
        await asyncio.sleep(max(0.0, t0 + args.seconds - time.perf_counter()))
    else:
        await asyncio.sleep(args.seconds)
    elapsed = time.perf_counter() - t0
    own = time.process_time() - own0
    if watcher is not None and unwatch_gc is not None:
        watcher.cancel()
        unwatch_gc()
    acked, (cpu1, peak) = stats.acked - acked0, proc_usage(proc.pid)
    writes = loop_writes(proc.pid) - writes0
    h1 = await asyncio.to_thread(health, url)
    commits = h1["commits"] - h0["commits"]
    lat = sorted(stats.latencies)
    stop.set()
    await asyncio.wait(tables, timeout=10)

    os.kill(proc.pid, signal.SIGTERM if args.profile else signal.SIGKILL)
    await proc.wait()
    with contextlib.closing(sqlite3.connect(db)) as database:
        stored = set(database.execute("SELECT match_id, ply FROM actions").fetchall())
    lost = [d for d in stats.durable if d not in stored]
    frozen.stop()  # what this run's clients left is garbage now, for a later run's
    for spectator in spectators:
        if spectator.transport is not None:
            spectator.transport.abort()

    def pct(p: float) -> float:
        """The latency at quantile `p`, in milliseconds."""
        return 1000 * quantile(lat, p)

    print(f"server load{label}: {args.matches} matches ({2 * args.matches} players) + {args.spectators} spectators "
          f"following {args.watch} each, "
          f"{args.variant}, think {args.think_ms:.0f} ms, synchronous={args.synchronous}, "
          f"{args.seconds:.0f} s measured after {setup_s:.1f} s setup")
    print(f"{'durable actions/s':<32}{acked / elapsed:>12.0f}   (goal >= 2000)")
    print(f"{'latency p50 (ms)':<32}{pct(0.50):>12.1f}")
    print(f"{'latency p99 (ms)':<32}{pct(0.99):>12.1f}   (goal < 50)")
    print(f"{'latency mean (ms)':<32}{1000 * statistics.fmean(lat) if lat else float('nan'):>12.1f}")
    print(f"{'commits/s (actions per commit)':<32}{commits / elapsed:>12.0f}   "
          f"({(h1['actions'] - h0['actions']) / max(1, commits):.1f})")
    commit_ms = 1000 * (h1["commit_seconds"] - h0["commit_seconds"]) / max(1, commits)
    print(f"{'commit round trip (ms)':<32}{commit_ms:>12.1f}")
    print(f"{'games finished':<32}{stats.games:>12}   ({stats.tables} of {args.matches} tables playing)")
    print(f"{'events to spectators':<32}{stats.events_seen_by_spectators:>12}")
    print(f"{'server CPU (% of one core)':<32}{100 * (cpu1 - cpu0) / elapsed:>12.0f}")
    print(f"{'server CPU per action (ms)':<32}{1000 * (cpu1 - cpu0) / max(1, acked):>12.3f}")
    print(f"{'server socket writes per action':<32}{writes / max(1, acked):>12.2f}   (the event loop's write calls)")
    print(f"{'server peak memory (MiB)':<32}{peak / 2**20:>12.1f}")
    print(f"{'client CPU (% of one core)':<32}{100 * own / elapsed:>12.0f}")
    print(f"{'errors':<32}{len(stats.errors):>12}")
    print(f"{'acked actions lost after kill -9':<32}{len(lost):>12}   (of {len(stats.durable)})")
    for err in stats.errors[:5]:
        print("  error:", err)
    if args.stalls:
        stall_report.attribute(stall_report.load(probes), client_probes, stats.slow, (t0, t0 + elapsed), elapsed)
    backup_ok = not args.backup or await check_backup(backup, tmp / "restored.sqlite3", set(stats.durable))
    shutil.rmtree(tmp, ignore_errors=True)  # the run's database (and backup), checked: each run left megabytes in /tmp
    return Figures(acked / elapsed, pct(0.50), pct(0.99), (cpu1 - cpu0) / max(1, acked), writes / max(1, acked),
                   ok=not lost and not stats.errors and backup_ok)


def loop_writes(pid: int) -> int:
    """The write system calls of a process's main thread so far: the event loop's socket writes (the database
    writes from a thread of its own)."""
    for line in Path(f"/proc/{pid}/task/{pid}/io").read_text().splitlines():
        if line.startswith("syscw:"):
            return int(line.split()[1])
    return 0


@dataclass
class Backup:
    """A backup taken mid-load: its file, the actions acknowledged before it began, and how long it took."""

    path: Path
    acked_before: list[tuple[str, int]]
    seconds: float
    output: str


async def kalah(*args: str) -> tuple[int, str]:
    """Run this tree's `kalah ARGS...`; its exit status and output."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "cli.main", *args, cwd=ROOT,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode().strip()


async def backup_mid_load(db: Path, dest: Path, stats: Stats) -> Backup:
    """`kalah backup` of the live database while the clients go on playing."""
    acked_before = list(stats.durable)
    started = time.perf_counter()
    status, out = await kalah("backup", "--db", str(db), str(dest))
    if status:
        raise SystemExit(f"kalah backup failed: {out}")
    return Backup(dest, acked_before, time.perf_counter() - started, out)


async def check_backup(backup: Backup, restored: Path, acked: set[tuple[str, int]]) -> bool:
    """Restore the backup with `kalah restore` and print whether it holds every action acknowledged before it began
    and only acknowledged ones; whether it does."""
    status, out = await kalah("restore", str(backup.path), "--db", str(restored))
    if status:
        raise SystemExit(f"kalah restore failed: {out}")
    with contextlib.closing(sqlite3.connect(restored)) as database:
        copied = set(database.execute("SELECT match_id, ply FROM actions").fetchall())
    missing = [a for a in backup.acked_before if a not in copied]
    print(f"{'backup mid-load (s)':<32}{backup.seconds:>12.2f}   ({backup.output.split(': ', 1)[-1]})")
    print(f"{'acked before it, missing':<32}{len(missing):>12}   (of {len(backup.acked_before)}; "
          f"{len(copied)} actions restored, {len(copied - acked)} never acknowledged)")
    return not missing and not copied - acked


@dataclass
class Figures:
    """One run's figures, to compare a baseline revision with this tree."""

    actions_per_s: float
    p50_ms: float
    p99_ms: float
    cpu_per_action_s: float
    writes_per_action: float
    ok: bool


async def compare(args: argparse.Namespace) -> int:
    """Run the baseline revision's server and this tree's in turn, `--rounds` times each; print both."""
    runs: dict[str, list[Figures]] = {"before": [], "after": []}
    with baseline_tree(args.baseline) as before:
        for round_no in range(args.rounds):
            for name, root in (("before", before), ("after", ROOT)):
                print()
                runs[name].append(await run(args, root, f" [{name}: {args.baseline if root != ROOT else 'this tree'}"
                                                         f", round {round_no + 1}]"))
    print(f"\n{'median of ' + str(args.rounds) + ' rounds':<32}{'before':>12}{'after':>12}")
    rows = [("durable actions/s", "actions_per_s", 1.0, ".0f"), ("latency p50 (ms)", "p50_ms", 1.0, ".1f"),
            ("latency p99 (ms)", "p99_ms", 1.0, ".1f"), ("server CPU per action (ms)", "cpu_per_action_s", 1000, ".3f"),
            ("server socket writes per action", "writes_per_action", 1.0, ".2f")]
    for title, name, scale, fmt in rows:
        before_value, after_value = (scale * statistics.median(getattr(f, name) for f in runs[k]) for k in runs)
        print(f"{title:<32}{before_value:>12{fmt}}{after_value:>12{fmt}}")
    for name, figures in runs.items():
        print(f"latency p99 of each round, {name}: {', '.join(f'{f.p99_ms:.1f}' for f in figures)} ms")
    ratios = [a.cpu_per_action_s / b.cpu_per_action_s for b, a in zip(runs["before"], runs["after"], strict=True)]
    print(f"server CPU per action, after / before in each round (the one it followed): "
          f"{' '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}")
    return 0 if all(f.ok for fs in runs.values() for f in fs) else 1


def main() -> None:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--spectators", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--variant", default="kalah(6,4)")
    parser.add_argument("--think-ms", type=float, default=0.0,
                        help="mean pause before each action (0: move as soon as the turn comes)")
    parser.add_argument("--watch", type=int, default=1, metavar="K",
                        help="tables each spectator follows (their events reach it in the same turns of the server's "
                             "loop when their actions share a commit)")
    parser.add_argument("--profile", metavar="PATH", help="run the server under cProfile (stopped by SIGTERM)")
    parser.add_argument("--stalls", metavar="DIR",
                        help="run the server under bench/stall_probe.py (its records in DIR) and print which stalls "
                             "(commits, checkpoints, collections, a late event loop) overlap the slow actions")
    parser.add_argument("--synchronous", choices=["FULL", "NORMAL"], default="FULL")
    parser.add_argument("--baseline", metavar="REV",
                        help="also run the server of git revision REV (a temporary worktree), alternating with this "
                             "tree's, and print both (before/after in one run)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each server with --baseline")
    parser.add_argument("--backup", action="store_true",
                        help="take a kalah backup halfway through, restore it after, and check it holds every "
                             "action acknowledged before it began")
    parser.add_argument("--rate", type=float, default=None, metavar="ACTIONS_PER_S",
                        help="pace the players to about this many actions a second in all (sets --think-ms to "
                             "matches / rate, each pause counted from when the previous action was sent; what was "
                             "reached is printed), to read the latency at a given load")
    args = parser.parse_args()
    if args.rate:
        args.think_ms = 1000 * args.matches / args.rate
    with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
        if args.baseline:
            sys.exit(runner.run(compare(args)))
        sys.exit(0 if runner.run(run(args)).ok else 1)


if __name__ == "__main__":
    main()

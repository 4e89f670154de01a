"""Where a server's stalls come from: probes run inside `kalah serve`, and their correlation with slow actions.

`python bench/stall_probe.py OUT.jsonl -m cli.main serve ...` runs the server with probes that
append one JSON object a line to OUT.jsonl, each with `t` (seconds of CLOCK_MONOTONIC, the
clock `time.perf_counter` reads in every process on Linux, so the clients' times compare):

- `commit`: each group commit in the database thread: when it began and ended there, the
  statements' and the COMMIT's own seconds, the writes it held, whether the main file changed
  (a WAL checkpoint ran in it), and the hand-offs from and back to the event loop;
- `gc`: each garbage collection over 1 ms (generation, seconds), and each `gc.freeze`;
- `lag`: the event loop late by over 5 ms on a 5 ms timer (how late; how long its thread ran and waited for a
  core meanwhile), with the main thread's stack when it was held over 20 ms (a watchdog thread takes it
  while the loop is stuck);
- `cpu`: every 100 ms, the CPU seconds of the event loop's thread, of the database thread and of every other
  Python thread (by name);
- `bot_turn`: each hosted bot's move in a game with a person, step by step: its turn begun in the loop, a
  worker taking it, the search's end (and the worker's CPU and time waiting for a core), the loop resuming
  the turn, the durable write, the event sent (`explain_moves` matches them to a client's moves).

`bench/load.py --stalls DIR` runs its server under these probes, records the slow actions and the
clients' own loop lag, and prints `attribute(...)`: which probe's stalls overlap each slow action.
The probes cost a few percent of CPU; the figures of a run with them are not for comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import runpy
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

SLOW_S = 0.050
"""An action slower than this is a slow action (the p99 goal)."""


class Record(Protocol):
    """Where a probe writes a record."""

    def __call__(self, kind: str, **fields: Any) -> None:
        """Keep one record of `kind`."""


class Recorder:
    """Appends probe records to a file, from any thread."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def __call__(self, kind: str, **fields: Any) -> None:
        """Write one record."""
        line = json.dumps({"kind": kind, **fields})
        with self.lock:
            self.out.write(line + "\n")


def probe_gc(record: Record, freezes: bool = True) -> Callable[[], None]:
    """Record collections over 1 ms (and each `gc.freeze`: the server freezes its heap now and then); the function that
    stops recording collections."""
    started: dict[str, float] = {}

    def on_gc(phase: str, info: dict[str, int]) -> None:
        """A collection starts or stops."""
        now = time.perf_counter()
        if phase == "start":
            started["t"] = now
        elif "t" in started and now - started["t"] > 0.001:
            record("gc", t=started["t"], s=now - started["t"], gen=info["generation"],
                   collected=info.get("collected", 0))

    gc.callbacks.append(on_gc)
    if not freezes:
        return lambda: gc.callbacks.remove(on_gc)
    freeze = gc.freeze

    def timed_freeze() -> None:
        """gc.freeze, timed."""
        t = time.perf_counter()
        freeze()
        record("freeze", t=t, s=time.perf_counter() - t)  # not gc.get_freeze_count(): it walks every frozen object

    gc.freeze = timed_freeze
    return lambda: gc.callbacks.remove(on_gc)


class TimedConnection:
    """A sqlite3 connection whose COMMIT (or lone autocommitted statement) is timed apart from the statements."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self.commit_s = 0.0
        self.exec_s = 0.0

    @property
    def in_transaction(self) -> bool:
        """The connection's own flag."""
        return bool(self.db.in_transaction)

    def execute(self, sql: str, *args: Any) -> Any:
        """Run and time one statement."""
        t = time.perf_counter()
        try:
            return self.db.execute(sql, *args)
        finally:
            spent = time.perf_counter() - t
            if sql == "COMMIT" or (not self.db.in_transaction and not sql.startswith(("BEGIN", "ROLLBACK"))):
                self.commit_s += spent
            else:
                self.exec_s += spent

    def executemany(self, sql: str, rows: Any) -> Any:
        """Run and time one statement over many rows."""
        t = time.perf_counter()
        try:
            return self.db.executemany(sql, rows)
        finally:
            spent = time.perf_counter() - t
            if self.db.in_transaction:
                self.exec_s += spent
            else:
                self.commit_s += spent


def probe_commits(record: Recorder) -> None:
    """Time each group commit of the SQLite backend, in its thread and around its hand-offs."""
    try:
        from server.storage import sqlite as backend
    except ImportError:
        return
    run_batch = backend._run_batch
    threads: dict[str, int] = {}
    paths: dict[str, str] = {}

    def timed_run_batch(db: Any, items: list[Any]) -> Any:
        """The batch, timed, with whether the main database file changed (a checkpoint)."""
        if "path" not in paths:
            threads["db"] = threading.get_native_id()
            paths["path"] = db.execute("PRAGMA database_list").fetchone()[2]
        path = paths["path"]
        before = os.stat(path).st_mtime_ns
        t = time.perf_counter()
        timed = TimedConnection(db)
        results = run_batch(cast(Any, timed), items)
        end = time.perf_counter()
        wal = os.stat(path + "-wal").st_size if os.path.exists(path + "-wal") else 0
        checkpoint = os.stat(path).st_mtime_ns != before
        record("commit", t=t, s=end - t, commit_s=timed.commit_s, exec_s=timed.exec_s, items=len(items),
               checkpoint=checkpoint, wal=wal)
        return results

    backend._run_batch = timed_run_batch
    storage_class = backend.SQLiteStorage
    name = "commit_and_settle" if "commit_and_settle" in vars(storage_class) else "commit_batch"
    round_trip = getattr(storage_class, name)

    async def timed_round_trip(self: Any, items: list[Any]) -> Any:
        """The whole round trip through the database thread, until the writer task goes on."""
        t = time.perf_counter()
        result = await round_trip(self, items)
        record("round_trip", t=t, s=time.perf_counter() - t, items=len(items))
        return result

    setattr(storage_class, name, timed_round_trip)
    PROBE_THREADS_REF.append(threads)


def run_delay() -> float:
    """Seconds the calling thread has waited, runnable, for a core (the kernel's schedstat; 0 where there is none)."""
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def probe_bot_turns(record: Record) -> None:
    """Trace each hosted bot's move in a game with a person: when its turn began in the loop, when a worker took it
    and gave it back (and that thread's CPU between), when the loop resumed the turn, the durable write's round trip,
    and when its event was sent (`bot_turn` records)."""
    try:
        from server import bot_turns, hosted
        from server.arena import Arena
    except ImportError:
        return
    traces: dict[int, dict[str, Any]] = {}
    """id(task) -> the trace of the bot turn that task runs."""
    try:
        run_job, submit, choose = hosted._Job.run, hosted._Workers.submit, hosted.BotRunner.choose
        turn, write = bot_turns.BotTurns.turn, Arena.write
    except AttributeError:  # a revision shaped otherwise: no traces
        return

    def current() -> dict[str, Any] | None:
        """The trace of the bot turn the running task serves, if any."""
        task = asyncio.current_task()
        return traces.get(id(task)) if task is not None else None

    def timed_run(self: Any, *finished: Callable[[], None]) -> None:
        """The worker's search, timed in its thread (older revisions' jobs take no `finished`)."""
        trace = getattr(self.future, "trace", None)
        if trace is not None:
            trace.update(worker=time.perf_counter(), cpu0=time.thread_time(), delay0=run_delay(),
                         thread=threading.current_thread().name)

        def done() -> None:
            """The search is over (before the loop can learn it, where the job says when)."""
            if trace is not None and "cpu0" in trace:
                trace.update(searched=time.perf_counter(), cpu=time.thread_time() - trace.pop("cpu0"),
                             delay=run_delay() - trace.pop("delay0"))
            for then in finished:
                then()

        if finished:
            run_job(self, done)
        else:
            cast(Any, run_job)(self)
            done()

    def timed_submit(self: Any, job: Any) -> None:
        """A person's game's job carries its turn's trace to the worker."""
        trace = current()
        if trace is not None and job.priority == hosted.Priority.HUMAN:
            job.future.trace = trace
            trace["submitted"] = time.perf_counter()
        submit(self, job)

    async def timed_choose(self: Any, name: str, position: Any, budget_s: float, *, priority: Any) -> Any:
        """Note when the loop resumed the turn."""
        try:
            return await choose(self, name, position, budget_s, priority=priority)
        finally:
            trace = current()
            if trace is not None and "submitted" in trace:
                trace["resumed"] = time.perf_counter()

    async def timed_write(self: Any, ops: Any) -> None:
        """The durable write's round trip, for a bot turn's action."""
        trace = current()
        t = time.perf_counter()
        try:
            await write(self, ops)
        finally:
            if trace is not None and "resumed" in trace:
                trace.update(write=t, written=time.perf_counter())

    async def timed_turn(self: Any, room: Any, seat: int, bot: str) -> None:
        """One bot turn, traced; recorded if it went to a worker for a person's game."""
        task = asyncio.current_task()
        trace: dict[str, Any] = {"t": time.perf_counter(), "match": room.match.match_id, "ply": room.match.ply}
        traces[id(task)] = trace
        try:
            await turn(self, room, seat, bot)
        finally:
            del traces[id(task)]
            if "resumed" in trace:
                record("bot_turn", sent=time.perf_counter(), **trace)

    hosted._Job.run = timed_run  # type: ignore[method-assign,assignment]
    hosted._Workers.submit = timed_submit  # type: ignore[method-assign]
    hosted.BotRunner.choose = timed_choose  # type: ignore[method-assign,assignment]
    bot_turns.BotTurns.turn = timed_turn  # type: ignore[method-assign]
    Arena.write = timed_write  # type: ignore[method-assign]


CENSUS: list[asyncio.Task[None]] = []
PROBE_THREADS_REF: list[dict[str, int]] = []


def thread_cpu(tid: int) -> float:
    """CPU seconds of one thread of this process (from /proc)."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def watch_loop(record: Record, period_s: float = 0.005, stuck_s: float = 0.020,
                     stacks: bool = True) -> None:
    """Record the loop's lateness on a `period_s` timer; a watchdog thread takes the main thread's stack when the loop
    has not come round for `stuck_s`; every 100 ms, the threads' CPU."""
    main = threading.main_thread().ident
    main_tid = threading.get_native_id()
    beat = [time.perf_counter()]
    stop = threading.Event()

    def watchdog() -> None:
        """Take the stack of a loop stuck for `stuck_s` (once a stall)."""
        taken = 0.0
        while not stop.wait(0.002):
            last = beat[0]
            now = time.perf_counter()
            if now - last > stuck_s and taken != last:
                taken = last
                frame = sys._current_frames().get(main or 0)
                if frame is not None:
                    stack = [f"{Path(f.filename).name}:{f.lineno} {f.name}"
                             for f in traceback.extract_stack(frame)[-12:]]
                    record("stack", t=last, at=now, stack=stack)

    if stacks:
        threading.Thread(target=watchdog, name="stall-watchdog", daemon=True).start()
    next_cpu = 0.0
    try:
        while True:
            t = time.perf_counter()
            beat[0] = t
            ran, waited = time.thread_time(), run_delay()
            await asyncio.sleep(period_s)
            now = time.perf_counter()
            late = now - t - period_s
            if late > 0.005:  # how much of it the loop's thread ran, and waited runnable for a core
                record("lag", t=t + period_s, s=late, ran=time.thread_time() - ran, waited=run_delay() - waited)
            if now >= next_cpu:
                next_cpu = now + 0.1
                cpu = {"loop": thread_cpu(main_tid)}
                for refs in PROBE_THREADS_REF:
                    if "db" in refs:
                        cpu["db"] = thread_cpu(refs["db"])
                for thread in threading.enumerate():
                    if thread.native_id is not None and thread.native_id != main_tid and thread.name not in cpu:
                        with contextlib.suppress(OSError):
                            cpu[thread.name] = thread_cpu(thread.native_id)
                record("cpu", t=now, **cpu)
    finally:
        stop.set()


def probe_loop(record: Recorder) -> None:
    """Start `watch_loop` beside the server: wrap the heap freezer `kalah serve` starts in its loop."""
    from cli import serve

    keep = vars(serve)["keep_heap_frozen"]

    async def census(after_s: float) -> None:
        """Once, `after_s` after start: how many unreachable objects a full collection of the whole heap finds (the
        cyclic garbage the freezes kept), and how long it takes."""
        await asyncio.sleep(after_s)
        gc.unfreeze()
        t = time.perf_counter()
        found = gc.collect()
        record("census", t=t, s=time.perf_counter() - t, unreachable=found, after_s=after_s)
        gc.freeze()

    async def both(*args: Any, **kwargs: Any) -> None:
        """The server's own freezer and the loop watcher (and a census if STALL_PROBE_CENSUS gives its time)."""
        watcher = asyncio.create_task(watch_loop(record))
        if os.environ.get("STALL_PROBE_CENSUS"):
            CENSUS.append(asyncio.create_task(census(float(os.environ["STALL_PROBE_CENSUS"]))))
        try:
            await keep(*args, **kwargs)
        finally:
            watcher.cancel()

    vars(serve)["keep_heap_frozen"] = both


def main() -> None:
    """Run `-m MODULE ARGS...` with the probes writing to the file named first (with `--moves-only`, only the bot
    moves' traces, which cost a few timer reads a move)."""
    out_path, flag, *rest = sys.argv[1:]
    moves_only = flag == "--moves-only"
    if moves_only:
        flag, *rest = rest
    module, *rest = rest
    assert flag == "-m", "usage: stall_probe.py OUT.jsonl [--moves-only] -m MODULE ARGS..."
    out = open(out_path, "a", buffering=1)  # noqa: SIM115 - open for the process's life
    record = Recorder(out)
    sys.path.insert(0, os.getcwd())
    if not moves_only:
        probe_gc(record)
        probe_commits(record)
        probe_loop(record)
    probe_bot_turns(record)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


# --- correlation ----------------------------------------------------------------------------


def load(path: Path) -> list[dict[str, Any]]:
    """The records of a probe file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def overlaps(records: list[dict[str, Any]], start: float, end: float, when: Callable[[dict[str, Any]], bool]) -> list[
        dict[str, Any]]:
    """The records (with `t` and `s`) that overlap [start, end] and pass `when`."""
    return [r for r in records if r["t"] < end and r["t"] + r.get("s", 0.0) > start and when(r)]


def attribute(server: list[dict[str, Any]], client: list[dict[str, Any]], slow: list[tuple[float, float]],
              window: tuple[float, float], rounds_s: float) -> None:
    """Print the stalls of each probe in the measured window and which of them overlap the slow actions."""
    t0, t1 = window
    span = [r for r in server if t0 <= r["t"] <= t1]
    kinds: dict[str, list[dict[str, Any]]] = {}
    for r in span:
        kinds.setdefault(r["kind"], []).append(r)
    commits = kinds.get("commit", [])
    trips = kinds.get("round_trip", [])
    print(f"\nstalls in the measured {rounds_s:.0f} s ({len(slow)} actions over {1000 * SLOW_S:.0f} ms):")
    if commits:
        secs = sorted(c["s"] for c in commits)
        ck = [c for c in commits if c["checkpoint"]]
        print(f"  commits {len(commits)}: in the db thread p50 {1000 * secs[len(secs) // 2]:.1f} ms, "
              f"p99 {1000 * secs[int(0.99 * len(secs))]:.1f} ms, max {1000 * secs[-1]:.1f} ms; "
              f"COMMIT alone max {1000 * max(c['commit_s'] for c in commits):.1f} ms; over 20 ms: "
              f"{sum(c['s'] > 0.02 for c in commits)}")
        if ck:
            each = ", ".join(f"{1000 * c['s']:.0f}" for c in ck)
            rest = max((c["s"] for c in commits if not c["checkpoint"]), default=0.0)
            print(f"  checkpoints in a commit {len(ck)}: {each} ms (their commits); other commits' max "
                  f"{1000 * rest:.1f} ms")
    if trips:
        ts = sorted(c["s"] for c in trips)
        print(f"  commit round trips from the loop: p50 {1000 * ts[len(ts) // 2]:.1f} ms, "
              f"p99 {1000 * ts[int(0.99 * len(ts))]:.1f} ms, max {1000 * ts[-1]:.1f} ms")
    for name in ("gc", "freeze"):
        rs = kinds.get(name, [])
        if rs:
            print(f"  {name} over 1 ms: {len(rs)}, total {1000 * sum(r['s'] for r in rs):.0f} ms, max "
                  f"{1000 * max(r['s'] for r in rs):.1f} ms (gen {max(rs, key=lambda r: r['s']).get('gen', '-')})")
    client_gc = [r for r in client if r["kind"] == "gc"]
    if client_gc:
        print(f"  client gc over 1 ms: {len(client_gc)}, total {1000 * sum(r['s'] for r in client_gc):.0f} ms, max "
              f"{1000 * max(r['s'] for r in client_gc):.1f} ms")
    for who in ("server", "client"):
        lags = [r for r in (server if who == "server" else client) if r["kind"] == "lag" and t0 <= r["t"] <= t1]
        if lags:
            print(f"  {who} loop late over 5 ms: {len(lags)} times, over 20 ms {sum(r['s'] > 0.02 for r in lags)}, "
                  f"max {1000 * max(r['s'] for r in lags):.0f} ms")
    cpu = kinds.get("cpu", [])
    if len(cpu) > 1:
        dt = cpu[-1]["t"] - cpu[0]["t"]
        shares = {k: (cpu[-1][k] - cpu[0][k]) / dt for k in cpu[-1] if k not in ("t", "kind") and k in cpu[0]}
        print("  server threads' CPU: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items()))
    # group the slow actions into bursts (a stall delays many at once) and name what overlaps each
    bursts: list[list[tuple[float, float]]] = []
    for s, e in sorted(slow):
        if bursts and s <= max(x[1] for x in bursts[-1]):
            bursts[-1].append((s, e))
        else:
            bursts.append([(s, e)])
    print(f"  slow actions in {len(bursts)} bursts:")
    for burst in bursts:
        s = min(x[0] for x in burst)
        e = max(x[1] for x in burst)
        found = []
        for c in overlaps(commits, s, e, lambda r: r["s"] > 0.015):
            found.append(f"commit {1000 * c['s']:.0f} ms (COMMIT {1000 * c['commit_s']:.0f}, "
                         f"{'checkpoint, ' if c['checkpoint'] else ''}{c['items']} writes)")
        for g in overlaps(kinds.get("gc", []) + kinds.get("freeze", []), s, e, lambda r: r["s"] > 0.005):
            found.append(f"{g['kind']} {1000 * g['s']:.0f} ms" + (f" gen {g['gen']}" if "gen" in g else ""))
        for g in overlaps(client_gc, s, e, lambda r: r["s"] > 0.005):
            found.append(f"client gc {1000 * g['s']:.0f} ms gen {g['gen']}")
        for who, recs in (("server", server), ("client", client)):
            lag = overlaps([r for r in recs if r["kind"] == "lag"], s - 0.01, e, lambda r: r["s"] > 0.015)
            if lag:
                found.append(f"{who} loop late {1000 * max(r['s'] for r in lag):.0f} ms")
        for st in overlaps([r for r in server if r["kind"] == "stack"], s, e, lambda r: True)[:2]:
            found.append("stuck in " + " < ".join(reversed(st["stack"][-4:])))
        print(f"    {t0 and s - t0:6.2f} s +{1000 * (e - s):4.0f} ms, {len(burst):4} actions, worst "
              f"{1000 * max(x[1] - x[0] for x in burst):4.0f} ms: {'; '.join(found) or 'nothing recorded'}")


if __name__ == "__main__":
    main()


def thread_shares(cpu: list[dict[str, Any]]) -> dict[str, float]:
    """Each thread's share of a core over the `cpu` records (from the first that names it to the last)."""
    shares = {}
    for name in {k for r in cpu for k in r} - {"t", "kind"}:
        seen = [r for r in cpu if name in r]
        if len(seen) > 1 and seen[-1]["t"] > seen[0]["t"]:
            shares[name] = (seen[-1][name] - seen[0][name]) / (seen[-1]["t"] - seen[0]["t"])
    return shares


STEPS = (("ack to turn", None, "t"), ("to a worker", "t", "worker"), ("search", "worker", "searched"),
         ("back to the loop", "searched", "resumed"), ("to the write", "resumed", "write"),
         ("write", "write", "written"), ("to sent", "written", "sent"), ("sent to seen", "sent", None))
"""A traced bot move's steps: name, from, to (None: the client's ack, or the client's receipt of the event)."""


def explain_moves(samples: list[tuple[float, float]], server: list[dict[str, Any]], client: list[dict[str, Any]],
                  worst: int = 3) -> list[str]:
    """Lines that say where the bot moves' time went: each step's p50 and max over the moves `samples` (the client's
    (ack, event) times) matched to the server's `bot_turn` traces, then the `worst` slowest moves step by step with
    the client's own collections and loop lateness that overlap them."""
    turns = sorted((r for r in server if r["kind"] == "bot_turn"), key=lambda r: r["sent"])
    matched: list[tuple[float, float, dict[str, Any]]] = []
    for ack, seen in samples:  # the last action written between the ack and its event reaching the client
        found = [r for r in turns if ack <= r.get("written", r["sent"]) <= seen]
        if found:
            matched.append((ack, seen, found[-1]))
    if not matched:
        return [f"  no traced bot moves matched ({len(samples)} moves, {len(turns)} traces)"]

    def step(ack: float, seen: float, trace: dict[str, Any], start: str | None, end: str | None) -> float:
        """One step's milliseconds (nan where the trace lacks a time)."""
        a = ack if start is None else trace.get(start)
        b = seen if end is None else trace.get(end)
        return 1000 * (b - a) if a is not None and b is not None else float("nan")

    lines = [f"  {len(matched)} of {len(samples)} moves traced; per step p50 / max ms: " + ", ".join(
        f"{name} {statistics.median(v):.1f} / {max(v):.1f}" for name, start, end in STEPS
        if (v := [step(a, s, tr, start, end) for a, s, tr in matched]))]
    window = (matched[0][0], matched[-1][1])
    gcs, lags = ([r["s"] for r in client if r["kind"] == kind and window[0] <= r["t"] <= window[1]]
                 for kind in ("gc", "lag"))
    if client:
        lines.append(f"  the honest clients' process while the moves were played: {len(gcs)} collections over 1 ms "
                     f"(max {1000 * max(gcs, default=0):.1f} ms), its loop late over 5 ms {len(lags)} times (max "
                     f"{1000 * max(lags, default=0):.0f} ms)")
    late = [r for r in server if r["kind"] == "lag" and window[0] <= r["t"] <= window[1] and r["s"] > 0.02]
    if late:
        total = sum(r["s"] + 0.005 for r in late)
        ran, waited = (100 * sum(r.get(k, 0) for r in late) / total for k in ("ran", "waited"))
        longest = 1000 * max(r["s"] for r in late)
        lines.append(f"  the server's loop late over 20 ms {len(late)} times (max {longest:.0f} ms); in those periods "
                     f"its thread ran {ran:.0f}% of the time and waited for a core {waited:.0f}%")
    shares = thread_shares([r for r in server if r["kind"] == "cpu" and window[0] <= r["t"] <= window[1]])
    if shares:
        lines.append("  the server's threads while the moves were played, share of a core: " + ", ".join(
            f"{name} {100 * share:.0f}%" for name, share in sorted(shares.items(), key=lambda kv: -kv[1])
            if share >= 0.005))
    cpu = [1000 * tr["cpu"] for _, _, tr in matched if "cpu" in tr]
    delay = [1000 * tr["delay"] for _, _, tr in matched if "delay" in tr]
    if cpu and delay:
        lines.append(f"  the search thread a move: ran p50 {statistics.median(cpu):.1f} ms, max {max(cpu):.1f} ms; "
                     f"waited for a core p50 {statistics.median(delay):.1f} ms, max {max(delay):.1f} ms")
    for ack, seen, trace in sorted(matched, key=lambda m: m[0] - m[1])[:worst]:
        gcs = overlaps([r for r in client if r["kind"] == "gc"], ack, seen, lambda r: True)
        lags = overlaps([r for r in client if r["kind"] == "lag"], ack, seen, lambda r: True)
        own = (f"; client gc {sum(1000 * g['s'] for g in gcs):.0f} ms" if gcs else "") + (
            f"; client loop late {max(1000 * g['s'] for g in lags):.0f} ms" if lags else "")
        lines.append(f"  slow move {1000 * (seen - ack):.0f} ms: " + ", ".join(
            f"{name} {step(ack, seen, trace, start, end):.1f}" for name, start, end in STEPS)
            + f" (the search thread ran {1000 * trace.get('cpu', float('nan')):.1f} ms and waited for a core "
              f"{1000 * trace.get('delay', float('nan')):.1f} ms, {trace.get('thread', '?')})" + own)
    return lines

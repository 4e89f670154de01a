"""Where a server's stalls come from: probes run inside `kalah serve` (bench/stall_report.py reads their records).

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
clients' own loop lag, and prints `stall_report.attribute(...)`: which probe's stalls overlap each slow action.
The probes cost a few percent of CPU; the figures of a run with them are not for comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import runpy
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO, cast

from stall_report import explain_moves as explain_moves  # the report's, where benchmarks still look for them
from stall_report import load as load


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
        from server.core import bot_turns, hosted
        from server.core.arena import Arena
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


if __name__ == "__main__":
    main()

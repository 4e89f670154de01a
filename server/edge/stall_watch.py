"""Explaining a stalled event loop: every thread's stack, taken while the loop is held, logged once it runs again.

A loop held for a second stops every connection, and what held it is gone by the time anyone
looks: a synchronous call on the loop (a huge encode, a database call, a write to a standard error
nobody reads), a full collection of a big heap, another thread holding the interpreter's lock, or the
process waiting for a core on a loaded machine. `watch_stalls` re-arms faulthandler's watchdog on
each turn of a short timer; when the loop has not come round for `after_s`, that watchdog (a C
thread that needs no interpreter lock, so it also catches a stall inside C code that holds it) writes
every Python thread's stack to a scratch file. When the loop runs again it logs `loop_stalled` (a
warning): how long it was held, how much of that its thread ran on a core (`ran_ms`: work on the
loop, a collection made there), waited runnable for one (`waited_ms`: the machine's load), and
neither (`blocked_ms`: a blocking system call, or the interpreter's lock held by another thread), the
collections made meanwhile, the loop thread's stack as the watchdog saw it, and the other threads'
innermost frames.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import logging
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from server.logs import event as log_event

AFTER_S = 1.0
"""How long the loop must be held before its stack is taken (and the stall logged)."""
TICK_S = 0.1
"""How often the watchdog is re-armed (each costs some tens of microseconds)."""
MAX_FRAMES = 30
THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)", re.MULTILINE)


def run_delay() -> float:
    """Seconds the calling thread has waited, runnable, for a core (the kernel's schedstat; 0 where there is none)."""
    try:
        return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def thread_stacks(dump: str) -> dict[int, list[str]]:
    """Each thread's frames in a faulthandler dump, innermost first, as `file:line function`."""
    stacks: dict[int, list[str]] = {}
    frames: list[str] = []
    for line in dump.splitlines():
        header = THREAD.match(line)
        if header is not None:
            frames = stacks[int(header[1], 16)] = []
            continue
        frame = re.match(r'\s+File "(.*)", line (\d+) in (.*)', line)
        if frame is not None and len(frames) < MAX_FRAMES:
            frames.append(f"{frame[1]}:{frame[2]} {frame[3]}")
    return stacks


def stall_fields(dump: str, loop_thread: int) -> dict[str, Any]:
    """The log fields of a stall's dump: the loop thread's stack and the other threads' innermost frames."""
    stacks = thread_stacks(dump)
    loop_stack = stacks.pop(loop_thread, [])
    return {"stack": loop_stack, "other_threads": [frames[0] for frames in stacks.values() if frames]}


async def watch_stalls(after_s: float = AFTER_S, tick_s: float = TICK_S) -> None:
    """Log `loop_stalled`, with the loop thread's stack taken during the stall, whenever the event loop has not come
    round for `after_s` (runs until cancelled; one per process: faulthandler has one watchdog)."""
    loop_thread = threading.get_ident()
    collections: list[tuple[int, float]] = []
    started = [0.0]

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        """Time each collection (in whichever thread it runs)."""
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            collections.append((int(info["generation"]), time.perf_counter() - started[0]))

    gc.callbacks.append(on_collection)
    with tempfile.TemporaryFile() as scratch:
        fd = scratch.fileno()
        try:
            while True:
                start, ran, waited = time.perf_counter(), time.thread_time(), run_delay()
                collections.clear()
                faulthandler.dump_traceback_later(after_s, file=fd)
                await asyncio.sleep(tick_s)
                faulthandler.cancel_dump_traceback_later()  # waits for a dump in progress to be written
                held = time.perf_counter() - start - tick_s
                dumped = os.fstat(fd).st_size > 0
                if dumped or held >= after_s:  # held, without a dump: the watchdog got no core before the loop
                    ran, waited = time.thread_time() - ran, run_delay() - waited
                    os.lseek(fd, 0, os.SEEK_SET)
                    dump = os.read(fd, 1 << 20).decode(errors="replace")
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    log_event("loop_stalled", level=logging.WARNING, held_ms=round(1000 * held),
                              ran_ms=round(1000 * ran), waited_ms=round(1000 * waited),
                              blocked_ms=max(0, round(1000 * (held - ran - waited))),
                              collections=[f"gen{g} {1000 * s:.0f} ms" for g, s in collections if s >= 0.01],
                              **stall_fields(dump, loop_thread))
        finally:
            faulthandler.cancel_dump_traceback_later()
            gc.callbacks.remove(on_collection)

"""Garbage-collector tuning for a long-running server process (`kalah serve`, not tests), and timing its pauses.

A collection stops every thread of the process while it walks the objects of the generations it
collects, and a busy server holds many: thousands of connections, each a web of small objects.
Freezing what has lived a while moves it out of the collector's sight (`gc.freeze` costs
microseconds whatever the heap), so collections stay short; unfreezing now and then lets cyclic
garbage among those objects be reclaimed, in one full collection (10 minutes after start, then
further apart while it finds nothing: `next_collection`), and sooner whenever the process has grown by
`GROWN_BYTES` since the last one: cyclic garbage among frozen objects is out of the collector's sight, and
before closed connections were freed without it (`server.edge.connection.release_protocol`), under a flood of
reconnecting clients the server grew by about 4 MiB a second until the next full collection. The heap is
frozen at once and then every second: frozen every 10 s, the objects of the last seconds (a burst of new
connections) piled up in the older generations, and one collection of them held the server
50-90 ms at 2,000 actions/s.

A full collection holds the event loop and the interpreter's lock while it walks the whole heap:
0.5 s for a flooded server's heap on a 2-core machine at load 3 (the slowest move of a flooded
phase of `bench/flood.py`, 2.65 times the quiet one's), longer the busier the machine. So a due
collection waits while the server is pressed (`pressed()`: the seatless gate in force, or a hosted
bot thinking for a person), for a calm second; it runs anyway once it has waited
`LONGEST_DEFERRAL_S`, or once the process has grown by `URGENT_BYTES` since the last one.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable
from typing import Any

from server.logs import event as log_event

COLLECT_EVERY_S = (600.0, 3600.0)
"""The shortest and longest time between full collections (`next_collection`)."""
GROWN_BYTES = 128 << 20
"""Growth of the resident size since the last full collection that brings the next one forward."""
MIN_GAP_S = 10.0
"""The shortest time between full collections brought forward by growth."""
LONGEST_DEFERRAL_S = 600.0
"""The longest a due full collection waits for the server to be calm."""
URGENT_BYTES = 512 << 20
"""Growth of the resident size since the last full collection past which a due one runs even under pressure."""


def resident_bytes() -> int | None:
    """This process's resident size (Linux's /proc/self/statm), None where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def collection_deferred(pressed: bool, waited_s: float, grown: int | None, longest_s: float,
                        urgent_bytes: int) -> bool:
    """Whether a due full collection waits a while longer: the server is `pressed`, the collection has waited
    `waited_s` (under `longest_s`), and the process has `grown` (None: unknown) by less than `urgent_bytes`."""
    return pressed and waited_s < longest_s and (grown is None or grown < urgent_bytes)


def collection_due(since_s: float, every_s: float, grown: int | None, grown_bytes: int, min_gap_s: float) -> str | None:
    """Why a full collection is due (`time`, `grown`), or None: `since_s` after the last one, the process `grown`
    bytes (None: unknown) since."""
    if since_s >= every_s:
        return "time"
    if grown is not None and grown >= grown_bytes and since_s >= min_gap_s:
        return "grown"
    return None


async def keep_heap_frozen(interval_s: float = 1.0, collect_every_s: float = COLLECT_EVERY_S[0],
                           longest_s: float = COLLECT_EVERY_S[1], grown_bytes: int = GROWN_BYTES,
                           min_gap_s: float = MIN_GAP_S, pressed: Callable[[], bool] = lambda: False,
                           longest_deferral_s: float = LONGEST_DEFERRAL_S, urgent_bytes: int = URGENT_BYTES) -> None:
    """Freeze the surviving objects now and every `interval_s`; after `collect_every_s` (then as `next_collection`
    says, up to `longest_s`), or once the process has grown by `grown_bytes` (at most every `min_gap_s`), collect
    them all first, at a moment the server is not `pressed()` (`collection_deferred`)."""
    gc.set_threshold(10_000, 20, 50)
    gc.freeze()
    collected_at, every_s, base = time.monotonic(), collect_every_s, resident_bytes()
    due_since: float | None = None
    while True:
        await asyncio.sleep(interval_s)
        now = resident_bytes()
        grown = None if now is None or base is None else now - base
        reason = collection_due(time.monotonic() - collected_at, every_s, grown, grown_bytes, min_gap_s)
        if reason is not None:
            first = due_since is None
            if due_since is None:
                due_since = time.monotonic()
            waited = time.monotonic() - due_since
            if collection_deferred(pressed(), waited, grown, longest_deferral_s, urgent_bytes):
                if first:
                    log_event("gc_full_collection_deferred", reason=reason)
                gc.freeze()
                continue
            frozen = gc.get_freeze_count()
            gc.unfreeze()
            started = time.perf_counter()
            found = gc.collect()
            collected_at, base, due_since = time.monotonic(), resident_bytes(), None
            if reason == "time":
                every_s = next_collection(every_s, found, frozen, collect_every_s, longest_s)
            log_event("gc_full_collection", reason=reason, unreachable=found, objects=frozen,
                      ms=round(1000 * (time.perf_counter() - started)), next_s=round(every_s),
                      deferred_s=round(waited, 1))
        gc.freeze()


def next_collection(every_s: float, found: int, objects: int, shortest_s: float, longest_s: float) -> float:
    """Seconds to the next full collection: twice as long (up to `longest_s`) after one that found under 1% of the
    `objects` it walked unreachable, half as long (down to `shortest_s`) after one that found more.

    A full collection stops the server for a time that grows with its heap (0.3 s for 220,000
    objects on a loaded 2-core machine) and, under load, found nothing to reclaim: the freezes
    keep little garbage. Collections that find none come rarer; garbage brings them back.
    """
    if found * 100 < objects:
        return min(longest_s, 2 * every_s)
    return max(shortest_s, every_s / 2)


def watch_collections(observe: Callable[[int, float], object]) -> Callable[[], None]:
    """Tell `observe(generation, seconds)` of every collection in this process from now on; the function that stops."""
    started = [0.0]

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        """A collection starts or stops (the thread that triggered it runs this, holding the GIL)."""
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            observe(info["generation"], time.perf_counter() - started[0])

    gc.callbacks.append(on_collection)
    return lambda: gc.callbacks.remove(on_collection)

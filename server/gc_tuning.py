"""Garbage-collector tuning for a long-running server process (not used by tests).

A full (generation 2) collection walks every tracked object, and a busy server holds many:
thousands of connections, each a web of small objects. Freezing what has lived a while moves
it out of the collector's sight, so full collections stay short; unfreezing now and then lets
cyclic garbage among those objects be reclaimed, in one collection, off the hot path.
"""

from __future__ import annotations

import asyncio
import gc
import time

from server.logs import event as log_event


async def keep_heap_frozen(interval_s: float = 10.0, unfreeze_every: int = 60) -> None:
    """Every `interval_s`, freeze the surviving objects; every `unfreeze_every` rounds, collect them."""
    gc.set_threshold(10_000, 20, 50)
    rounds = 0
    while True:
        await asyncio.sleep(interval_s)
        rounds += 1
        if rounds % unfreeze_every == 0:
            gc.unfreeze()
            started = time.perf_counter()
            found = gc.collect()
            log_event("gc_full_collection", unreachable=found, ms=round(1000 * (time.perf_counter() - started)))
        gc.freeze()

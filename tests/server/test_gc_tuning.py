"""The garbage-collector tuning of `kalah serve`: how far apart its full collections come."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref

import pytest

from server.edge.gc_tuning import (
    COLLECT_EVERY_S,
    collection_deferred,
    collection_due,
    keep_heap_frozen,
    next_collection,
    resident_bytes,
)


def test_full_collections_come_rarer_while_they_find_no_garbage_and_sooner_once_they_do() -> None:
    """A full collection that found under 1% of the objects unreachable doubles the wait up to the longest; one that
    found more halves it down to the shortest."""
    shortest, longest = COLLECT_EVERY_S
    waits = [shortest]
    for _ in range(4):
        waits.append(next_collection(waits[-1], 0, 220_000, shortest, longest))
    assert waits == [600, 1200, 2400, 3600, 3600]
    assert next_collection(3600, 2_199, 220_000, shortest, longest) == 3600  # under 1%: stays at the longest
    assert next_collection(3600, 2_200, 220_000, shortest, longest) == 1800
    assert next_collection(900, 50_000, 220_000, shortest, longest) == 600


def test_a_full_collection_is_due_by_time_or_once_the_process_has_grown() -> None:
    """Due by time past the wait; by growth past the bound, but not sooner than the shortest gap; never on an
    unknown size alone."""
    assert collection_due(600, 600, 0, 100, 10) == "time"
    assert collection_due(30, 600, 100, 100, 10) == "grown"
    assert collection_due(5, 600, 500, 100, 10) is None  # grown, but a collection ran 5 s ago
    assert collection_due(30, 600, 99, 100, 10) is None
    assert collection_due(30, 600, None, 100, 10) is None


async def test_cyclic_garbage_frozen_while_alive_is_collected_once_the_process_has_grown() -> None:
    """Objects frozen while alive that then become cyclic garbage holding 64 MiB are reclaimed once the process
    has grown past the bound again, long before the timed full collection (before, they stayed until it came)."""
    if resident_bytes() is None:
        pytest.skip("the resident size cannot be read here")

    class Node:
        """One link of a cycle that holds a buffer."""

        def __init__(self) -> None:
            self.buffer = bytearray(1 << 20)
            self.buffer[::4096] = b"x" * len(self.buffer[::4096])  # touched: resident
            self.me = self

    thresholds = gc.get_threshold()
    task = asyncio.create_task(keep_heap_frozen(0.02, collect_every_s=3600, grown_bytes=32 << 20, min_gap_s=0.0))
    more: list[Node] = []
    try:
        await asyncio.sleep(0.1)
        nodes = [Node() for _ in range(64)]
        alive = [weakref.ref(n) for n in nodes]
        await asyncio.sleep(0.2)  # frozen while alive (and the growth they made collected, finding nothing)
        del nodes
        for _ in range(100):  # the process goes on growing, as a server under a flood does
            more.append(Node())
            await asyncio.sleep(0.01)
            if not any(ref() is not None for ref in alive):
                break
        assert not any(ref() is not None for ref in alive)
    finally:
        more.clear()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_a_due_full_collection_waits_while_the_server_is_pressed_within_its_bounds() -> None:
    """Pressed, a due collection waits until it has waited the longest deferral or the process has grown past the
    urgent bound (an unknown size does not hurry it); calm, it runs at once."""
    assert collection_deferred(True, 30, 100, 600, 512)
    assert collection_deferred(True, 30, None, 600, 512)
    assert not collection_deferred(False, 0, 0, 600, 512)
    assert not collection_deferred(True, 600, 0, 600, 512)
    assert not collection_deferred(True, 30, 512, 600, 512)


class Cycle:
    """An object that refers to itself: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


async def test_a_full_collection_is_not_made_while_the_server_is_pressed_but_once_it_is_calm() -> None:
    """Cyclic garbage frozen while alive stays while the server is pressed, though full collections fall due every
    tick; the first tick the server is calm, a full collection frees it (before, a flooded server collected at once
    and held its loop 0.5 s amid the flood)."""
    pressed = [True]
    thresholds = gc.get_threshold()
    task = asyncio.create_task(keep_heap_frozen(0.02, collect_every_s=0.02, longest_s=0.02, pressed=lambda: pressed[0],
                                                longest_deferral_s=3600))
    try:
        await asyncio.sleep(0.05)
        garbage = Cycle()
        alive = weakref.ref(garbage)
        await asyncio.sleep(0.1)  # frozen while alive
        del garbage
        await asyncio.sleep(0.3)  # about 15 ticks, each with a collection due
        assert alive() is not None
        pressed[0] = False
        for _ in range(200):
            await asyncio.sleep(0.01)
            if alive() is None:
                break
        assert alive() is None
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()
        gc.set_threshold(*thresholds)


async def test_a_full_collection_deferred_for_the_longest_deferral_runs_under_pressure() -> None:
    """A server pressed for good still collects once a due collection has waited the longest deferral."""
    thresholds = gc.get_threshold()
    task = asyncio.create_task(keep_heap_frozen(0.02, collect_every_s=0.02, longest_s=0.02, pressed=lambda: True,
                                                longest_deferral_s=0.1))
    try:
        await asyncio.sleep(0.05)
        garbage = Cycle()
        alive = weakref.ref(garbage)
        await asyncio.sleep(0.1)
        del garbage
        for _ in range(300):
            await asyncio.sleep(0.01)
            if alive() is None:
                break
        assert alive() is None
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()
        gc.set_threshold(*thresholds)

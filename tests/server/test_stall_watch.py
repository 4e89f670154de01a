"""The event loop's stall watch (`kalah serve`): a loop held past the bound is logged with what held it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import pytest

from server.edge.stall_watch import stall_fields, thread_stacks, watch_stalls
from server.logs import LOGGER_NAME

DUMP = """Timeout (0:00:01)!
Thread 0x00007f0000000002 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/srv/server/core/hosted.py", line 88 in run

Thread 0x00007f0000000001 (most recent call first):
  File "/srv/server/front/router.py", line 120 in encode_list
  File "/usr/lib/python3.11/asyncio/events.py", line 80 in _run
"""


def encode_everything_synchronously() -> None:
    """A synchronous call made on the loop that holds it (as a huge encode or a database call would)."""
    time.sleep(0.6)


async def test_a_loop_held_past_the_bound_is_logged_with_the_call_that_held_it(
        caplog: pytest.LogCaptureFixture) -> None:
    """A callback that holds the loop 0.6 s, past the 0.2 s bound, is logged once as `loop_stalled`: held at least
    as long as it slept, mostly neither running nor waiting for a core (blocked), with the loop thread's stack
    naming the call that held it; the turns before, on time, log nothing."""
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        watch = asyncio.create_task(watch_stalls(after_s=0.2, tick_s=0.02))
        try:
            await asyncio.sleep(0.3)
            assert not [r for r in caplog.records if r.getMessage() == "loop_stalled"]
            asyncio.get_running_loop().call_soon(encode_everything_synchronously)
            for _ in range(100):
                await asyncio.sleep(0.02)
                if any(r.getMessage() == "loop_stalled" for r in caplog.records):
                    break
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
    stalls = [r for r in caplog.records if r.getMessage() == "loop_stalled"]
    assert len(stalls) == 1 and stalls[0].levelno == logging.WARNING
    fields = stalls[0].fields  # type: ignore[attr-defined]
    assert fields["held_ms"] >= 550
    assert fields["blocked_ms"] > fields["ran_ms"]
    assert any(frame.endswith(" encode_everything_synchronously") for frame in fields["stack"])


def test_a_dump_is_split_by_thread_and_the_loops_stack_told_apart() -> None:
    """Each thread's frames innermost first; the loop thread's stack in full, the others' innermost frame."""
    stacks = thread_stacks(DUMP)
    assert stacks[0x7F0000000001] == ["/srv/server/front/router.py:120 encode_list",
                                      "/usr/lib/python3.11/asyncio/events.py:80 _run"]
    fields = stall_fields(DUMP, 0x7F0000000001)
    assert fields == {"stack": stacks[0x7F0000000001], "other_threads": ["/usr/lib/python3.11/threading.py:324 wait"]}

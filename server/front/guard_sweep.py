"""The sweep of `guards`: claims whose time has passed are deleted, at start and then periodically.

A claim in `guards` that lapses (a review's lease, a race claim on a recovery code or a passkey:
`server.storage.writer.op_lease`, `race_claim`) is of no use once its time has passed: a lapsed
lease is taken over as if it were absent, and a race claim outlives any race on its key. Claims
kept for good (no time: a cluster's match, rating and event versions) are never swept.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from server.logs import event as log_event
from server.storage import Op
from server.storage.writer import op_guard_sweep

SWEEP_EVERY_S = 600.0
"""How often the lapsed claims are deleted."""


class GuardSweep:
    """Deletes the lapsed claims of `guards` once at start and every `every_s` after."""

    def __init__(self, write: Callable[[list[Op]], Awaitable[None]], every_s: float = SWEEP_EVERY_S) -> None:
        self.write = write
        """The arena's one durable write."""
        self.every_s = every_s
        self.sweeps = 0
        """Sweeps done since the start."""
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> None:
        """Delete every claim whose time has passed."""
        await self.write([op_guard_sweep(time.time())])
        self.sweeps += 1

    def start(self) -> None:
        """Sweep now, then every `every_s`."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="guard-sweep")

    async def _run(self) -> None:
        """Sweep, wait, and again (a failed sweep is logged and tried at the next turn)."""
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database failing, the server closing: sweep at the next turn
                log_event("guard_sweep_failed", error=str(exc)[:300], level=30)
            await asyncio.sleep(self.every_s)

    async def close(self) -> None:
        """Stop sweeping."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

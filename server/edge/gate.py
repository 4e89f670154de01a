"""The seatless gate: while the event loop runs late, messages of connections without a seat wait their turn.

Players seated in an unfinished match are served as their messages come; everything else (lobby
reads, spectators, analyses, exhibitions, connections not yet said hello) waits here, unread, and
is let through a few at a time, the networks in turns (one message of each network that has one
waiting, then again). How many pass per step follows the loop itself: the gate sleeps one step and
measures how late it woke and how much of a core the loop's thread used lately (a moving average);
on time and under its share (`busy`), one more passes per step than the last time, else half as
many (at least one every five steps). The share leaves the rest of the time, and the interpreter's
lock, to the threads that serve seated players too: their bots and the database writer. A waiting
connection's further frames stay in its socket, so the flood costs the loop nothing until its turn
(TCP holds the rest back).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque

STEP_S = 0.01
"""How often the gate lets some through (and measures the loop's lateness)."""
LATE_S = 0.01
"""A step that woke later than this counts as the loop falling behind: fewer pass."""
MAX_PER_STEP = 64.0
MIN_PER_STEP = 0.2
BUSY = 0.5
"""The share of a core the loop's thread may use while messages wait here; past it, fewer pass."""


class SeatlessGate:
    """Waiting messages by network, let through in turns at a pace the loop keeps up with."""

    def __init__(self, step: float = STEP_S, late: float = LATE_S, max_per_step: float = MAX_PER_STEP,
                 busy: float = BUSY) -> None:
        self.step = step
        self.late = late
        self.busy = busy
        self.max_per_step = max_per_step
        self.per_step = 1.0
        """Messages let through per step (a fraction: one every few steps)."""
        self.used = 0.0
        """The share of a core the loop's thread used lately (a moving average over about ten steps)."""
        self._credit = 0.0
        self.queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self.waiting = 0
        """Messages waiting now."""
        self.held = 0
        """Messages that waited here since the start."""
        self._task: asyncio.Task[None] | None = None

    async def wait(self, network: str, gone: asyncio.Future[None] | None = None) -> None:
        """Wait for this network's turn (the caller then reads and serves one message), or until `gone` is done
        (the connection closed: its handler ends at once instead of holding its memory and its slot until its
        turn; the gate then passes it by without counting it)."""
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        queue = self.queues.get(network)
        if queue is None:
            queue = self.queues[network] = deque()
        queue.append(turn)
        self.waiting += 1
        self.held += 1
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="seatless-gate")
        if gone is None:
            await turn
            return

        def let_go(_: object) -> None:
            """The connection closed while it waited."""
            if not turn.done():
                turn.set_result(None)

        gone.add_done_callback(let_go)
        try:
            await turn
        finally:
            gone.remove_done_callback(let_go)

    def release(self, count: int) -> int:
        """Let up to `count` waiting messages through, one per network in turn; how many went."""
        went = 0
        while went < count and self.queues:
            network, queue = self.queues.popitem(last=False)
            turn = queue.popleft()
            self.waiting -= 1
            if queue:
                self.queues[network] = queue  # its next message waits for the other networks' turns
            if not turn.done():  # not cancelled (the connection's handler was)
                turn.set_result(None)
                went += 1
        return went

    async def _run(self) -> None:
        """Let waiting messages through, more per step while the loop keeps time, fewer when it falls behind."""
        loop = asyncio.get_running_loop()
        while self.waiting:
            start, cpu = loop.time(), time.thread_time()
            await asyncio.sleep(self.step)
            took = loop.time() - start
            self.used = 0.9 * self.used + 0.1 * (time.thread_time() - cpu) / took
            if took - self.step > self.late or self.used > self.busy:
                self.per_step = max(MIN_PER_STEP, self.per_step / 2)
            else:
                self.per_step = min(self.max_per_step, self.per_step + 1)
            self._credit = min(self._credit + self.per_step, max(1.0, self.per_step))
            self._credit -= self.release(int(self._credit))

    def close(self) -> None:
        """Let every waiter go (the server is stopping) and stop the gate's task."""
        self.release(self.waiting)
        if self._task is not None:
            self._task.cancel()
            self._task = None

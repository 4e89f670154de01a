"""Position analysis for clients (the replay screen's solver values), off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from protocol.errors import NotationError, TooManyError
from protocol.messages import Analyse, Analysis
from protocol.position import Position, Side
from protocol.variant import Variant
from server.hosted import lower_priority
from server.session import Peer

MAX_ENGINES = 4
MAX_QUEUED = 16
"""Analyses queued or running for the whole server; more are refused with `too_many`."""
CROWDED_BUDGET_MS = 1000
"""The most an analysis may think while other analyses wait, so a queue of them drains quickly."""
MAX_PER_ADDRESS = 1
"""Analyses queued or running for one network address (so a few addresses cannot fill the queue)."""


class Analyst:
    """Keeps a few search engines (one per variant) and answers `analyse` requests within a budget."""

    def __init__(self, max_queued: int = MAX_QUEUED, max_per_address: int = MAX_PER_ADDRESS) -> None:
        self.max_queued = max_queued
        self.max_per_address = max_per_address
        self.pending = 0
        self._engines: OrderedDict[Variant, Any] = OrderedDict()
        self._guard = threading.Lock()
        # one core at most, below the event loop and the bots of games with a person
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="analysis", initializer=lower_priority)

    def _engine(self, variant: Variant) -> Any:
        """The engine of a variant, made on first use (least recently used ones are dropped)."""
        from bots.solver import Engine  # the bots are optional for everything else the server does

        with self._guard:
            engine = self._engines.pop(variant, None) or Engine(variant, tt_log2=20, workers=1)
            self._engines[variant] = engine
            while len(self._engines) > MAX_ENGINES:
                self._engines.popitem(last=False)
            return engine

    def analyse(self, msg: Analyse) -> Analysis:
        """South's store minus North's at the end under the best play found, and the best move."""
        variant = Variant.parse(msg.variant)
        position = Position.from_fen(variant, msg.position).check_possible()
        if position.over:
            return Analysis(position=msg.position, value=int(position.margin), best=[], exact=True, depth=0)
        if position.transfer_pending or not position.legal_bins():
            raise NotationError("only positions where a side sows can be analysed")
        engine = self._engine(variant)
        budget_ms = msg.budget_ms if self.pending <= 1 else min(msg.budget_ms, CROWDED_BUDGET_MS)
        best, mover_value, exact, depth = engine.best_by_deepening(position, budget_ms / 1000)
        sign = 1 if position.to_move == Side.SOUTH else -1
        return Analysis(position=msg.position, value=int(position.margin) + sign * int(mover_value),
                        best=[best], exact=bool(exact), depth=int(depth))

    async def aanalyse(self, msg: Analyse, peer: Peer | None = None,
                       gone: Callable[[], Awaitable[object]] | None = None) -> Analysis | None:
        """`analyse` in the analysis thread (the C search releases the GIL), within the queue's bounds.

        At most `max_queued` analyses wait or run, `max_per_address` of them for one `peer`;
        more are refused with `too_many`. If `gone()` (the connection's closing) completes first,
        a queued analysis is cancelled and one already running is left to end within its budget
        (the answer is then None: there is no one to send it to).
        """
        if self.pending >= self.max_queued:
            raise TooManyError(f"the analysis queue is full ({self.max_queued}): try again shortly")
        if peer is not None and peer.analyses >= self.max_per_address:
            raise TooManyError(f"at most {self.max_per_address} analyses at once from one address")
        self.pending += 1
        if peer is not None:
            peer.analyses += 1
        work = asyncio.get_running_loop().run_in_executor(self._pool, self.analyse, msg)
        try:
            if gone is None:
                return await work
            closed: asyncio.Future[Any] = asyncio.ensure_future(gone())
            waiting: set[asyncio.Future[Any]] = {work, closed}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            if work not in done:
                work.cancel()
                return None
            return work.result()
        finally:
            self.pending -= 1
            if peer is not None:
                peer.analyses -= 1

    def close(self) -> None:
        """Stop the analysis thread once its queued requests are done."""
        self._pool.shutdown(wait=False, cancel_futures=True)

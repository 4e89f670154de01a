"""Position analysis for clients (the replay screen's solver values), off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from protocol.errors import NotationError
from protocol.messages import Analyse, Analysis
from protocol.position import Position, Side
from protocol.variant import Variant

MAX_ENGINES = 4


class Analyst:
    """Keeps a few search engines (one per variant) and answers `analyse` requests within a budget."""

    def __init__(self) -> None:
        self._engines: OrderedDict[Variant, Any] = OrderedDict()
        self._guard = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="analysis")  # one core at most

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
        position = Position.from_fen(variant, msg.position)
        if position.over:
            return Analysis(position=msg.position, value=int(position.margin), best=[], exact=True, depth=0)
        if position.transfer_pending or not position.legal_bins():
            raise NotationError("only positions where a side sows can be analysed")
        engine = self._engine(variant)
        best, mover_value, exact, depth = engine.best_by_deepening(position, msg.budget_ms / 1000)
        sign = 1 if position.to_move == Side.SOUTH else -1
        return Analysis(position=msg.position, value=int(position.margin) + sign * int(mover_value),
                        best=[best], exact=bool(exact), depth=int(depth))

    async def aanalyse(self, msg: Analyse) -> Analysis:
        """`analyse` in the analysis thread (the C search releases the GIL); requests queue there."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.analyse, msg)

    def close(self) -> None:
        """Stop the analysis thread once its queued requests are done."""
        self._pool.shutdown(wait=False, cancel_futures=True)

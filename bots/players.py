"""Bot players, named by a string: `random`, `greedy`, `alphabeta:N`, `perfect[:SEEDS]`.

Each has one async method, `choose(position, budget_s)`, that returns a legal action. The
searches run in a worker thread (`asyncio.to_thread`) and the C core releases the GIL, so
an event loop keeps serving while a bot thinks. Every bot answers the pie-rule offer (swap
when the position favours the opener, South) and chooses the opening transfer.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from typing import Protocol, runtime_checkable

from bots.solver import Engine, relative_board
from protocol.actions import Action, Sow, Swap, Transfer
from protocol.errors import KalahError
from protocol.position import Position, Side
from protocol.variant import Variant

DEFAULT_PERFECT_EGDB = int(os.environ.get("KALAH_BOT_EGDB_SEEDS", "12"))
PLAYER_NAMES = ("random", "greedy", "alphabeta:N", "perfect", "perfect:SEEDS")


class UnknownPlayerError(KalahError, ValueError):
    """A bot name that `make_player` does not know."""

    code = "unknown_player"


@runtime_checkable
class Player(Protocol):
    """Anything that chooses an action for a position within a time budget."""

    name: str

    async def choose(self, position: Position, budget_s: float) -> Action:
        """A legal action for the side to move."""
        ...


def _plain(variant: Variant) -> Variant:
    """The variant without its clock: engines do not depend on it."""
    return variant.with_options(time_control=None) if variant.time_control is not None else variant


def greedy_gain(engine: Engine, board: tuple[int, ...]) -> tuple[int, int]:
    """(best immediate gain following extra turns, pit achieving it) for a mover-relative board."""
    best, best_pit = -(10**6), -1
    for pit, child, gain, extra, over in engine.children(board):
        total = gain + (greedy_gain(engine, child)[0] if extra and not over else 0)
        if total > best:
            best, best_pit = total, pit
    return best, best_pit


class SearchPlayer:
    """Shared machinery: one engine per variant, pie rule and opening transfer by evaluation."""

    name = "search"
    egdb_seeds = 0

    def __init__(self) -> None:
        self._engines: dict[Variant, Engine] = {}
        self._guard = threading.Lock()

    def engine(self, variant: Variant) -> Engine:
        """This player's engine for a variant (built on first need; safe from several threads)."""
        v = _plain(variant)
        with self._guard:
            if v not in self._engines:
                self._engines[v] = Engine(v, tt_log2=20, egdb_seeds=self.egdb_seeds, workers=1)
            return self._engines[v]

    def evaluate(self, position: Position, deadline: float) -> int:
        """Estimated final margin for South of a sowing position."""
        raise NotImplementedError

    def sow(self, position: Position, deadline: float) -> int:
        """The bin to sow from."""
        raise NotImplementedError

    def decide(self, position: Position, budget_s: float) -> Action:
        """The action for a position (runs in a worker thread)."""
        deadline = time.monotonic() + max(0.01, budget_s)
        if position.transfer_pending:
            return self.transfer(position, deadline)
        # After a swap the board stands and the opener moves as North: the swapper
        # gains exactly when the position is good for South.
        if position.swap_offered:
            half = time.monotonic() + (deadline - time.monotonic()) / 2
            if self.evaluate(position, half) > 0:
                return Swap()
        bins = position.legal_bins()
        if len(bins) == 1:
            return Sow(bins[0])
        return Sow(self.sow(position, deadline))

    def transfer(self, position: Position, deadline: float) -> Action:
        """North's opening transfer: the one leaving South the worst estimated margin."""
        options = [a for a in position.legal_actions() if isinstance(a, Transfer)]
        best: Action = Transfer()
        best_v: int | None = None
        for index, action in enumerate(options):
            left = deadline - time.monotonic()
            if best_v is not None and left < 0:
                break
            after = position.apply(action)
            share = time.monotonic() + left / max(1, len(options) - index)
            v = after.margin if after.over else self.evaluate(after, share)
            if best_v is None or v < best_v:
                best, best_v = action, v
        return best

    async def choose(self, position: Position, budget_s: float) -> Action:
        """A legal action for the side to move, chosen in a worker thread."""
        return await asyncio.to_thread(self.decide, position, budget_s)


class RandomPlayer(SearchPlayer):
    """Uniformly random sowing and transfer; swaps when the opener is ahead in stores."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self._rng = random.Random(seed)

    def evaluate(self, position: Position, deadline: float) -> int:
        """The stores' margin now."""
        return int(position.margin)

    def sow(self, position: Position, deadline: float) -> int:
        """A random legal bin."""
        return self._rng.choice(position.legal_bins())

    def transfer(self, position: Position, deadline: float) -> Action:
        """A random transfer, or none."""
        return self._rng.choice([a for a in position.legal_actions() if isinstance(a, Transfer)])


class GreedyPlayer(SearchPlayer):
    """The move with the best immediate store gain, following extra turns."""

    name = "greedy"

    def evaluate(self, position: Position, deadline: float) -> int:
        """Stores' margin after the mover's greedy turn."""
        gain, _ = greedy_gain(self.engine(position.variant), relative_board(position))
        return int(position.margin) + (gain if position.to_move == Side.SOUTH else -gain)

    def sow(self, position: Position, deadline: float) -> int:
        """The greedy bin."""
        pit = greedy_gain(self.engine(position.variant), relative_board(position))[1]
        return pit + 1 if position.to_move == Side.SOUTH else pit + position.variant.houses + 2


class AlphaBetaPlayer(SearchPlayer):
    """Fixed-depth alpha-beta (depth counted in sowings), store difference at the horizon."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth = depth
        self.name = f"alphabeta:{depth}"

    def evaluate(self, position: Position, deadline: float) -> int:
        """Depth-limited value for South (the stores' margin if time runs out)."""
        engine = self.engine(position.variant)
        try:
            with engine.lock:
                v = engine.mtdf(relative_board(position), 0, self.depth, deadline)
        except TimeoutError:
            v = 0
        return int(position.margin) + (v if position.to_move == Side.SOUTH else -v)

    def sow(self, position: Position, deadline: float) -> int:
        """The best bin of a depth-N search (of the deepest completed one if time runs out)."""
        engine = self.engine(position.variant)
        return engine.best_by_deepening(position, deadline - time.monotonic(), self.depth - 1)[0]


class PerfectPlayer(SearchPlayer):
    """Exact play when the value is proved within the budget, else the deepest search."""

    def __init__(self, egdb_seeds: int = DEFAULT_PERFECT_EGDB) -> None:
        super().__init__()
        self.egdb_seeds = egdb_seeds
        self.name = "perfect" if egdb_seeds == DEFAULT_PERFECT_EGDB else f"perfect:{egdb_seeds}"

    def evaluate(self, position: Position, deadline: float) -> int:
        """Value for South by iterative deepening within the deadline."""
        engine = self.engine(position.variant)
        _, v, _, _ = engine.best_by_deepening(position, deadline - time.monotonic())
        return int(position.margin) + (v if position.to_move == Side.SOUTH else -v)

    def sow(self, position: Position, deadline: float) -> int:
        """The best bin proved or found within the deadline."""
        engine = self.engine(position.variant)
        return engine.best_by_deepening(position, 0.9 * (deadline - time.monotonic()))[0]


def make_player(name: str) -> SearchPlayer:
    """A bot by name: `random`, `greedy`, `alphabeta:N` (1..60), `perfect` or `perfect:SEEDS`."""
    kind, _, arg = name.strip().lower().partition(":")
    try:
        if kind == "random" and not arg:
            return RandomPlayer()
        if kind == "greedy" and not arg:
            return GreedyPlayer()
        if kind == "alphabeta" and arg.isdigit() and 1 <= int(arg) <= 60:
            return AlphaBetaPlayer(int(arg))
        if kind == "perfect" and (not arg or (arg.isdigit() and int(arg) <= 30)):
            return PerfectPlayer(int(arg) if arg else DEFAULT_PERFECT_EGDB)
    except ValueError:
        pass
    raise UnknownPlayerError(f"unknown bot {name!r}: expected one of {', '.join(PLAYER_NAMES)}")

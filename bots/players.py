"""Bot players by canonical id: `random`, `greedy`, `alphabeta:N`, `strong`, `perfect` (see `bots.names`).

Every player is a `Player`: a synchronous `decide(position, budget_s)` that returns a legal
action within about `budget_s` seconds. A server runs it in a worker thread (the C core
releases the GIL, so its event loop keeps serving). Searching players borrow an engine from
an `Engines` pool for each decision, so one player can serve several matches at once. Every
bot answers the pie-rule offer (swap when the position favours the opener, South) and
chooses the opening transfer.
"""

from __future__ import annotations

import logging
import os
import random
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace

from bots import pie
from bots.book import house_key
from bots.core import Player, mover_value, pit_to_bin, relative_board, south_value
from bots.engines import Engines
from bots.names import BotNameError, canonical_bot
from bots.solver import Engine, auto_tt_bits
from protocol.actions import Action, Sow, Swap, Transfer
from protocol.position import Position
from protocol.variant import Variant

__all__ = ["BotNameError", "Decision", "Player", "make_player"]

log = logging.getLogger(__name__)

DEFAULT_BOT_EGDB = int(os.environ.get("KALAH_BOT_EGDB_SEEDS", "24"))
"""Largest database level the `strong` and `perfect` bots use (those on disk; 24 seeds: 1.2 GB a rule set)."""
PROOF_SHARE = 0.8
"""The share of a move's budget the perfect bot gives a proof before it falls back on deepening."""
MAX_BOT_TT_LOG2 = {"c": 20, "py": 16}
"""Largest transposition table of a bot's engine (2**N entries): 24 MiB in C, ~13 MB for the twin."""


def greedy_gain(engine: Engine, board: tuple[int, ...]) -> tuple[int, int]:
    """(best immediate gain following extra turns, pit achieving it) for a mover-relative board."""
    best, best_pit = -(10**6), -1
    for pit, child, gain, extra, over in engine.children(board):
        total = gain + (greedy_gain(engine, child)[0] if extra and not over else 0)
        if total > best:
            best, best_pit = total, pit
    return best, best_pit


def _need(engine: Engine | None) -> Engine:
    """The engine a searching player was lent."""
    if engine is None:
        raise RuntimeError("this player searches: it needs an engine")
    return engine


class SearchPlayer:
    """Shared machinery: an engine borrowed per decision, pie rule and opening transfer by evaluation."""

    name = "search"
    egdb_seeds = 0
    searches = True

    def __init__(self, engines: Engines | None = None) -> None:
        self.engines = engines if engines is not None else Engines()

    def tt_log2(self, variant: Variant) -> int:
        """Table size (log2 of entries) of this player's engine for `variant`."""
        return min(MAX_BOT_TT_LOG2["py" if variant.relay else self.engines.impl], auto_tt_bits(variant, solve=False))

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """Estimated final margin for South of a sowing position."""
        raise NotImplementedError

    def sow(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """The bin to sow from."""
        raise NotImplementedError

    def estimate(self, position: Position, budget_s: float) -> int:
        """South's estimated final margin of a sowing position, as the swap decision sees it."""
        deadline = time.monotonic() + max(0.01, budget_s)
        if not self.searches:
            return self.evaluate(position, deadline, None)
        with self.engines.borrow(self.name, position.variant, self.tt_log2(position.variant),
                                 self.egdb_seeds) as engine:
            return self.evaluate(position, deadline, engine)

    def decide(self, position: Position, budget_s: float) -> Action:
        """The action for a position (blocks for up to about `budget_s`: call it off an event loop)."""
        deadline = time.monotonic() + max(0.01, budget_s)
        if not self.searches:
            return self._decide(position, deadline, None)
        with self.engines.borrow(self.name, position.variant, self.tt_log2(position.variant),
                                 self.egdb_seeds) as engine:
            return self._decide(position, deadline, engine)

    def _decide(self, position: Position, deadline: float, engine: Engine | None) -> Action:
        """`decide` with the engine lent for it."""
        if position.transfer_pending:
            return self.transfer(position, deadline, engine)
        # After a swap the board stands and the opener moves as North: the swapper
        # gains exactly when the position is good for South.
        if position.swap_offered:
            half = time.monotonic() + (deadline - time.monotonic()) / 2
            if self.evaluate(position, half, engine) > 0:
                return Swap()
        bins = position.legal_bins()
        if len(bins) == 1:
            return Sow(bins[0])
        return Sow(self.sow(position, deadline, engine))

    def transfer(self, position: Position, deadline: float, engine: Engine | None) -> Action:
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
            v = after.margin if after.over else self.evaluate(after, share, engine)
            if best_v is None or v < best_v:
                best, best_v = action, v
        return best


class RandomPlayer(SearchPlayer):
    """Uniformly random sowing and transfer; swaps when the opener is ahead in stores."""

    name = "random"
    searches = False

    def __init__(self, seed: int | None = None, engines: Engines | None = None) -> None:
        super().__init__(engines)
        self._rng = random.Random(seed)

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """The stores' margin now."""
        return int(position.margin)

    def sow(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """A random legal bin."""
        return self._rng.choice(position.legal_bins())

    def transfer(self, position: Position, deadline: float, engine: Engine | None) -> Action:
        """A random transfer, or none."""
        return self._rng.choice([a for a in position.legal_actions() if isinstance(a, Transfer)])


class GreedyPlayer(SearchPlayer):
    """The move with the best immediate store gain, following extra turns."""

    name = "greedy"

    def tt_log2(self, variant: Variant) -> int:
        """The smallest table: the greedy bot only plays moves out, it never searches."""
        return 4

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """Stores' margin after the mover's greedy turn."""
        return south_value(position, greedy_gain(_need(engine), relative_board(position))[0])

    def sow(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """The greedy bin."""
        return pit_to_bin(position, greedy_gain(_need(engine), relative_board(position))[1])


class AlphaBetaPlayer(SearchPlayer):
    """Fixed-depth alpha-beta (depth counted in sowings), store difference at the horizon."""

    def __init__(self, depth: int, engines: Engines | None = None) -> None:
        super().__init__(engines)
        self.depth = depth
        self.name = f"alphabeta:{depth}"

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """Depth-limited value for South (the stores' margin if time runs out)."""
        e = _need(engine)
        try:
            with e.lock:
                v = e.mtdf(relative_board(position), 0, self.depth, deadline)
        except TimeoutError:
            v = 0
        return south_value(position, v)

    def sow(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """The best bin of a depth-N search (of the deepest completed one if time runs out)."""
        return _need(engine).best_by_deepening(position, deadline - time.monotonic(), self.depth - 1)[0]


class StrongPlayer(SearchPlayer):
    """Iterative deepening with the databases on disk: exact when the last iteration ends in time, else the deepest.

    It never claims to be perfect: where no proof fits in the budget it plays the best move of
    the deepest search it finished (`strong`).
    """

    name = "strong"

    def __init__(self, egdb_seeds: int = DEFAULT_BOT_EGDB, engines: Engines | None = None) -> None:
        super().__init__(engines)
        self.egdb_seeds = egdb_seeds

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """Value for South by iterative deepening within the deadline."""
        _, v, _, _ = _need(engine).best_by_deepening(position, deadline - time.monotonic())
        return south_value(position, v)

    def sow(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """The best bin proved or found within the deadline."""
        return _need(engine).best_by_deepening(position, 0.9 * (deadline - time.monotonic()))[0]


@dataclass(frozen=True)
class Decision:
    """A bot's action and how it was found: `exact` when the move is proved best (book, proof, forced)."""

    action: Action
    value: int | None
    """South's final margin as the bot found it (proved when `exact`; None: not evaluated)."""
    exact: bool
    source: str
    """`book`, `proof`, `forced` (one legal move), `keep` (proved to keep the game's value, not proved best: `value` is
    that value), `search` (not proved in time) or `estimate` (swap, transfer)."""
    depth: int = -1
    seconds: float = 0.0
    databases: bool = False
    """Proved by the endgame databases: the position's seeds in play are within the levels the search had."""

    @property
    def origin(self) -> str:
        """Where the move comes from, as a server logs it: `book`, `databases`, `proof` (proved by a search within
        the budget), `forced`, or `search` (not proved: a move keeping the game's value, the deepest search
        finished, an estimate)."""
        if self.source in ("book", "forced"):
            return self.source
        if not self.exact:
            return "search"
        return "databases" if self.databases else "proof"


class PerfectPlayer(StrongPlayer):
    """Proved moves: the book, else a proof within most of the budget, else (said in the log) the deepest search.

    As the opener under the pie rule it plays its first turn knowing North may swap (`bots.pie`).
    A book (`bots.book`) holds the positions of solved games whose proof takes longer than a
    move; the databases on disk up to `egdb_seeds` seeds (`kalah egdb build` makes them; the
    bot never builds one) make the rest provable within the budget. Where neither suffices
    (larger games, databases missing) the move comes from the deepest search finished, and
    the decision says `exact=False` and is logged.
    """

    name = "perfect"

    def decide(self, position: Position, budget_s: float) -> Action:
        """The action for a position (blocks for up to about `budget_s`: call it off an event loop)."""
        return self.explain(position, budget_s).action

    def explain(self, position: Position, budget_s: float) -> Decision:
        """The decision for a position and how it was reached (logged: at INFO when the move is not proved)."""
        t0 = time.monotonic()
        deadline = t0 + max(0.01, budget_s)
        decision = self._explain(position, t0, deadline)
        decision = replace(decision, seconds=time.monotonic() - t0)
        if decision.exact:
            log.debug("perfect %s: %s (%s, value %s)", position.variant.text(), decision.action,
                      decision.source, decision.value)
        elif decision.source == "keep":
            log.info("perfect %s: %s keeps the game's value %+d, the best move not proved within %.2f s; position %s",
                     position.variant.text(), decision.action, decision.value, budget_s, position.fen())
        else:
            log.info("perfect %s: %s not proved within %.2f s (%s, depth %d, value %s); position %s",
                     position.variant.text(), decision.action, budget_s, decision.source, decision.depth,
                     decision.value, position.fen())
        return decision

    def _explain(self, position: Position, t0: float, deadline: float) -> Decision:
        """`explain` without the timing and the log."""
        if position.transfer_pending:
            with self._borrow(position) as engine:
                return Decision(self.transfer(position, deadline, engine), None, False, "estimate")
        board = relative_board(position)
        book = self.engines.book(position.variant)
        entry = book.get(board) if book is not None else None
        if position.swap_offered:
            if entry is not None:
                value, exact = south_value(position, entry.value), True
            else:
                with self._borrow(position) as engine:
                    value, exact = self._value(position, t0 + (deadline - t0) / 2, engine)
            if value > 0:
                return Decision(Swap(), value, exact, "proof" if exact else "estimate")
        bins = position.legal_bins()
        if len(bins) == 1:
            return Decision(Sow(bins[0]), None, True, "forced")
        if pie.in_first_turn(position):
            with self._borrow(position) as engine:
                return self._pie_opening(position, deadline, engine)
        return self.best_sowing(position, deadline, self.game_value(position))

    def game_value(self, position: Position) -> int | None:
        """The final margin (South's) the book proves for the game's start, which a perfect player keeps throughout:
        None without the pie rule's swap or the opening transfer, or when the book does not hold the start."""
        variant = position.variant
        if variant.pie or variant.opening_transfer:
            return None
        book = self.engines.book(variant)
        start = Position.initial(variant)
        entry = book.get(relative_board(start)) if book is not None else None
        return None if entry is None else south_value(start, entry.value)

    def best_sowing(self, position: Position, deadline: float, keep: int | None = None) -> Decision:
        """The best sowing of a position where the mover sows: the book, else a proof within most of the
        time left, else the deepest search finished (a swap offer or the pie rule's first turn are not
        weighed: this is the board's own value, as an analysis shows it).

        With `keep` (South's final margin the mover has kept so far: `game_value`), a move proved to keep it is
        looked for first, within most of the time, and played (source `keep`) if the best move is then not proved
        in the time left: where a proof of the best move takes longer than a move (mostly after the opponent
        gave value away), the game's value is still kept. Where the book records a complete build of the start with
        the databases the engine has (`Book.complete`), the proof comes first instead (every position off the book
        was proved within the build's node limit), and a move keeping the value is looked for only if it runs out."""
        book = self.engines.book(position.variant)
        board = relative_board(position)
        entry = book.get(board) if book is not None else None
        if entry is not None:
            self.engines.preload(position.variant, self.egdb_seeds, timeout=0)  # read them while the book plays
            return Decision(Sow(pit_to_bin(position, entry.pit)), south_value(position, entry.value), True, "book")
        # Databases still being read (a server's first game of a rule set): wait a little for the first ones.
        self.engines.ready(position.variant, self.egdb_seeds, (deadline - time.monotonic()) / 2)
        with self._borrow(position) as engine:
            levels = len(engine.levels) - 1 if engine.levels else 0
            stored = sum(house_key(board)) <= levels
            if engine.exact_possible:
                # A complete book (every position the bot can meet off it proved within its node limit with these
                # databases): the proof of the best move comes first, a move keeping the value only if it runs out.
                first = book is not None and book.complete(position.variant, levels) is not None
                kept = None if keep is None or first else self._keep(position, board, keep, deadline, engine)
                try:
                    pit, v = engine.prove(board, t_share(deadline))
                    return Decision(Sow(pit_to_bin(position, pit)), south_value(position, v), True, "proof",
                                    databases=stored)
                except TimeoutError:
                    pass
                if first and keep is not None:
                    kept = self._keep(position, board, keep, deadline, engine)
                if kept is not None:
                    return Decision(Sow(pit_to_bin(position, kept)), keep, False, "keep")
            b, v, exact, depth = engine.best_by_deepening(position, 0.9 * (deadline - time.monotonic()))
            return Decision(Sow(b), south_value(position, v), exact, "proof" if exact else "search", depth,
                            databases=exact and stored)

    @staticmethod
    def _keep(position: Position, board: tuple[int, ...], keep: int, deadline: float, engine: Engine) -> int | None:
        """A pit proved (within most of the time left) to keep South's final margin `keep` for the mover, else None."""
        try:
            return engine.keep(board, mover_value(position, keep), t_share(deadline))
        except TimeoutError:
            return None

    def _pie_opening(self, position: Position, deadline: float, engine: Engine) -> Decision:
        """The opener's sowing under the pie rule: the board North is offered nearest a draw (`bots.pie`).

        The book's move is not used here: it is best only when North cannot swap. Each board North
        may be offered is valued (book, proof, else deepening) in an equal share of the time left.
        """
        def value_of(after: Position, left: int) -> tuple[int, bool]:
            """South's value of a board offered to North, in its share of the time."""
            share = time.monotonic() + 0.9 * max(0.0, deadline - time.monotonic()) / max(1, left)
            return self._value(after, share, engine)

        choice = pie.choose(position, value_of)
        return Decision(Sow(choice.bin), choice.line.south, choice.exact, "proof" if choice.exact else "search")

    def _borrow(self, position: Position) -> AbstractContextManager[Engine]:
        """An engine for this player's search of the position's variant."""
        return self.engines.borrow(self.name, position.variant, self.tt_log2(position.variant), self.egdb_seeds)

    def _value(self, position: Position, deadline: float, engine: Engine) -> tuple[int, bool]:
        """(South's value, proved) of a sowing position: the book, a proof by the deadline, else deepening."""
        book = self.engines.book(position.variant)
        entry = book.get(relative_board(position)) if book is not None else None
        if entry is not None:
            return south_value(position, entry.value), True
        if engine.exact_possible:
            try:
                with engine.lock:
                    v = engine.mtdf(relative_board(position), 0, -1, t_share(deadline))
                return south_value(position, v), True
            except TimeoutError:
                pass
        _, v, exact, _ = engine.best_by_deepening(position, deadline - time.monotonic())
        return south_value(position, v), exact

    def evaluate(self, position: Position, deadline: float, engine: Engine | None) -> int:
        """Value for South: the book, a proof within most of the time, else iterative deepening."""
        return self._value(position, deadline, _need(engine))[0]


def t_share(deadline: float) -> float:
    """The part of the time left before `deadline` that a proof may take (the rest is for a fallback search)."""
    now = time.monotonic()
    return now + PROOF_SHARE * max(0.0, deadline - now)


def make_player(bot_id: str, engines: Engines | None = None) -> SearchPlayer:
    """The bot of a canonical id (`random`, `greedy`, `alphabeta:N`, `strong`, `perfect`); else `BotNameError`.

    Players made with the same `engines` share its memory bound.
    """
    bot_id = canonical_bot(bot_id)
    if bot_id == "random":
        return RandomPlayer(engines=engines)
    if bot_id == "greedy":
        return GreedyPlayer(engines)
    if bot_id == "perfect":
        return PerfectPlayer(engines=engines)
    if bot_id == "strong":
        return StrongPlayer(engines=engines)
    return AlphaBetaPlayer(int(bot_id.partition(":")[2]), engines)

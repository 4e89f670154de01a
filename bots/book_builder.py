"""Building a book: breadth first over the positions a perfect player can face, proving the hard ones.

From a start position, the player may sit either side: it moves first (the start), or second
(every position after the first side's first turn). At each position where it is to move,
a proof from an empty table (`CHECK_TT_LOG2`) is tried within `node_limit` nodes: a position
proved within it is easy and left to the board; a hard one is proved without limit (with a
large warm table) and goes into the book. Then the player's move is played (the same move
the book or `Engine.prove` gives at the board), and, while the game is within `depth` turns
of the start, every turn the opponent may answer with (all its sowings up to the turn
passing) leads to a position to look at; past that depth, only the game the player plays
against itself is followed. Easy positions off that game are not followed further: their
successors are easier still.

The book is saved as it grows (`save`: after each position added, by default), so an interrupted
build resumes: positions already in the book are not proved again, nor easy ones already found
(`known_easy`, given back by `on_easy` as they are found: `book.EasyLog` keeps them in a file); a
resumed build walks the positions already done again (lookups, no proofs) and goes on from there.
A build killed at any moment (SIGKILL included) loses at most the position it was proving.

A build whose walk ends with every answer followed (`Plan.keep` off, and no answer left unfollowed
for want of `depth`) is complete (`BuildStats.complete`): the caller records it in the book's
header (`book.Completion`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from bots.book import CHECK_TT_LOG2, DEFAULT_DEPTH, DEFAULT_NODE_LIMIT, Book, Entry, Key, house_key
from bots.core import core_name
from bots.solver import Engine, proof_order, relative_board
from protocol.position import Position

Board = tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    """What to put in a book: how many turns in every answer is followed, the hardness limit, per-move values."""

    depth: int = DEFAULT_DEPTH
    """Turns from the start within which every answer of the opponent is followed."""
    node_limit: int = DEFAULT_NODE_LIMIT
    """Positions whose empty-table proof takes more nodes than this go into the book."""
    per_move_depth: int = -1
    """Book positions up to this many turns in also get every move's value (-1: none)."""
    check_tt_log2: int = CHECK_TT_LOG2
    check_egdb_seeds: int | None = None
    """Database levels of the empty-table proof that decides hardness (the bot's; None: all the engine has). The
    hard positions' own proofs may use more levels: fewer nodes, the same values."""
    keep: bool = False
    """Off the player's own game, a position is also easy when a move keeping the game's value is proved within the
    node limit (`Engine.keep`, as the bot tries at the board): the opponent's mistakes are then not followed."""


@dataclass
class BuildStats:
    """A build's progress: positions proved and left to the board, what is queued, time and nodes."""

    entries: int = 0
    added: int = 0
    easy: int = 0
    queued: int = 0
    depth: int = 0
    seconds: float = 0.0
    nodes: int = 0
    easy_known: int = 0
    """Easy positions met again whose best house was already known (not proved again)."""
    kept: int = 0
    """Of the easy positions, those where only a move keeping the game's value was proved (`Plan.keep`)."""
    cut: bool = False
    """Whether some answer of the opponent was not followed because the walk reached `Plan.depth`."""
    complete: bool = False
    """Whether the walk ended with every position the player can meet in the book or easy (`Plan.keep` off, nothing
    cut at the depth): set when `run` ends without being interrupted."""


class Builder:
    """Adds the hard positions of a start to a book (see the module's docstring): the book is saved once a position
    was added and `save_every_s` passed since the last save (0: after each position added)."""

    def __init__(self, engine: Engine, book: Book, plan: Plan, save: Callable[[Book], None] | None = None,
                 progress: Callable[[BuildStats], None] | None = None, save_every_s: float = 0.0,
                 known_easy: dict[Key, int] | None = None, on_easy: Callable[[Key, int], None] | None = None,
                 known_kept: set[Key] | None = None, on_kept: Callable[[Key], None] | None = None) -> None:
        self.engine = engine
        self.book = book
        self.plan = plan
        self.save = save
        self.progress = progress
        self.save_every_s = save_every_s
        levels = engine.levels if plan.check_egdb_seeds is None else engine.levels[:plan.check_egdb_seeds + 1]
        self.cold = Engine(engine.variant, impl=core_name(engine.module), tt_log2=plan.check_tt_log2,
                           workers=1, levels=levels)
        self.stats = BuildStats(entries=len(book))
        self.known_easy = {} if known_easy is None else known_easy
        self.on_easy = on_easy
        self.known_kept = set() if known_kept is None else known_kept
        """Positions (houses, then the value needed) found easy by a move keeping the game's value (`EasyLog.kept`)."""
        self.on_kept = on_kept

    def replies(self, board: Board) -> list[Board]:
        """Every position where the turn comes back, after each way the side to move can play its turn."""
        out: dict[Board, None] = {}
        stack = [board]
        while stack:
            for _, after, _, extra, over in self.engine.children(stack.pop()):
                if over:
                    continue
                if extra:
                    stack.append(after)
                else:
                    out[after] = None
        return list(out)

    def easy(self, board: Board) -> int | None:
        """The proved best pit if an empty-table proof needs at most the node limit; None if it needs more."""
        self.cold.searcher.clear()
        try:
            pit, _ = self.cold.prove(board, node_limit=self.plan.node_limit)
        except TimeoutError:
            return None
        return pit

    def kept(self, board: Board, need: int) -> bool:
        """Whether a move giving the mover at least `need` from here is proved within the node limit, empty table."""
        self.cold.searcher.clear()
        try:
            return self.cold.keep(board, need, node_limit=self.plan.node_limit) is not None
        except TimeoutError:
            return False

    def solve(self, board: Board, depth: int) -> Entry:
        """A hard position's entry, proved without limits (with every move's value if `depth` is small), each MTD(f)
        starting from a depth-limited guess when the board is far from the databases."""
        if depth > self.plan.per_move_depth:
            pit, value = self.engine.prove(board, guess=self.engine.guess(board))
            return Entry(value, pit)
        kids = self.engine.children(board)
        far = self.engine.far(board)
        with self.engine.lock:
            guesses = self.engine.guesses([kid[1:] for kid in kids]) if far else [0] * len(kids)
            values = {kid[0]: self.engine.child_value(kid[1:], -1, guess, 0.0)
                      for kid, guess in zip(kids, guesses, strict=True)}
        value = max(values.values())
        pit = next(kid[0] for kid in sorted(kids, key=proof_order) if values[kid[0]] == value)
        return Entry(value, pit, tuple(values.get(p) for p in range(self.engine.rules.h)))

    def run(self, start: Position) -> BuildStats:
        """Look at every position of the plan from `start`, adding the hard ones; the stats at the end."""
        t0 = last_save = time.monotonic()
        n0 = int(self.engine.searcher.nodes) + int(self.cold.searcher.nodes)
        first = relative_board(start)
        value = 0
        if self.plan.keep:
            entry = self.book.get(first)
            value = entry.value if entry is not None else self.engine.prove(first)[1]
        h = self.engine.rules.h
        queue: deque[tuple[Board, int, bool, int]] = deque([(first, 0, True, value)])
        saved = 0
        if self.plan.depth >= 1:
            queue.extend((b, 1, False, -value) for b in self.replies(first))
        else:
            self.stats.cut = True
        seen: dict[tuple[int, ...], bool] = {}
        try:
            while queue:
                board, depth, main, target = queue.popleft()
                key = (*house_key(board), board[h] - board[-1]) if self.plan.keep else house_key(board)
                if key in seen and (seen[key] or not main):
                    continue
                seen[key] = main
                pit = self._pit(board, depth, main, target)
                self.stats.queued, self.stats.depth = len(queue), depth
                self.stats.seconds = time.monotonic() - t0
                self.stats.nodes = int(self.engine.searcher.nodes) + int(self.cold.searcher.nodes) - n0
                if self.progress is not None:
                    self.progress(self.stats)
                if pit is not None:
                    queue.extend(self._next(board, pit, depth, main, target))
                    self.stats.queued = len(queue)
                if (self.save is not None and self.stats.added > saved
                        and time.monotonic() - last_save >= self.save_every_s):
                    self.save(self.book)
                    saved, last_save = self.stats.added, time.monotonic()
        finally:
            if self.save is not None and self.stats.added > saved:
                self.save(self.book)
        self.stats.complete = not self.plan.keep and not self.stats.cut
        return self.stats

    def _pit(self, board: Board, depth: int, main: bool, target: int) -> int | None:
        """The player's move at a position (adding it to the book if hard); None if it need not be followed.

        `target` is the final margin the player keeps (the game's value for its seat; `Plan.keep`)."""
        entry = self.book.get(board)
        if entry is not None:
            return entry.pit
        key = house_key(board)
        pit = self.known_easy.get(key)
        if pit is not None:
            self.stats.easy += 1
            self.stats.easy_known += 1
            return pit if main else None
        if self.plan.keep and not main:
            need = target - (board[self.engine.rules.h] - board[-1])
            kept = (*key, need)
            known = kept in self.known_kept
            if known or self.kept(board, need):
                self.stats.easy += 1
                self.stats.kept += 1
                if known:
                    self.stats.easy_known += 1
                else:
                    self.known_kept.add(kept)
                    if self.on_kept is not None:
                        self.on_kept(kept)
                return None
        pit = self.easy(board)
        if pit is not None:
            self.stats.easy += 1
            if self.on_easy is not None:
                self.on_easy(key, pit)
            return pit if main else None
        entry = self.solve(board, depth)
        self.book.entries[key] = entry
        self.stats.added += 1
        self.stats.entries = len(self.book)
        return entry.pit

    def _next(self, board: Board, pit: int, depth: int, main: bool,
              target: int) -> list[tuple[Board, int, bool, int]]:
        """The positions to look at after the player sows `pit` (with the final margin the mover keeps there)."""
        after, _, extra, over = self.engine.module.play(self.engine.rules, board, pit)
        if over:
            return []
        if extra:
            return [(after, depth, main, target)]
        out = [(after, depth + 1, True, -target)] if main else []
        if depth + 2 <= self.plan.depth:
            out += [(b, depth + 2, False, target) for b in self.replies(after)]
        elif len(self.replies(after)) > (1 if main else 0):
            self.stats.cut = True  # answers left unfollowed (on its own game, one is the player's own answer)
        return out

"""Solving positions: an MTD(f) driver over the search core, per-move values, bounded search.

Exact values exist only for acyclic variants (counter-clockwise sowing without relay):
clockwise and relay sowing can repeat positions, and the search does not model the
repetition rule, so those variants get a depth-limited search and `exact=False`.
Relay variants always use the Python twin (the C core does not play relay sowing).

The driver is here, in Python: MTD(f) null-window calls into the core's alpha-beta, each of
which releases the GIL; a bot's iterative deepening is one call (`Searcher.deepen`), so a move
does not take the GIL back between its searches. An exact solve's value runs each null-window search on every core over
one table (the C core's simplified ABDADA: a thread leaves a large subtree another thread is in
for last); per-move values are solved on every core, one searcher (and transposition table) per
thread, which measured faster for them, and a thread with no move left is lent to a move still
being solved (its search recalled and run again on more threads over its table). The endgame
databases are shared read-only.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots import egdb as egdb_mod
from bots import pysearch
from bots.core import (
    IMPLEMENTATIONS,
    Child,
    CoreSearcher,
    SearchCore,
    core_name,
    implementation,
    pit_to_bin,
    relative_board,
    south_value,
    table_bytes,
)
from protocol.position import Position
from protocol.tables import compile_variant
from protocol.variant import Variant

__all__ = ["IMPLEMENTATIONS", "Engine", "Solution", "auto_egdb_seeds", "auto_tt_bits", "implementation",
           "pit_to_bin", "relative_board"]

MAX_DEPTH = 254
GUESS_FAR_SEEDS = 20
"""An exact solve of a board with more seeds than this beyond the databases starts MTD(f) from a guess. Measured
(2026-11-29): the Kalah(6,5) start, 30 seeds beyond 30 levels, took 1.22·10⁹ nodes on two threads from 0 and 5.0·10⁸
from its guess (+11 for +10); Kalah(6,4) with 24 levels (24 beyond) 5% fewer nodes with one; at 20 beyond (28
levels) the guess's second costs as much as it saves."""
GUESS_DEPTH = 20
"""Depth (sowings) of the searches that guess a far board's value for MTD(f)."""
GUESS_TT_LOG2 = 20
SHARED_TT_LOG2 = 24
"""Per-move values with a main table this large (2**24 entries, 384 MiB: boards of more than 48 seeds) are solved
one move after another on every thread over the one table: a table per thread would take Kalah(6,5) with its 29
database levels (7.4 GiB of pages) over 8 GiB, and the moves share what was proved."""
PER_MOVE_LARGE_TT_LOG2 = 22
"""The table of each thread when every move of a board of more than 48 seeds is solved: the moves in parallel, a
2**22-entry table each. Measured on the Kalah(6,5) start with levels 1-31, two threads, quiet (2026-11-29): 5 min 45 s,
2.70·10⁹ nodes, 7.84 GiB; with one shared 2**24-entry table, the moves one after another on both threads: 8 min 53 s,
3.44·10⁹ nodes, 8.02 GiB (2**23 each: 6 min 12 s, 2.69·10⁹)."""
AUTO_EGDB_POSITIONS = 600_000_000
AUTO_EGDB_MAX_SEEDS = 40
"""The largest databases a solve sizes itself (what `kalah solve --egdb-seeds` accepts): tiny boards of many
seeds stop here, where tables of 40 seeds are small and the search does the rest."""
Kid = tuple[int, tuple[int, ...], int, bool, bool]
"""A legal pit with its `Child` outcome."""


def proof_order(kid: Kid) -> tuple[bool, int, int]:
    """Order in which `Engine.prove` tries moves: extra turns, then larger gains, then houses nearer the store."""
    pit, _, gain, extra, _ = kid
    return not extra, -gain, -pit


def auto_egdb_seeds(variant: Variant, budget: int = AUTO_EGDB_POSITIONS) -> int:
    """Database size (seeds) for a solve: at most `budget` positions, and no more than the
    seeds left once two rows' worth have been stored (small games need no big databases)."""
    if not egdb_mod.applies(variant):
        return 0
    seeds = total = 0
    while seeds < min(variant.total_seeds - 2 * variant.houses, AUTO_EGDB_MAX_SEEDS):
        total += pysearch.level_size(variant.houses, seeds + 1)
        if total > budget:
            break
        seeds += 1
    return seeds


def auto_tt_bits(variant: Variant, solve: bool = True, per_move: bool = False) -> int:
    """A transposition table size (log2 of entries, 24 bytes each) fitting the board's seeds: for an exact solve,
    or (`solve=False`) for a bot's iterative deepening, whose depth-limited iterations reuse the table.

    Measured: Kalah(6,4)'s value and every first move search as many nodes on 2**18 to 2**22 entries (databases
    to 24 or 28 seeds; 1.6% more with 16), and Kalah(6,5) positions 8 sowings in on 2**20 to 2**26: most nodes
    lie within a few seeds of the databases, in the small second table. A smaller table is less memory to
    clear and leaves room for the databases' pages (Kalah(6,5) stays within 8 GiB with 28-seed databases);
    the first touch of each of its pages costs (a cold Kalah(6,4) solve of every first move spent 0.12 s of
    system time on two 2**20-entry tables, 0.04 s on 2**18). Every move of a larger board (`per_move`) is solved
    with a smaller table per thread (`PER_MOVE_LARGE_TT_LOG2`), not one shared table."""
    total = variant.total_seeds
    if per_move and total > 48:
        return PER_MOVE_LARGE_TT_LOG2
    return 16 if total <= 24 else (18 if solve else 20) if total <= 48 else 24


@dataclass
class Solution:
    """A solved (or searched) position: values are South's store minus North's at the end."""

    value: int
    best: list[int]
    per_move: dict[int, int] = field(default_factory=dict)
    nodes: int = 0
    seconds: float = 0.0
    exact: bool = True
    depth: int = -1
    source: str = "search"
    """`search`, or `book` when read from a book of proved positions (whose best move is then one of them)."""

    def as_json(self) -> dict[str, Any]:
        """The JSON form of `kalah solve --json`."""
        return {
            "value": self.value,
            "best": self.best,
            "per_move": {str(b): v for b, v in self.per_move.items()},
            "nodes": self.nodes,
            "seconds": round(self.seconds, 4),
            "exact": self.exact,
            "source": self.source,
        }


@dataclass(frozen=True)
class SearchDone:
    """One search call that ended: the mover-relative board, its depth (-1: exact), the window, the value found, its
    nodes and seconds."""

    board: tuple[int, ...]
    depth: int
    alpha: int
    beta: int
    value: int
    nodes: int
    seconds: float
    threads: int


class Engine:
    """One variant's search: rules, a searcher with its table, and optional databases."""

    def __init__(
        self,
        variant: Variant,
        impl: str = "c",
        tt_log2: int = 20,
        egdb_seeds: int = 0,
        egdb_dir: Path | None = None,
        progress: egdb_mod.Progress | None = None,
        workers: int | None = None,
        build_egdb: bool = True,
        levels: list[Any] | None = None,
    ) -> None:
        """Compile the rules and load (or, with `build_egdb`, build missing) database levels 1..egdb_seeds.

        Without `build_egdb` only the levels already on disk are used (up to the first missing
        one); `levels` gives levels loaded elsewhere (shared by several engines) instead.
        """
        self.variant = variant
        self.module: SearchCore[Any] = pysearch if variant.relay else implementation(impl)
        self.rules = self.module.Rules(compile_variant(variant))
        self.exact_possible = not variant.can_repeat
        if levels is None:
            levels = egdb_mod.load(variant, egdb_seeds, self.module, egdb_dir, progress, build=build_egdb)
        self.levels = levels
        self.tt_log2 = tt_log2
        self.searcher = self.module.Searcher(self.rules, tt_log2, self.levels or None)
        self.lock = threading.Lock()
        self.all_exact = True
        self.node_stop = 0
        """While positive: the main searcher's node count at which searches stop (TimeoutError)."""
        self.workers = 1 if self.module is pysearch else (workers or os.cpu_count() or 1)
        self._pool: list[CoreSearcher] = [self.searcher]
        self.on_search: Callable[[SearchDone], None] | None = None
        """Told of each search call that ends (`bench/solver.py --where` counts the value's searches apart)."""

    def use_levels(self, levels: list[Any]) -> None:
        """Search with these database levels from now on (with new, empty tables)."""
        with self.lock:
            self.levels = levels
            self.searcher = self.module.Searcher(self.rules, self.tt_log2, levels or None)
            self._pool = [self.searcher]

    def table_bytes(self) -> int:
        """Memory the transposition tables may take (every searcher's, when full)."""
        return len(self._pool) * table_bytes(core_name(self.module), self.tt_log2)

    def children(self, board: tuple[int, ...]) -> list[Kid]:
        """Each legal pit with (board after, gain, extra turn, game over)."""
        return [(p, *self.module.play(self.rules, board, p)) for p in self.module.legal(self.rules, board)]

    def _search(self, board: tuple[int, ...], depth: int, alpha: int, beta: int, deadline: float,
                searcher: CoreSearcher | None = None, threads: int = 1) -> int:
        """One search call with the time left before `deadline` (0: none), exact ones on `threads` threads."""
        s = searcher or self.searcher
        left = 0.0
        if deadline:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("search time limit reached")
        nodes = 0
        if self.node_stop and s is self.searcher:
            nodes = self.node_stop - int(s.nodes)
            if nodes <= 0:
                raise TimeoutError("search node limit reached")
        n0, t0 = int(s.nodes), time.monotonic()
        value = int(s.search(board, depth, alpha, beta, left, nodes, threads))
        if not s.exact:
            self.all_exact = False
        if self.on_search:
            self.on_search(SearchDone(board, depth, alpha, beta, value, int(s.nodes) - n0, time.monotonic() - t0,
                                      threads))
        return value

    def mtdf(self, board: tuple[int, ...], guess: int = 0, depth: int = -1, deadline: float = 0.0,
             searcher: CoreSearcher | None = None, threads: int | Callable[[], int] = 1) -> int:
        """Value of a non-terminal board for the mover by MTD(f) null-window searches.

        `threads` may be a function, asked before each search: a search recalled (`CoreSearcher.recall`, when
        another thread has come free) runs again with what it says, on the table that kept what was proved."""
        k = sum(board[: self.rules.h]) + sum(board[self.rules.h + 1 : -1])
        lower, upper = -k, k
        g = max(lower, min(upper, guess))
        while lower < upper:
            beta = max(g, lower + 1)
            try:
                g = self._search(board, depth, beta - 1, beta, deadline, searcher,
                                 threads() if callable(threads) else threads)
            except self.module.Recalled:
                continue
            if g < beta:
                upper = g
            else:
                lower = g
        return g

    def far(self, board: tuple[int, ...]) -> bool:
        """Whether an exact solve of `board` is worth a first guess (many seeds beyond the databases)."""
        k = sum(board[: self.rules.h]) + sum(board[self.rules.h + 1 : -1])
        return k - (len(self.levels) - 1 if self.levels else 0) > GUESS_FAR_SEEDS

    def guesses(self, children: list[Child], deadline: float = 0.0) -> list[int]:
        """First guesses for MTD(f) of these moves' values: depth-limited MTD(f) with the databases.

        They run on a small table of their own: the shallow searches' moves would mislead the exact
        search (measured: a good guess saves up to half of a solve's nodes, and none in a shared table).
        """
        exact = self.all_exact
        scratch = self.module.Searcher(self.rules, min(self.tt_log2, GUESS_TT_LOG2), self.levels or None)
        out = [self.child_value(child, GUESS_DEPTH, 0, deadline, scratch) for child in children]
        self.all_exact = exact
        return out

    def guess(self, board: tuple[int, ...], deadline: float = 0.0) -> int:
        """A first guess of a non-terminal board's own value for MTD(f): a depth-limited search where the board is
        far from the databases (`far`), else 0."""
        return self.guesses([(board, 0, True, False)], deadline)[0] if self.far(board) else 0

    def child_value(self, child: Child, depth: int, guess: int, deadline: float,
                    searcher: CoreSearcher | None = None, threads: int | Callable[[], int] = 1) -> int:
        """Mover's value of one move: its gain plus (or minus) the successor's value."""
        board, gain, extra, over = child
        if over:
            return gain
        sign = 1 if extra else -1
        return gain + sign * self.mtdf(board, sign * (guess - gain), depth, deadline, searcher, threads)

    def _per_move(self, kids: list[Kid], depth: int,
                  deadline: float, guesses: list[int] | None = None) -> tuple[dict[int, int], int]:
        """(value of every move, nodes): moves in parallel, one searcher and table per worker.

        A worker that finds no move left lends its thread to a move still being solved: that move's search is
        recalled and runs again on one more thread over its table (`Searcher.search` with `threads`), and so do
        its remaining MTD(f) steps. So the last, largest move does not run on one core while the other idles.
        """
        first = dict(zip((kid[0] for kid in kids), guesses or [0] * len(kids), strict=True))
        workers = min(self.workers, len(kids))
        while len(self._pool) < workers:
            self._pool.append(self.module.Searcher(self.rules, self.tt_log2, self.levels or None))
        pool = self._pool[:workers]
        n0 = sum(int(s.nodes) for s in pool)
        todo: queue.SimpleQueue[Kid] = queue.SimpleQueue()
        for kid in kids:
            todo.put(kid)
        found: dict[int, int] = {}
        lent = [0] * workers
        """Threads lent to each worker's search by workers that found no move left."""
        solving = [False] * workers
        lock = threading.Lock()

        def work(i: int) -> None:
            """Solve moves until none is left (a shallow first guess would leave misleading table moves), then lend
            this thread to the move being solved with the fewest threads."""
            s = pool[i]
            while True:
                try:
                    kid = todo.get_nowait()
                except queue.Empty:
                    break
                with lock:
                    solving[i] = True
                try:
                    found[kid[0]] = self.child_value((kid[1], kid[2], kid[3], kid[4]), depth, first[kid[0]],
                                                     deadline, s, lambda: 1 + lent[i])
                finally:
                    with lock:
                        solving[i] = False
                        if lent[i]:
                            lent[i] = 0  # the lent threads end with this move
            with lock:
                busy = [j for j in range(workers) if solving[j]]
                if busy:
                    j = min(busy, key=lambda j: lent[j])
                    lent[j] += 1
                    pool[j].recall()

        try:
            with ThreadPoolExecutor(max_workers=workers) as executor:
                for done in [executor.submit(work, i) for i in range(workers)]:
                    done.result()
        finally:
            for s in pool:
                s.recall(False)
        return {kid[0]: found[kid[0]] for kid in kids}, sum(int(s.nodes) for s in pool) - n0

    def _value_and_best(self, board: tuple[int, ...], kids: list[Kid], guess: int,
                        deadline: float) -> tuple[int, list[int]]:
        """(mover value, every pit that attains it) of a non-terminal board, exactly.

        MTD(f) null-window searches of the board from `guess` until one fails high (a lower bound L, the value
        itself with a good guess); then each move once against L: one that does not reach L is proved below it
        (which the list of best moves needs anyway), one that does is tried against L + 1 (an exact L: a best
        move; more: its value is the new L and the moves before it are not best). So the moves that are not best
        are proved below the value once, not also at most the value by a last search of the board."""
        k = sum(board[: self.rules.h]) + sum(board[self.rules.h + 1 : -1])
        lower, upper = -k, k
        g = max(lower, min(upper, guess))
        while True:
            beta = max(g, lower + 1)
            g = self._search(board, -1, beta - 1, beta, deadline, None, self.workers)
            if g >= beta:
                lower = g
                break
            upper = g
            if upper <= lower:
                break
        best: list[int] = []
        for pit, after, gain, extra, over in kids:
            child = (after, gain, extra, over)
            if not self._reaches(child, lower, -1, deadline, self.workers):
                continue
            if lower < upper and self._reaches(child, lower + 1, -1, deadline, self.workers):
                lower = self.child_value(child, -1, lower + 1, deadline, None, self.workers)
                best = []
            best.append(pit)
        return lower, best

    def _per_move_shared(self, kids: list[Kid], depth: int, deadline: float,
                         guesses: list[int] | None = None) -> tuple[dict[int, int], int]:
        """(value of every move, nodes): the moves one after another, best guess first, each on every thread over
        the one table, so that what one move's search proved serves the next."""
        first = dict(zip((kid[0] for kid in kids), guesses or [0] * len(kids), strict=True))
        n0 = int(self.searcher.nodes)
        found: dict[int, int] = {}
        for kid in sorted(kids, key=lambda kid: -first[kid[0]]):
            found[kid[0]] = self.child_value((kid[1], kid[2], kid[3], kid[4]), depth, first[kid[0]], deadline,
                                             None, self.workers)
        return {kid[0]: found[kid[0]] for kid in kids}, int(self.searcher.nodes) - n0

    def solve(self, position: Position, per_move: bool = False, time_limit: float = 0.0,
              depth: int = -1) -> Solution:
        """Value and best moves of a sowing position (exact unless the variant can cycle)."""
        if position.over:
            return Solution(int(position.margin), [], {}, 0, 0.0, True)
        if position.transfer_pending:
            raise ValueError("solve a position after the opening transfer")
        if not self.exact_possible and depth < 0:
            depth = 12
        with self.lock:
            t0 = time.monotonic()
            n0 = self.searcher.nodes
            deadline = t0 + time_limit if time_limit > 0 else 0.0
            board = relative_board(position)
            kids = self.children(board)
            self.all_exact = True
            values: dict[int, int] = {}
            nodes = 0
            guess = depth < 0 and self.far(board)
            if per_move:
                first = self.guesses([kid[1:] for kid in kids], deadline) if guess else None
                if self.tt_log2 >= SHARED_TT_LOG2:
                    values, nodes = self._per_move_shared(kids, depth, deadline, first)
                else:
                    values, nodes = self._per_move(kids, depth, deadline, first)
                value = max(values.values())
                best = [p for p, v in values.items() if v == value]
            else:
                g = self.guess(board, deadline) if guess else 0
                if guess:
                    value, best = self._value_and_best(board, kids, g, deadline)
                else:
                    value = self.mtdf(board, g, depth, deadline, threads=self.workers)
                    best = [p for p, after, gain, extra, over in kids
                            if self._reaches((after, gain, extra, over), value, depth, deadline, self.workers)]
            return Solution(
                value=south_value(position, value),
                best=[pit_to_bin(position, p) for p in best],
                per_move={pit_to_bin(position, p): south_value(position, v) for p, v in values.items()},
                nodes=nodes or int(self.searcher.nodes) - n0,
                seconds=time.monotonic() - t0,
                exact=self.all_exact and self.exact_possible,
                depth=depth,
            )

    def prove(self, board: tuple[int, ...], deadline: float = 0.0, node_limit: int = 0,
              guess: int = 0) -> tuple[int, int]:
        """(pit, mover value) of a proved best move of a non-terminal board (acyclic variants).

        The value by MTD(f), then the first move in `proof_order` that reaches it, so the move
        depends only on the position. TimeoutError past `deadline` or after `node_limit` nodes.
        """
        with self._proving(node_limit):
            value = self.mtdf(board, guess, -1, deadline, threads=self.workers)
            pit = self._first_reaching(board, value, deadline)
        if pit is None:
            raise AssertionError("no move reaches the proved value")
        return pit, value

    def keep(self, board: tuple[int, ...], need: int, deadline: float = 0.0, node_limit: int = 0) -> int | None:
        """The first pit in `proof_order` proved to give the mover at least `need` (a non-terminal board of an acyclic
        variant), None if every move is proved to give less; TimeoutError past `deadline` or `node_limit` nodes.

        Half a proof: a move that keeps a value already won needs no proof that it is the best, so after an
        opponent's mistake (the value above `need`) it is found far sooner than the best move."""
        with self._proving(node_limit):
            return self._first_reaching(board, need, deadline)

    @contextmanager
    def _proving(self, node_limit: int) -> Iterator[None]:
        """Hold the engine for a proof that stops (TimeoutError) after `node_limit` nodes (0: none)."""
        if not self.exact_possible:
            raise ValueError("positions of variants whose sowing can cycle have no proved values here")
        with self.lock:
            self.node_stop = int(self.searcher.nodes) + node_limit if node_limit > 0 else 0
            try:
                yield
            finally:
                self.node_stop = 0

    def _first_reaching(self, board: tuple[int, ...], value: int, deadline: float) -> int | None:
        """The first pit in `proof_order` that gives the mover at least `value`, None if none does (lock held)."""
        for pit, after, gain, extra, over in sorted(self.children(board), key=proof_order):
            if self._reaches((after, gain, extra, over), value, -1, deadline, self.workers):
                return pit
        return None

    def reaches(self, board: tuple[int, ...], pit: int, value: int, deadline: float = 0.0) -> bool:
        """Whether sowing `pit` gives the mover at least `value` (exactly, on every thread; TimeoutError past
        `deadline`)."""
        with self.lock:
            return self._reaches(self.module.play(self.rules, board, pit), value, -1, deadline, self.workers)

    def _reaches(self, child: Child, value: int, depth: int,
                 deadline: float, threads: int = 1) -> bool:
        """Whether a move attains at least `value` for the mover (one null-window search)."""
        board, gain, extra, over = child
        if over:
            return gain >= value
        if extra:
            return gain + self._search(board, depth, value - gain - 1, value - gain, deadline, None, threads) >= value
        return gain - self._search(board, depth, gain - value, gain - value + 1, deadline, None, threads) >= value

    def best_by_deepening(self, position: Position, budget_s: float,
                          max_depth: int | None = None) -> tuple[int, int, bool, int]:
        """(bin, mover value, exact, depth) of the deepest iterative-deepening search in budget.

        Depths are counted in sowings after the root move; without `max_depth` the last
        iteration is the exact search (acyclic variants only). The whole deepening is one call into
        the core (`Searcher.deepen`), which holds no GIL from its first search to its last.
        """
        board = relative_board(position)
        top = -1 if max_depth is None else max(0, min(max_depth, MAX_DEPTH))
        with self.lock:
            found = self.searcher.deepen(board, max(budget_s, 0.001), top, self.exact_possible)
        if found is None:
            pit = max(self.children(board), key=lambda c: (c[4], c[3], c[2]))[0]
            return pit_to_bin(position, pit), 0, False, 0
        self.all_exact = found[2]
        return pit_to_bin(position, found[0]), found[1], found[2], found[3]

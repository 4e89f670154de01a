"""Pure-Python twin of the C search core `bots._search`: same functions, same signatures.

Boards are mover-relative tuples of 2h+2 pits: the side to move owns pits 0..h-1 and
store h, the opponent owns h+1..2h and store 2h+1. A value is what the side to move still
gains over the opponent until the end of the game. Moves are made by `protocol.sowing`,
so this twin is the oracle the C core is tested against; it also plays relay variants.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from math import comb
from typing import Any, Protocol

from bots.pylevels import Level, compositions
from bots.pylevels import decode_level as decode_level  # the twins of the C core's level functions
from bots.pylevels import encode_level as encode_level
from bots.pylevels import level_model as level_model
from protocol.sowing import end_reason, sow, sweep
from protocol.tables import SOUTH, Tables

EXACT = 255
SENTINEL = -128
INF = 30000
_CHECK_EVERY = 4096
MAX_PLY = 2000  # lines longer than this are cut like a depth horizon (as in the C core)
MAX_THREADS = 64
_interrupted = [False]
"""The most threads an exact search may ask for (as in the C core)."""


class Recalled(Exception):
    """A one-thread search stopped by `Searcher.recall()` (the twin of bots._search.Recalled)."""


class Rules:
    """A variant's tables, checked side-symmetric, for the mover-relative search."""

    def __init__(self, tables: Tables) -> None:
        h = tables.houses
        n = 2 * h + 2
        for pit in range(h):
            south, north = tables.laps[0][pit], tables.laps[1][pit + h + 1]
            if tuple((x + h + 1) % n for x in south) != north:
                raise ValueError("tables are not side-symmetric")
        self.tables = tables
        self.h = h
        self.n = n
        self.majority = tables.majority_end
        self.leftover = tables.leftover_code


def play(rules: Rules, board: Sequence[int], pit: int) -> tuple[tuple[int, ...], int, bool, bool]:
    """Sow a house of a mover-relative board: (board after, gain, extra turn, game over)."""
    h, n = rules.h, rules.n
    if not 0 <= pit < h or not board[pit]:
        raise ValueError(f"pit {pit} is not a non-empty house of the mover")
    if len(board) != n:
        raise ValueError(f"a board has {n} pits")
    t = rules.tables
    pits = list(board)
    _, _, extra = sow(t, pits, SOUTH, pit)
    over = end_reason(t, pits) is not None
    if over:
        sweep(t, pits)
        extra = False
    gain = (pits[h] - board[h]) - (pits[n - 1] - board[n - 1])
    if not over and not extra:
        pits = pits[h + 1 :] + pits[: h + 1]
    return tuple(pits), gain, extra, over


def legal(rules: Rules, board: Sequence[int]) -> list[int]:
    """Houses the mover may sow from."""
    if len(board) != rules.n:
        raise ValueError(f"a board has {rules.n} pits")
    return [p for p in range(rules.h) if board[p]]


def _houses(rules: Rules, board: Sequence[int]) -> list[int]:
    """The 2h house counts, mover's first."""
    h = rules.h
    return [*board[:h], *board[h + 1 : 2 * h + 1]]


def rank(rules: Rules, board: Sequence[int]) -> int:
    """Combinatorial rank of a board's houses among boards with as many seeds."""
    if len(board) != rules.n:
        raise ValueError(f"a board has {rules.n} pits")
    r, p = 0, -1
    houses = _houses(rules, board)
    for j, x in enumerate(houses[:-1]):
        p += x + 1
        r += comb(p, j + 1)
    return r


def level_size(houses: int, k: int) -> int:
    """Number of house contents of k seeds on 2*houses houses."""
    return comb(k + 2 * houses - 1, 2 * houses - 1)


class Searcher:
    """A search with its own transposition table and optional endgame databases (one thread at a time)."""

    def __init__(self, rules: Rules, tt_log2: int = 20, egdb: Sequence[Any] | None = None) -> None:
        if not 4 <= tt_log2 <= 32:
            raise ValueError("tt_log2 must be 4..32")
        self.rules = rules
        self._cap = 1 << tt_log2
        self._tt: dict[tuple[int, ...], tuple[int, int, int, int]] = {}
        self._levels: list[Level] = []
        if egdb is not None and len(egdb) > 1:
            if rules.majority:
                raise ValueError("endgame databases do not apply to majority-end variants")
            self._levels = [Level(egdb[k], rules.h, k) for k in range(1, len(egdb))]
        self._nodes = 0
        self._horizon = 0
        self._stats = dict.fromkeys(("probes", "hits", "cuts", "egdb", "etc"), 0)
        self._exact = False
        self._deadline = 0.0
        self._node_stop = 0
        self._aborted = False
        self._recall = False
        self._recallable = True
        self._ply = 0

    @property
    def nodes(self) -> int:
        """Nodes searched so far."""
        return self._nodes

    @property
    def exact(self) -> bool:
        """Whether the last search reached no depth horizon."""
        return self._exact

    @property
    def egdb_seeds(self) -> int:
        """Largest seed count covered by databases."""
        return len(self._levels)

    @property
    def stats(self) -> dict[str, int]:
        """Counts so far: nodes, table probes, hits and cut-offs, database reads, enhanced transposition cut-offs."""
        return {"nodes": self._nodes, **self._stats}

    def clear(self) -> None:
        """Empty the transposition table."""
        self._tt.clear()

    def deepen(self, board: Sequence[int], time_limit: float, max_depth: int = -1,
               acyclic: bool = True) -> tuple[int, int, bool, int] | None:
        """A move by iterative deepening within `time_limit` seconds (0: none), as `deepen` makes it.

        (pit, mover value, exact, depth) of the deepest iteration finished, None if none was.
        """
        b = tuple(board)
        if len(b) != self.rules.n:
            raise ValueError(f"a board has {self.rules.n} pits")
        if end_reason(self.rules.tables, list(b)) is not None:
            raise ValueError("the game is over on this board")
        kids = [(p, *play(self.rules, b, p)) for p in legal(self.rules, b)]
        return deepen(self, kids, time_limit, max_depth, acyclic)

    def search(self, board: Sequence[int], depth: int, alpha: int, beta: int, time_limit: float = 0.0,
               node_limit: int = 0, threads: int = 1) -> int:
        """Alpha-beta value of a mover-relative board (depth < 0: exact); fail-soft in (alpha, beta).

        Raises TimeoutError past `time_limit` seconds or `node_limit` nodes of this call (0: no limit).
        `threads` (1..64) is checked as the C core checks it; the twin always searches on one thread.
        """
        if not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be 1..{MAX_THREADS}")
        r = self.rules
        if len(board) != r.n:
            raise ValueError(f"a board has {r.n} pits")
        b = tuple(board)
        houses = _houses(r, b)
        if end_reason(r.tables, list(b)) is not None:
            raise ValueError("the game is over on this board")
        d = EXACT if depth < 0 or depth >= EXACT else depth
        self._recallable = threads == 1  # as in the C core, a search asked for more threads drops a recall
        if self._recall:
            self._recall = False
            if self._recallable:
                raise Recalled("search recalled (to be run again, e.g. on more threads)")
        self._deadline = time.monotonic() + time_limit if time_limit > 0 else 0.0
        self._node_stop = self._nodes + node_limit if node_limit > 0 else 0
        self._aborted = False
        self._ply = 0
        h0 = self._horizon
        v = self._ab(b, sum(houses), d, alpha, beta)
        self._exact = self._horizon == h0
        if self._aborted:
            if _interrupted[0]:
                raise KeyboardInterrupt
            if self._recall and not self._timed_out():
                self._recall = False
                raise Recalled("search recalled (to be run again, e.g. on more threads)")
            raise TimeoutError("search time or node limit reached")
        return v

    def recall(self, on: bool = True, /) -> None:
        """From any thread: the current or next search stops soon and raises `Recalled` (the C core's twin: there,
        to run it again on more threads); recall(False) withdraws it."""
        self._recall = on

    def _timed_out(self) -> bool:
        """Whether the search's time or node limit is reached."""
        return bool((self._deadline and time.monotonic() > self._deadline)
                    or (self._node_stop and self._nodes >= self._node_stop))

    def _key(self, b: tuple[int, ...]) -> tuple[int, ...]:
        """Transposition key: houses, plus stores under majority end."""
        if self.rules.majority:
            return b
        h = self.rules.h
        return b[:h] + b[h + 1 : 2 * h + 1]

    def _known(self, b: tuple[int, ...], k: int) -> tuple[int, int] | None:
        """Bounds on a child's value known without searching it."""
        if k <= len(self._levels):
            self._stats["egdb"] += 1
            v = self._levels[k - 1].value(rank(self.rules, b), b)
            return v, v
        e = self._tt.get(self._key(b))
        if e is not None and e[2] == EXACT:
            return e[0], e[1]
        return None

    def _store(self, key: tuple[int, ...], depth: int, lo: int, hi: int, move: int) -> None:
        """Record bounds, keeping deeper knowledge and merging same-depth bounds."""
        old = self._tt.get(key)
        if old is not None and old[2] > depth:
            self._tt[key] = (old[0], old[1], old[2], move)
            return
        if old is not None and old[2] == depth:
            lo, hi = max(lo, old[0]), min(hi, old[1])
            if lo > hi:
                lo = hi = (lo + hi) // 2
        if len(self._tt) >= self._cap:
            self._tt.clear()
        self._tt[key] = (lo, hi, depth, move)

    def _guarded(self, b: tuple[int, ...], k: int, depth: int, alpha: int, beta: int) -> int:
        """The search with the recursion bound of the C core."""
        if self._ply >= MAX_PLY:
            self._horizon += 1
            return 0
        self._ply += 1
        try:
            return self._ab(b, k, depth, alpha, beta)
        finally:
            self._ply -= 1

    def _ab(self, b: tuple[int, ...], k: int, depth: int, alpha: int, beta: int) -> int:
        """Fail-soft negamax alpha-beta; extra turns keep the sign."""
        r = self.rules
        self._nodes += 1
        if self._nodes % _CHECK_EVERY == 0 and (self._timed_out() or _interrupted[0]
                                                     or (self._recall and self._recallable)):
            self._aborted = True
        if self._aborted:
            return 0
        if k <= len(self._levels):
            self._stats["egdb"] += 1
            return self._levels[k - 1].value(rank(r, b), b)
        if k <= alpha:
            return k
        if -k >= beta:
            return -k
        if depth == 0:
            self._horizon += 1
            return 0
        key = self._key(b)
        ttmove = -1
        e = self._tt.get(key)
        self._stats["probes"] += 1
        if e is not None:
            ttmove = e[3]
            self._stats["hits"] += 1
            if e[2] >= depth:
                if e[2] != EXACT:
                    self._horizon += 1
                if e[0] >= beta or e[1] <= alpha:
                    self._stats["cuts"] += 1
                if e[0] >= beta:
                    return e[0]
                if e[1] <= alpha:
                    return e[1]
                alpha, beta = max(alpha, e[0]), min(beta, e[1])
        beta, alpha = min(beta, k), max(alpha, -k)
        if alpha >= beta:
            return alpha
        children = []
        for p in range(r.h):
            if not b[p]:
                continue
            child, gain, extra, over = play(r, b, p)
            ck = 0 if over else sum(_houses(r, child))
            if over:
                if gain >= beta:
                    return gain
                score = 1 << 20
            else:
                score = (1 << 22 if p == ttmove else 0) + (1 << 18 if extra else 0) + gain * 64 + p
                known = self._known(child, ck) if depth > 1 else None
                if known is not None:
                    v = gain + known[0] if extra else gain - known[1]
                    if v >= beta:
                        self._stats["etc"] += 1
                        return v
            children.append((score, p, child, gain, extra, over, ck))
        children.sort(key=lambda c: -c[0])
        a0, b0, h0 = alpha, beta, self._horizon
        best, bestmove = -INF, -1
        cd = EXACT if depth == EXACT else depth - 1
        for _, p, child, gain, extra, over, ck in children:
            if over:
                v = gain
            elif extra:
                v = gain + self._guarded(child, ck, cd, alpha - gain, beta - gain)
            else:
                v = gain - self._guarded(child, ck, cd, gain - beta, gain - alpha)
            if self._aborted:
                return 0
            if v > best:
                best, bestmove = v, p
            alpha = max(alpha, best)
            if alpha >= beta:
                break
        lo = -INF if best <= a0 else best
        hi = INF if best >= b0 else best
        self._store(key, EXACT if self._horizon == h0 else depth, max(lo, -k), min(hi, k), bestmove)
        return best


def _board_of(rules: Rules, houses: Sequence[int]) -> tuple[int, ...]:
    """A mover-relative board with empty stores from 2h house counts."""
    h = rules.h
    return (*houses[:h], 0, *houses[h:], 0)


def build_level(rules: Rules, k: int, levels: Sequence[Any], out: Any, start: int, stop: int) -> None:
    """Fill ranks start..stop of database level k; `out` starts filled with -128 (unknown)."""
    if rules.majority or not 1 <= k <= 120:
        raise ValueError("bad level, or a majority-end variant")
    size = level_size(rules.h, k)
    view = memoryview(out).cast("B").cast("b")
    if len(view) != size or not 0 <= start <= stop <= size:
        raise ValueError("output size or range does not match the level")
    lower = [Level(levels[j], rules.h, j) for j in range(1, k)]

    def value(b: tuple[int, ...]) -> int:
        """Memoised value of a board of this level."""
        rk = rank(rules, b)
        if view[rk] != SENTINEL:
            return int(view[rk])
        h = rules.h
        mine, theirs = sum(b[:h]), sum(b[h + 1 : 2 * h + 1])
        if not mine or not theirs:
            best = (-k if not mine else k) if rules.leftover == 0 else (
                (k if not mine else -k) if rules.leftover == 1 else 0)
        else:
            best = -INF
            for p in legal(rules, b):
                child, gain, extra, over = play(rules, b, p)
                if over:
                    v = gain
                else:
                    ck = sum(_houses(rules, child))
                    cv = lower[ck - 1].value(rank(rules, child), child) if ck < k else value(child)
                    v = gain + cv if extra else gain - cv
                best = max(best, v)
        view[rk] = best
        return best

    for houses in compositions(2 * rules.h, k, start, stop):
        if _interrupted[0]:
            raise KeyboardInterrupt
        value(_board_of(rules, houses))


def warm(buffer: Any, /) -> int:
    """Read a byte of every page of a buffer (a mapped database level), so that its pages are in memory before a
    search probes them: the bytes read through (fewer once `interrupt` stopped it)."""
    with memoryview(buffer) as view:
        size = view.nbytes
        for done in range(0, size, 4096):
            if _interrupted[0]:
                return done
            view[done]
    return size


def interrupt(on: bool = True, /) -> None:
    """Stop every search and database build of the process at once (KeyboardInterrupt); False: let them run."""
    _interrupted[0] = on


class Searching(Protocol):
    """What `deepen` needs of a searcher: the C core's or this twin's."""

    def search(self, board: Sequence[int], depth: int, alpha: int, beta: int, time_limit: float = 0.0,
               node_limit: int = 0, threads: int = 1) -> int:
        """Alpha-beta value of a mover-relative board (depth < 0: exact); TimeoutError past `time_limit`."""
        ...

    @property
    def exact(self) -> bool:
        """Whether the last search reached no depth horizon."""
        ...


Kid = tuple[int, tuple[int, ...], int, bool, bool]
"""A legal pit with its outcome: (pit, board after, gain, extra turn, game over)."""


class _Deepening:
    """One deepening's search calls: each with the time left before its deadline, noting horizons reached."""

    def __init__(self, searcher: Searching, time_limit: float) -> None:
        self.searcher = searcher
        self.deadline = time.monotonic() + time_limit if time_limit > 0 else 0.0
        self.all_exact = True

    def search(self, board: tuple[int, ...], depth: int, alpha: int, beta: int) -> int:
        """One null-window (or wider) search; TimeoutError once the deadline has passed."""
        left = 0.0
        if self.deadline:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("search time limit reached")
        value = int(self.searcher.search(board, depth, alpha, beta, left))
        if not self.searcher.exact:
            self.all_exact = False
        return value

    def mtdf(self, board: tuple[int, ...], guess: int, depth: int) -> int:
        """Mover's value of a board by MTD(f) null-window searches from `guess`."""
        k = sum(board) - board[len(board) // 2 - 1] - board[-1]
        lower, upper = -k, k
        g = max(lower, min(upper, guess))
        while lower < upper:
            beta = max(g, lower + 1)
            g = self.search(board, depth, beta - 1, beta)
            if g < beta:
                upper = g
            else:
                lower = g
        return g

    def value(self, kid: Kid, depth: int, guess: int) -> int:
        """Mover's value of a root move from a guess of the root's value."""
        _, board, gain, extra, over = kid
        if over:
            return gain
        sign = 1 if extra else -1
        return gain + sign * self.mtdf(board, sign * (guess - gain), depth)

    def reaches(self, kid: Kid, value: int, depth: int) -> bool:
        """Whether a root move attains at least `value` for the mover (one null-window search)."""
        _, board, gain, extra, over = kid
        if over:
            return gain >= value
        if extra:
            return gain + self.search(board, depth, value - gain - 1, value - gain) >= value
        return gain - self.search(board, depth, gain - value, gain - value + 1) >= value

    def root(self, kids: list[Kid], depth: int, guess: int, first: int) -> tuple[int, int]:
        """(pit, mover value) of the best root move at `depth`, trying pit `first` first."""
        best_pit, best_v = -1, -(10**6)
        for kid in sorted(kids, key=lambda c: c[0] != first):
            if best_pit >= 0 and not self.reaches(kid, best_v + 1, depth):
                continue
            v = self.value(kid, depth, guess)
            if v > best_v:
                best_pit, best_v = kid[0], v
        return best_pit, best_v


def deepen(searcher: Searching, kids: list[Kid], time_limit: float, max_depth: int = -1,
           acyclic: bool = True) -> tuple[int, int, bool, int] | None:
    """(pit, mover value, exact, depth) of the deepest iteration finished within `time_limit` (0: none), or None.

    Depths 1, 3, 5, ... below the top (`max_depth`, at most EXACT - 1; < 0: EXACT - 1), the top, then, with
    `max_depth` < 0 and `acyclic`, an exact one (depth -1). Each iteration tries the previous one's best move
    first and values the others only where a null-window search shows they beat the best so far (MTD(f) from
    the previous value); in an acyclic variant an iteration that reached no horizon is exact and ends it.
    The C core's `Searcher.deepen` makes the same search calls in the same order, without the GIL throughout.
    """
    top = EXACT - 1 if max_depth < 0 else min(max_depth, EXACT - 1)
    depths = [*range(1, top, 2), top]
    if max_depth < 0 and acyclic:
        depths.append(-1)
    run = _Deepening(searcher, time_limit)
    found: tuple[int, int, bool, int] | None = None
    for depth in depths:
        run.all_exact = True
        try:
            pit, v = run.root(kids, depth, found[1] if found else 0, found[0] if found else -1)
        except TimeoutError:
            break
        found = (pit, v, run.all_exact and acyclic, depth)
        if found[2]:
            break
    return found

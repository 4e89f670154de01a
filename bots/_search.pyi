"""Type stub of the C search core; bots/pysearch.py is its pure-Python twin."""

from collections.abc import Sequence
from typing import Any

from protocol.tables import Tables

class Rules:
    """Compiled rules of a (non-relay) variant for the C core."""

    h: int
    n: int
    def __init__(self, tables: Tables) -> None: ...

class Recalled(Exception):
    """A one-thread search stopped by `Searcher.recall()`."""

class Searcher:
    """A search with its own transposition table and optional endgame databases."""

    def __init__(self, rules: Rules, tt_log2: int = 20, egdb: Sequence[Any] | None = None) -> None: ...
    def search(self, board: Sequence[int], depth: int, alpha: int, beta: int, time_limit: float = 0.0,
               node_limit: int = 0, threads: int = 1) -> int:
        """Alpha-beta value of a mover-relative board (depth < 0: exact); fail-soft in (alpha, beta).

        Raises TimeoutError past `time_limit` seconds or `node_limit` nodes of this call (0: no limit).
        An exact search may run on `threads` threads sharing the table (simplified ABDADA).
        """
    def deepen(self, board: Sequence[int], time_limit: float, max_depth: int = -1,
               acyclic: bool = True) -> tuple[int, int, bool, int] | None:
        """A move by iterative deepening within `time_limit` seconds (0: none), without the GIL throughout.

        (pit, mover value, exact, depth) of the deepest iteration finished, None if none was: depths 1, 3, ...
        up to `max_depth` (< 0: 254), then, with `max_depth` < 0 and `acyclic`, an exact one (depth -1).
        """
    def clear(self) -> None:
        """Empty the transposition table."""
    def recall(self, on: bool = True, /) -> None:
        """From any thread: the current or next one-thread search stops soon and raises `Recalled`, so that it can be
        run again on more threads (the table keeps what it proved); recall(False) withdraws it."""
    @property
    def nodes(self) -> int:
        """Nodes searched so far."""
    @property
    def exact(self) -> bool:
        """Whether the last search reached no depth horizon."""
    @property
    def egdb_seeds(self) -> int:
        """Largest seed count covered by databases."""
    @property
    def stats(self) -> dict[str, int]:
        """Counts so far: nodes, table probes, hits and cut-offs, database reads, enhanced transposition cut-offs."""
    @property
    def by_seeds(self) -> dict[str, list[int]]:
        """Counts by seeds in play (index k; the last index also counts more seeds): interior `nodes`, enhanced
        transposition cut-offs `etc`, table cut-offs `cuts`, `cutoffs` by a searched move and of them
        `first_move_cutoffs` by the first move searched."""

def play(rules: Rules, board: Sequence[int], pit: int, /) -> tuple[tuple[int, ...], int, bool, bool]:
    """Sow a house of a mover-relative board: (board, gain, extra, over)."""

def legal(rules: Rules, board: Sequence[int], /) -> list[int]:
    """Houses the mover may sow from."""

def rank(rules: Rules, board: Sequence[int], /) -> int:
    """Combinatorial rank of a board's houses among boards with as many seeds."""

def level_size(houses: int, k: int, /) -> int:
    """Number of house contents of k seeds on 2*houses houses."""

def build_level(rules: Rules, k: int, levels: Sequence[Any], out: Any, start: int, stop: int, /) -> None:
    """Fill ranks start..stop of database level k; `out` starts filled with -128 (unknown)."""

def level_model(houses: int, k: int, values: Any, /) -> tuple[int, bytes]:
    """A level's format v2 model from its values (one byte per rank): (shift, predictions by empty houses)."""

def encode_level(houses: int, k: int, values: Any, shift: int, pred: bytes, out: Any, /) -> int:
    """Encode a level's values to format v2 after its header (blocks, group words, exceptions) into `out`: the
    exceptions written."""

def decode_level(houses: int, k: int, data: Any, out: Any, /) -> None:
    """Every value of a level's bytes (format v1 or v2) into `out`, one signed byte per rank."""

def warm(buffer: Any, /) -> int:
    """Read a byte of every page of a buffer (a mapped database level) without the GIL, so that its pages are in memory
    and mapped before a search probes them: the bytes read through (fewer once `interrupt` stopped it)."""

def interrupt(on: bool = True, /) -> None:
    """Stop every search and database build of the process at once (KeyboardInterrupt); False: let them run."""

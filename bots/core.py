"""The bots' typed boundaries: `Player` (what a server runs), `SearchCore` (C core or Python twin), and the flips.

A `Player` is synchronous: `decide(position, budget_s)` blocks its thread for up to about
`budget_s` seconds, so a server calls it in a worker thread, one thread hop per move.

`SearchCore` is what the C core (`bots._search`) and its pure-Python twin (`bots.pysearch`)
both are: the same functions and classes with the same signatures, checked by mypy against
each module. The core sees mover-relative boards (the side to move owns pits 0..h-1 and
store h) and values for the mover; `relative_board`, `pit_to_bin` and `south_value` turn a
`Position` into that view and the answers back, and are the only place that does.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

from bots import pysearch
from protocol.actions import Action
from protocol.position import Position, Side
from protocol.tables import Tables

IMPLEMENTATIONS = ("c", "py")
TT_ENTRY_BYTES = {"c": 24, "py": 200}
"""Bytes per transposition-table entry: the C core's slot; a rough Python dict entry."""
NEAR_TT_LOG2 = 16
"""The C core's second, small table (for positions near the databases): at most 2**16 entries."""


def table_bytes(core: str, tt_log2: int) -> int:
    """Memory of one searcher's tables with a main table of 2**tt_log2 entries (the C core adds its small one)."""
    entries = (1 << tt_log2) + (1 << min(tt_log2, NEAR_TT_LOG2) if core == "c" else 0)
    return TT_ENTRY_BYTES[core] * entries

RulesT = TypeVar("RulesT")
Child = tuple[tuple[int, ...], int, bool, bool]
"""A move's outcome from the core: (mover-relative board after, gain, extra turn, game over)."""


@runtime_checkable
class Player(Protocol):
    """A bot: chooses an action for a position within a time budget, synchronously (all a server calls)."""

    def decide(self, position: Position, budget_s: float) -> Action:
        """A legal action for the side to move, decided within about `budget_s` seconds."""
        ...


class CoreRules(Protocol):
    """Compiled rules of one variant: houses per side and pits on the board."""

    @property
    def h(self) -> int:
        """Houses per side."""
        ...

    @property
    def n(self) -> int:
        """Pits on the board (2h + 2)."""
        ...


class CoreSearcher(Protocol):
    """One search at a time with its own transposition table and optional databases."""

    def search(self, board: Sequence[int], depth: int, alpha: int, beta: int, time_limit: float = 0.0,
               node_limit: int = 0, threads: int = 1) -> int:
        """Alpha-beta value of a mover-relative board (depth < 0: exact); fail-soft in (alpha, beta).

        Raises TimeoutError past `time_limit` seconds or `node_limit` nodes of this call (0: no limit).
        An exact search may run on `threads` threads sharing the table (simplified ABDADA).
        """
        ...

    def deepen(self, board: Sequence[int], time_limit: float, max_depth: int = -1,
               acyclic: bool = True) -> tuple[int, int, bool, int] | None:
        """A move by iterative deepening within `time_limit` seconds (0: none), without the GIL throughout.

        (pit, mover value, exact, depth) of the deepest iteration finished, None if none was: depths 1, 3, ...
        up to `max_depth` (< 0: 254), then, with `max_depth` < 0 and `acyclic`, an exact one (depth -1).
        """
        ...

    def clear(self) -> None:
        """Empty the transposition table."""
        ...

    def recall(self, on: bool = True, /) -> None:
        """From any thread: the current or next one-thread search stops soon with `Recalled`; False withdraws it."""
        ...

    @property
    def nodes(self) -> int:
        """Nodes searched so far."""
        ...

    @property
    def exact(self) -> bool:
        """Whether the last search reached no depth horizon."""
        ...

    @property
    def egdb_seeds(self) -> int:
        """Largest seed count covered by databases."""
        ...

    @property
    def stats(self) -> dict[str, int]:
        """Counts so far: nodes, table probes, hits and cut-offs, database reads, enhanced transposition cut-offs."""
        ...


class SearchCore(Protocol[RulesT]):
    """A search core module: `bots._search` (C) or `bots.pysearch` (its twin), over its own `Rules`."""

    def Rules(self, tables: Tables, /) -> RulesT:
        """Compile a variant's tables for this core."""
        ...

    @property
    def Recalled(self) -> type[Exception]:
        """What a search stopped by `CoreSearcher.recall` raises."""
        ...

    def Searcher(self, rules: RulesT, tt_log2: int = 20, egdb: Sequence[Any] | None = None, /) -> CoreSearcher:
        """A searcher with a table of 2**tt_log2 entries and database levels 0..N."""
        ...

    def play(self, rules: RulesT, board: Sequence[int], pit: int, /) -> Child:
        """Sow a house of a mover-relative board."""
        ...

    def legal(self, rules: RulesT, board: Sequence[int], /) -> list[int]:
        """Houses the mover may sow from."""
        ...

    def rank(self, rules: RulesT, board: Sequence[int], /) -> int:
        """Combinatorial rank of a board's houses among boards with as many seeds."""
        ...

    def level_size(self, houses: int, k: int, /) -> int:
        """Number of house contents of k seeds on 2*houses houses."""
        ...

    def build_level(self, rules: RulesT, k: int, levels: Sequence[Any], out: Any, start: int, stop: int, /) -> None:
        """Fill ranks start..stop of database level k."""
        ...

    def level_model(self, houses: int, k: int, values: Any, /) -> tuple[int, bytes]:
        """A level's format v2 model from its values: (shift, predictions by empty houses)."""
        ...

    def encode_level(self, houses: int, k: int, values: Any, shift: int, pred: bytes, out: Any, /) -> int:
        """Encode a level's values to format v2 after its header into `out`: the exceptions written."""
        ...

    def decode_level(self, houses: int, k: int, data: Any, out: Any, /) -> None:
        """Every value of a level's bytes (format v1 or v2) into `out`, one signed byte per rank."""
        ...

    def warm(self, buffer: Any, /) -> int:
        """Read every page of a buffer (a mapped database level) into memory: the bytes read through."""
        ...

    def interrupt(self, on: bool = True, /) -> None:
        """Stop every search and database build of the process at once (KeyboardInterrupt); False: run again."""
        ...


def implementation(name: str = "c") -> SearchCore[Any]:
    """The search core: `c` (bots._search) or `py` (bots.pysearch)."""
    if name == "c":
        return cast("SearchCore[Any]", importlib.import_module("bots._search"))
    if name == "py":
        return pysearch
    raise ValueError(f"unknown search implementation {name!r}: expected one of {IMPLEMENTATIONS}")


def core_name(core: SearchCore[Any]) -> str:
    """`py` for the Python twin, `c` for the C core."""
    return "py" if core is pysearch else "c"


def relative_board(position: Position) -> tuple[int, ...]:
    """The position's pits seen from the side to move (mover's houses first)."""
    pits = position.pits
    if position.to_move == Side.SOUTH:
        return pits
    h = position.variant.houses
    return pits[h + 1 :] + pits[: h + 1]


def pit_to_bin(position: Position, pit: int) -> int:
    """Bin number of the mover's relative house `pit`."""
    return pit + 1 if position.to_move == Side.SOUTH else pit + position.variant.houses + 2


def south_value(position: Position, mover_value: int) -> int:
    """South's final margin (stores now included) from what the mover still gains over the opponent."""
    return int(position.margin) + (mover_value if position.to_move == Side.SOUTH else -mover_value)


def mover_value(position: Position, south: int) -> int:
    """What the mover must still gain over the opponent for South's final margin to be `south` (`south_value`'s
    inverse)."""
    return south - int(position.margin) if position.to_move == Side.SOUTH else int(position.margin) - south

"""Immutable positions of a Kalah game, legal actions, and applying them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol.actions import Action, Sow, Swap, Transfer
from protocol.errors import (
    GameOverError,
    IllegalMoveError,
    ImpossiblePositionError,
    NotationError,
    OutOfTurnError,
    SwapNotOfferedError,
    TransferError,
)
from protocol.outcome import EndReason
from protocol.side import SIDES, Side
from protocol.sowing import Segment, end_reason, sow, sweep
from protocol.tables import Tables, compile_variant
from protocol.variant import Leftover, Variant

__all__ = ["MoveEvent", "Position", "Side"]


@dataclass(frozen=True, slots=True)
class MoveEvent:
    """What one action did: who acted, the seeds' path, captures, extra turn, game end."""

    action: Action
    side: Side
    ply: int
    segments: tuple[Segment, ...] = ()
    path: tuple[int, ...] = ()
    capture: tuple[int, int] | None = None
    extra_turn: bool = False
    end: EndReason | None = None

    @property
    def captured_bin(self) -> int | None:
        """Bin number of the captured opposite house, if there was a capture."""
        return None if self.capture is None else self.capture[0] + 1


def _path(t: Tables, side: int, segments: tuple[Segment, ...]) -> tuple[int, ...]:
    """Bins receiving each seed of a sowing turn, in order."""
    out: list[int] = []
    laps = t.laps[side]
    for start, seeds in segments:
        lap = laps[start]
        out.extend(lap[k % len(lap)] + 1 for k in range(seeds))
    return tuple(out)


def _board_end(text: str) -> EndReason:
    """The end reason a position text names: only the rules end a position."""
    reason = next((r for r in EndReason if r.value == text and r.on_board), None)
    if reason is None:
        raise NotationError(f"unknown end reason {text!r}: a position ends empty, majority or repetition")
    return reason


_FEN = re.compile(r"([\d,]+) ([SN]) (\d{1,6}) ([ptw]*|-)(?: (\w+))?")


class Position:
    """A position: pits in bin order, side to move, ply, and pie/transfer state."""

    __slots__ = (
        "end",
        "pie_open",
        "pits",
        "ply",
        "swapped",
        "tables",
        "to_move",
        "transfer_pending",
        "variant",
    )

    variant: Variant
    tables: Tables
    pits: tuple[int, ...]
    to_move: Side
    ply: int
    pie_open: bool
    transfer_pending: bool
    swapped: bool
    end: EndReason | None

    def __init__(
        self,
        variant: Variant,
        pits: tuple[int, ...],
        to_move: Side = Side.SOUTH,
        ply: int = 0,
        pie_open: bool = False,
        transfer_pending: bool = False,
        swapped: bool = False,
        end: EndReason | None = None,
        tables: Tables | None = None,
    ) -> None:
        self.variant = variant
        self.tables = tables if tables is not None else compile_variant(variant)
        self.pits = pits
        self.to_move = to_move
        self.ply = ply
        self.pie_open = pie_open
        self.transfer_pending = transfer_pending
        self.swapped = swapped
        self.end = end

    @classmethod
    def initial(cls, variant: Variant | None = None) -> Position:
        """The starting position of a variant (default Kalah(6,4))."""
        v = variant or Variant()
        h, s = v.houses, v.seeds
        pits = (s,) * h + (0,) + (s,) * h + (0,)
        first = Side.NORTH if v.opening_transfer else Side.SOUTH
        return cls(v, pits, first, 0, v.pie, v.opening_transfer)

    # --- queries -------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.end is not None

    @property
    def stores(self) -> tuple[int, int]:
        """Seeds in (South's store, North's store)."""
        s, n = self.tables.stores
        return self.pits[s], self.pits[n]

    @property
    def margin(self) -> int:
        """South's store minus North's store now."""
        s, n = self.tables.stores
        return self.pits[s] - self.pits[n]

    @property
    def result(self) -> int | None:
        """South's store minus North's store if the game is over, else None."""
        return self.margin if self.end is not None else None

    @property
    def swap_offered(self) -> bool:
        """Whether the side to move may answer with the pie-rule swap now."""
        return self.pie_open and self.to_move == Side.NORTH and not self.transfer_pending

    def house_bins(self, side: Side) -> range:
        """Bin numbers of a side's houses."""
        r = self.tables.house_range[side]
        return range(r.start + 1, r.stop + 1)

    def legal_bins(self) -> list[int]:
        """Bins the side to move may sow from (empty when a transfer is due or game over)."""
        if self.end is not None or self.transfer_pending:
            return []
        pits = self.pits
        return [i + 1 for i in self.tables.house_range[self.to_move] if pits[i]]

    def legal_actions(self) -> list[Action]:
        """Every legal action: sowings, then swap, then transfers."""
        actions: list[Action] = [Sow(b) for b in self.legal_bins()]
        if self.end is None and self.swap_offered:
            actions.append(Swap())
        if self.end is None and self.transfer_pending:
            actions.append(Transfer())
            houses = [i for r in self.tables.house_range for i in r]
            actions.extend(
                Transfer(a + 1, b + 1) for a in houses for b in houses if a != b and self.pits[a]
            )
        return actions

    def key(self) -> tuple[object, ...]:
        """Identity for repetition: every pit and store, side to move and pending choices."""
        return (self.pits, self.to_move, self.pie_open, self.transfer_pending)

    # --- applying actions -------------------------------------------------------------

    def apply(self, action: Action, side: Side | None = None) -> Position:
        """The position after `action` (by `side`, if given, which must be to move)."""
        if type(action) is Sow and self.end is None and (side is None or side == self.to_move):
            return self._sow(action, self.to_move, False)[0]
        return self.apply_event(action, side)[0]

    def play(self, bin_number: int) -> Position:
        """Shortcut: the position after sowing from `bin_number`."""
        return self.apply_event(Sow(bin_number))[0]

    def apply_event(self, action: Action, side: Side | None = None) -> tuple[Position, MoveEvent]:
        """The position after `action`, and what happened; raises a typed error if illegal."""
        if self.end is not None:
            raise GameOverError(f"the game is over ({self.end}); no more moves")
        mover = self.to_move
        if side is not None and side != mover:
            raise OutOfTurnError(f"it is {mover.name.lower()}'s turn, not {side.name.lower()}'s")
        if isinstance(action, Sow):
            pos, event = self._sow(action, mover, True)
            assert event is not None
            return pos, event
        if isinstance(action, Swap):
            if not self.swap_offered:
                raise SwapNotOfferedError("swap is only offered on North's first turn with the pie rule")
            pos = Position(self.variant, self.pits, mover, self.ply + 1, False, False, not self.swapped,
                           None, self.tables)
            return pos, MoveEvent(action, mover, self.ply)
        if isinstance(action, Transfer):
            return self._transfer(action, mover)
        raise IllegalMoveError(f"not an action: {action!r}")

    def _sow(self, action: Sow, mover: Side, explain: bool) -> tuple[Position, MoveEvent | None]:
        """Apply a sowing action."""
        t = self.tables
        if self.transfer_pending:
            raise TransferError("North must first choose the opening transfer (or none)")
        index = action.bin - 1
        if index not in t.house_range[mover]:
            raise IllegalMoveError(
                f"bin {action.bin} is not a house of {mover.name.lower()} "
                f"(bins {self.house_bins(mover).start}..{self.house_bins(mover).stop - 1})"
            )
        if not self.pits[index]:
            raise IllegalMoveError(f"bin {action.bin} is empty")
        pits = list(self.pits)
        segments, capture, extra = sow(t, pits, mover, index)
        end = end_reason(t, pits)
        if end is not None:
            sweep(t, pits)
        nxt = mover if extra else SIDES[1 - mover]
        pie_open = self.pie_open and mover == Side.SOUTH
        pos = Position(self.variant, tuple(pits), nxt, self.ply + 1, pie_open, False, self.swapped, end, t)
        if not explain:
            return pos, None
        seg = tuple(segments)
        return pos, MoveEvent(action, mover, self.ply, seg, _path(t, mover, seg), capture, extra, end)

    def _transfer(self, action: Transfer, mover: Side) -> tuple[Position, MoveEvent]:
        """Apply the opening transfer (or its refusal)."""
        if not self.transfer_pending:
            raise TransferError("no opening transfer is due now")
        pits = list(self.pits)
        if action.src is not None and action.dst is not None:
            houses = [i + 1 for r in self.tables.house_range for i in r]
            if action.src not in houses or action.dst not in houses or action.src == action.dst:
                raise TransferError(f"a transfer moves a seed between two different houses, not {action.token()}")
            if not pits[action.src - 1]:
                raise TransferError(f"bin {action.src} is empty")
            pits[action.src - 1] -= 1
            pits[action.dst - 1] += 1
        end = end_reason(self.tables, pits)  # a transfer can empty a row of a tiny board
        if end is not None:
            sweep(self.tables, pits)
        pos = Position(self.variant, tuple(pits), Side.SOUTH, self.ply + 1, self.pie_open and end is None,
                       False, self.swapped, end, self.tables)
        return pos, MoveEvent(action, mover, self.ply, end=end)

    def finish(self, reason: EndReason) -> Position:
        """This position ended for `reason` (e.g. repetition), with the leftover rule applied."""
        pits = list(self.pits)
        sweep(self.tables, pits)
        return Position(self.variant, tuple(pits), self.to_move, self.ply, False, False, self.swapped, reason)

    # --- text form ----------------------------------------------------------------------

    def fen(self) -> str:
        """Text form: `pits S|N ply flags [end]`, flags from p (pie open), t (transfer due), w (swapped)."""
        flags = "p" * self.pie_open + "t" * self.transfer_pending + "w" * self.swapped or "-"
        tail = f" {self.end}" if self.end else ""
        return f"{','.join(map(str, self.pits))} {self.to_move.letter} {self.ply} {flags}{tail}"

    @classmethod
    def from_fen(cls, variant: Variant, text: str) -> Position:
        """Parse the text form of `fen()` for a variant."""
        m = _FEN.fullmatch(text.strip())
        if not m:
            raise NotationError(f"bad position {text!r}: expected 'pits S|N ply flags [end]'")
        try:
            pits = tuple(int(x) for x in m[1].split(","))
        except ValueError:
            raise NotationError(f"bad pits in position {text!r}") from None
        if len(pits) != variant.pits:
            raise NotationError(f"a {variant.text()} position has {variant.pits} pits (2 x {variant.houses} houses "
                                f"and 2 stores), not {len(pits)}")
        if any(p > 100_000 for p in pits):
            raise NotationError("a pit holds at most 100000 seeds in the position notation")
        end = None if m[5] is None else _board_end(m[5])
        flags = m[4]
        return cls(variant, pits, Side.SOUTH if m[2] == "S" else Side.NORTH, int(m[3]),
                   "p" in flags, "t" in flags, "w" in flags, end)

    def check_possible(self) -> Position:
        """This position, if some game of its variant can reach it; else `ImpossiblePositionError` saying why."""
        v, t, pits = self.variant, self.tables, self.pits
        name = v.text()
        if len(pits) != v.pits or any(type(p) is not int or p < 0 for p in pits):
            raise ImpossiblePositionError(f"a {name} position has {v.pits} pits of 0 or more seeds")
        total, lost = sum(pits), self.end is not None and v.leftover is Leftover.DISCARD
        if total != v.total_seeds and not (lost and total < v.total_seeds):
            raise ImpossiblePositionError(f"this position holds {total} seeds; every {name} position holds "
                                          f"{v.total_seeds} (2 x {v.houses} houses x {v.seeds})")
        houses = [sum(pits[i] for i in r) for r in t.house_range]
        if self.end is not None and any(houses):
            raise ImpossiblePositionError(f"the game is over ({self.end}) but seeds are left in houses")
        if self.end is None and (end := end_reason(t, list(pits))) is not None:
            ended = list(pits)
            sweep(t, ended)
            fixed = Position(v, tuple(ended), self.to_move, self.ply, self.pie_open, self.transfer_pending,
                             self.swapped, end).fen()
            raise ImpossiblePositionError(f"the game would be over here ({end}); mark the position ended: the seeds "
                                          f"left in houses in the stores and the end as the last field, {fixed!r}")
        if ((self.pie_open or self.swapped) and not v.pie) or (self.transfer_pending and not v.opening_transfer):
            raise ImpossiblePositionError(f"the flags {self.fen().split()[3]} name a rule {name} does not have")
        if self.transfer_pending and (self.ply or self.to_move != Side.NORTH or any(pits[i] for i in t.stores)):
            raise ImpossiblePositionError("an opening transfer is due only at the start, with North to move")
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return self.variant == other.variant and self.fen() == other.fen()

    def __hash__(self) -> int:
        return hash((self.variant, self.fen()))

    def __repr__(self) -> str:
        return f"Position.from_fen({self.variant!r}, {self.fen()!r})"

    def __str__(self) -> str:
        h = self.variant.houses
        w = max(2, *(len(str(p)) for p in self.pits))
        north = " ".join(f"{p:{w}d}" for p in reversed(self.pits[h + 1 : 2 * h + 1]))
        south = " ".join(f"{p:{w}d}" for p in self.pits[:h])
        s_store, n_store = self.stores
        pad = " " * (w + 1)
        return f"{pad}{north}\n{n_store:{w}d}{' ' * ((w + 1) * h)} {s_store:{w}d}\n{pad}{south}"

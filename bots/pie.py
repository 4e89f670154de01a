"""The opener's first turn under the pie rule, chosen knowing that North may swap.

After South's whole first turn (extra turns included) North may swap: the board stands, the
seats exchange and the opener moves next, now as North. Either way the same game goes on from
the same board with North to move, so its value V (South's final margin, play going on
normally) does not depend on the swap; only who sits South does. North swaps exactly when
V > 0, so the opener ends with min(V, -V) = -|V|: its best first turn is the one that
maximizes min(value if North plays on, value if North swaps), the board nearest a draw. A
first turn that ends the game leaves nothing to swap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.position import Position, Side

Valuer = Callable[[Position, int], tuple[int, bool]]
"""South's value of a sowing position with no pie choice left, and whether it is proved; the
second argument is how many such positions are still to be valued (to share a time budget)."""


def in_first_turn(position: Position) -> bool:
    """Whether the opener (South) is playing its first turn and North may still swap after it."""
    return (position.pie_open and position.to_move == Side.SOUTH and not position.transfer_pending
            and not position.over)


def first_turn_boards(position: Position) -> list[Position]:
    """The boards North may be offered once the opener's first turn from here is over (North to move)."""
    if position.over:
        return []
    if not in_first_turn(position):
        return [position]
    return [board for b in position.legal_bins() for board in first_turn_boards(position.play(b))]


@dataclass(frozen=True)
class PieLine:
    """A first-turn choice: the opener's final margin with North's swap choice, the board value V, proof."""

    opener: int
    """The opener's final margin under best play on both sides, swap included: min(V, -V)."""
    south: int
    """V: South's final margin of the board that North is offered (or the margin the turn ended the game at)."""
    exact: bool


@dataclass(frozen=True)
class PieChoice:
    """The opener's best sowing now, and each legal sowing's line."""

    bin: int
    line: PieLine
    per_move: dict[int, PieLine] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        """Whether the choice is proved best: every line's board value was proved."""
        return all(line.exact for line in self.per_move.values())


def choose(position: Position, value_of: Valuer) -> PieChoice:
    """The opener's best sowing in its first turn (the lowest bin among equals), every sowing's line with it."""
    if not in_first_turn(position):
        raise ValueError("the pie choice is the opener's, during its first turn under the pie rule")
    todo = [len(first_turn_boards(position))]
    per_move = {b: _line(position.play(b), value_of, todo) for b in position.legal_bins()}
    best = max(per_move, key=lambda b: (per_move[b].opener, -b))
    return PieChoice(best, per_move[best], per_move)


def _line(position: Position, value_of: Valuer, todo: list[int]) -> PieLine:
    """The line of a position reached in the opener's first turn; `todo` counts the boards still to value."""
    if position.over:
        return PieLine(position.margin, position.margin, True)
    if in_first_turn(position):
        lines = [_line(position.play(b), value_of, todo) for b in position.legal_bins()]
        best = max(lines, key=lambda line: line.opener)
        return PieLine(best.opener, best.south, all(line.exact for line in lines))
    value, exact = value_of(position, todo[0])
    todo[0] -= 1
    return PieLine(min(value, -value), value, exact)

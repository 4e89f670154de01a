"""The two sides of the board."""

from __future__ import annotations

from enum import IntEnum


class Side(IntEnum):
    """A side of the board: South moves first."""

    SOUTH = 0
    NORTH = 1

    @property
    def other(self) -> Side:
        """The opposing side."""
        return SIDES[1 - self]

    @property
    def letter(self) -> str:
        """`S` or `N`."""
        return "SN"[self]


SIDES = (Side.SOUTH, Side.NORTH)

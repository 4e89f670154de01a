"""Shared test helpers."""

from __future__ import annotations

from protocol import Position, Side, Variant


def pos(variant: str | Variant, pits: list[int], to_move: str = "S", flags: str = "-") -> Position:
    """A position of `variant` from pits in bin order, e.g. pos('kalah(6,4)', [...])."""
    v = Variant.parse(variant) if isinstance(variant, str) else variant
    return Position.from_fen(v, f"{','.join(map(str, pits))} {to_move} 10 {flags}")


SOUTH, NORTH = Side.SOUTH, Side.NORTH

"""A `Variant` compiled into tables: sowing laps, opposites, owners and rule switches.

The Python rules (`protocol.position`) and the C search core (`bots`) both walk these
tables, so no rule code branches on the variant anywhere else.

Pit indices are bin numbers minus one: South's houses 0..h-1, South's store h, North's
houses h+1..2h, North's store 2h+1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from protocol.variant import Capture, Leftover, Variant

SOUTH, NORTH = 0, 1

# Capture codes shared with the C core.
CAPTURE_CODES = {Capture.STANDARD: 0, Capture.EMPTY: 1, Capture.NONE: 2}
LEFTOVER_CODES = {Leftover.OWNER: 0, Leftover.EMPTIER: 1, Leftover.DISCARD: 2}


@dataclass(frozen=True, slots=True)
class Tables:
    """Everything the move code needs about a variant, precomputed."""

    variant: Variant
    houses: int
    pits: int
    stores: tuple[int, int]
    house_range: tuple[range, range]
    owner: tuple[int, ...]
    opposite: tuple[int, ...]
    laps: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]
    capture: Capture
    capture_code: int
    extra_turn: bool
    relay: bool
    leftover: Leftover
    leftover_code: int
    majority_end: bool
    total_seeds: int


def _lap(h: int, side: int, start: int, clockwise: bool) -> tuple[int, ...]:
    """Pits receiving one seed each, in order, when `side` sows a full lap from `start`."""
    n = 2 * h + 2
    skip = 2 * h + 1 if side == SOUTH else h
    step = -1 if clockwise else 1
    out: list[int] = []
    pit = start
    while len(out) < n - 1:
        pit = (pit + step) % n
        if pit != skip:
            out.append(pit)
    return tuple(out)


@lru_cache(maxsize=256)
def compile_variant(variant: Variant) -> Tables:
    """Compile (and cache) the tables of a variant."""
    h = variant.houses
    n = 2 * h + 2
    owner = tuple(SOUTH if i <= h else NORTH for i in range(n))
    opposite = tuple(2 * h - i if i not in (h, n - 1) else -1 for i in range(n))
    laps = tuple(
        tuple(_lap(h, side, i, variant.clockwise) if i not in (h, n - 1) else () for i in range(n))
        for side in (SOUTH, NORTH)
    )
    return Tables(
        variant=variant,
        houses=h,
        pits=n,
        stores=(h, n - 1),
        house_range=(range(0, h), range(h + 1, n - 1)),
        owner=owner,
        opposite=opposite,
        laps=(laps[0], laps[1]),
        capture=variant.capture,
        capture_code=CAPTURE_CODES[variant.capture],
        extra_turn=variant.extra_turn,
        relay=variant.relay,
        leftover=variant.leftover,
        leftover_code=LEFTOVER_CODES[variant.leftover],
        majority_end=variant.majority_end,
        total_seeds=variant.total_seeds,
    )

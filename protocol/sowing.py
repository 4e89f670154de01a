"""The move engine: sowing, relay, captures and the end sweep, on a mutable pit list.

These functions walk `Tables` only; they hold no state and never branch on a variant name.
`Position` wraps them in immutable values; the bots' pure-Python search calls them directly.
"""

from __future__ import annotations

from protocol.outcome import EndReason
from protocol.tables import NORTH, SOUTH, Tables

Segment = tuple[int, int]
"""One lift-and-sow: (start pit, seeds lifted)."""


def sow_lap(laps: tuple[tuple[int, ...], ...], pits: list[int], start: int) -> int:
    """Lift all seeds of `start` and sow them along its lap; return the last pit sown."""
    seeds = pits[start]
    pits[start] = 0
    lap = laps[start]
    size = len(lap)
    if seeds <= size:
        for pit in lap[:seeds]:
            pits[pit] += 1
        return lap[seeds - 1]
    rounds, rest = divmod(seeds, size)
    for pit in lap:
        pits[pit] += rounds
    for pit in lap[:rest]:
        pits[pit] += 1
    return lap[(seeds - 1) % size]


def sow(
    t: Tables, pits: list[int], side: int, start: int
) -> tuple[list[Segment], tuple[int, int] | None, bool]:
    """Play one sowing turn of `side` from house `start` in place.

    Returns the segments sown (relay sowing has several), the capture as
    (captured house, seeds moved to the store) or None, and whether the mover moves again.
    """
    laps = t.laps[side]
    store = t.stores[side]
    segments = [(start, pits[start])]
    last = sow_lap(laps, pits, start)
    if t.relay:
        seen: set[tuple[int, ...]] = set()
        while last != store and pits[last] > 1:
            key = (*pits, last)
            if key in seen:
                break
            seen.add(key)
            segments.append((last, pits[last]))
            last = sow_lap(laps, pits, last)
        return segments, None, last == store and t.extra_turn
    if last == store:
        return segments, None, t.extra_turn
    if pits[last] == 1 and t.owner[last] == side and t.capture_code != 2:
        opp = t.opposite[last]
        if pits[opp] or t.capture_code == 1:
            gained = pits[opp] + 1
            pits[store] += gained
            pits[opp] = 0
            pits[last] = 0
            return segments, (opp, gained), False
    return segments, None, False


def end_reason(t: Tables, pits: list[int]) -> EndReason | None:
    """Why the game is over in this position (before the sweep), or None."""
    south, north = t.house_range
    if not any(pits[south.start : south.stop]) or not any(pits[north.start : north.stop]):
        return EndReason.EMPTY
    if t.majority_end:
        half = t.total_seeds
        if pits[t.stores[SOUTH]] * 2 > half or pits[t.stores[NORTH]] * 2 > half:
            return EndReason.MAJORITY
    return None


def sweep(t: Tables, pits: list[int]) -> None:
    """Apply the leftover rule to the seeds still in houses, in place."""
    ranges = t.house_range
    left = [sum(pits[r.start : r.stop]) for r in ranges]
    for r in ranges:
        for i in r:
            pits[i] = 0
    if t.leftover_code == 2:  # discard
        return
    if t.leftover_code == 1 and (left[SOUTH] == 0) != (left[NORTH] == 0):  # emptier
        taker = SOUTH if left[SOUTH] == 0 else NORTH
        pits[t.stores[taker]] += left[SOUTH] + left[NORTH]
        return
    pits[t.stores[SOUTH]] += left[SOUTH]
    pits[t.stores[NORTH]] += left[NORTH]

"""The garbage-collector tuning of `kalah serve`: how far apart its full collections come."""

from __future__ import annotations

from server.gc_tuning import COLLECT_EVERY_S, next_collection


def test_full_collections_come_rarer_while_they_find_no_garbage_and_sooner_once_they_do() -> None:
    """A full collection that found under 1% of the objects unreachable doubles the wait up to the longest; one that
    found more halves it down to the shortest."""
    shortest, longest = COLLECT_EVERY_S
    waits = [shortest]
    for _ in range(4):
        waits.append(next_collection(waits[-1], 0, 220_000, shortest, longest))
    assert waits == [600, 1200, 2400, 3600, 3600]
    assert next_collection(3600, 2_199, 220_000, shortest, longest) == 3600  # under 1%: stays at the longest
    assert next_collection(3600, 2_200, 220_000, shortest, longest) == 1800
    assert next_collection(900, 50_000, 220_000, shortest, longest) == 600

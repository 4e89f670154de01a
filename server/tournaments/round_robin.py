"""Round-robin pairings from the Berger tables (FIDE Handbook C.05, annex 1).

With `n` entrants (one more, a bye, when `n` is odd) the last number `n` meets `p(r) =
(r - 1) * n/2 mod (n - 1) + 1` in round `r`, south in the even rounds; the others meet where
`i + j = 2 p(r) mod (n - 1)`, the one `k` places after `p(r)` south against the one `k` places
before. A second cycle repeats the first with the sides swapped.
"""

from __future__ import annotations


def berger_round(n: int, rnd: int) -> list[tuple[int, int]]:
    """Round `rnd` (1-based, 1..n-1) of the Berger table for an even `n`: (south, north) numbers, table order."""
    if n < 2 or n % 2:
        raise ValueError(f"a Berger table has an even number of places, not {n}")
    if not 1 <= rnd <= n - 1:
        raise ValueError(f"a Berger table for {n} has rounds 1 to {n - 1}, not {rnd}")
    m = n - 1
    p = (rnd - 1) * (n // 2) % m + 1
    games = [(n, p) if rnd % 2 == 0 else (p, n)]
    for k in range(1, n // 2):
        ahead, behind = (p - 1 + k) % m + 1, (p - 1 - k) % m + 1
        games.append((ahead, behind))
    return games


def round_robin_rounds(entrants: list[str], cycles: int = 2) -> list[list[tuple[str, str | None]]]:
    """Every round of a round-robin of `entrants` (in seeding order): (south, north) pairs, north None for a bye."""
    if len(entrants) < 2:
        raise ValueError("a round-robin needs two entrants or more")
    places: list[str | None] = [*entrants, None] if len(entrants) % 2 else list(entrants)
    n = len(places)
    first: list[list[tuple[str, str | None]]] = []
    for rnd in range(1, n):
        games: list[tuple[str, str | None]] = []
        for a, b in berger_round(n, rnd):
            south, north = places[a - 1], places[b - 1]
            if south is None:
                south, north = north, None
            assert south is not None
            games.append((south, north))
        first.append(sorted(games, key=lambda g: g[1] is None))
    second: list[list[tuple[str, str | None]]] = [
        [(north, south) if north is not None else (south, None) for south, north in rnd] for rnd in first]
    return first + second if cycles == 2 else first

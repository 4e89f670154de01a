"""Round-robin pairings against the FIDE Berger tables (Handbook C.05, annex 1) for 3 to 6 entrants."""

from __future__ import annotations

from itertools import combinations

import pytest

from server.tournaments.round_robin import berger_round, round_robin_rounds

FIDE_BERGER = {
    4: ["1-4 2-3", "4-3 1-2", "2-4 3-1"],
    6: ["1-6 2-5 3-4", "6-4 5-3 1-2", "2-6 3-1 4-5", "6-5 1-4 2-3", "3-6 4-2 5-1"],
}
"""The published tables for 3-4 and 5-6 players, white (here south, who moves first) named first."""


@pytest.mark.parametrize("n", [4, 6])
def test_berger_rounds_are_the_published_tables(n: int) -> None:
    """Every round of the tables for 4 and 6 places, in table order, with the published colours."""
    for rnd, line in enumerate(FIDE_BERGER[n], start=1):
        expected = [tuple(int(x) for x in game.split("-")) for game in line.split()]
        assert berger_round(n, rnd) == expected


@pytest.mark.parametrize("n", [3, 5])
def test_odd_entrants_take_the_last_place_as_a_bye(n: int) -> None:
    """With 3 or 5 entrants the table for 4 or 6 is used and whoever meets the last place has the bye."""
    names = [f"p{i}" for i in range(1, n + 1)]
    rounds = round_robin_rounds(names, cycles=1)
    table = FIDE_BERGER[n + 1]
    for games, line in zip(rounds, table, strict=True):
        for game in line.split():
            a, b = (int(x) for x in game.split("-"))
            if n + 1 in (a, b):
                assert (f"p{min(a, b)}", None) in games
            else:
                assert (f"p{a}", f"p{b}") in games
        assert games[-1][1] is None


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_double_round_robin_plays_every_pairing_once_with_each_side(n: int) -> None:
    """Two cycles: each pair meets twice, once with each entrant south; each entrant at most once a round."""
    names = [f"p{i}" for i in range(n)]
    rounds = round_robin_rounds(names, cycles=2)
    assert len(rounds) == 2 * (n - 1 + n % 2)
    games = [(s, north) for rnd in rounds for s, north in rnd if north is not None]
    pairs = list(combinations(names, 2))
    assert sorted(games) == sorted(pairs + [(b, a) for a, b in pairs])
    for rnd in rounds:
        seated = [p for game in rnd for p in game if p is not None]
        assert sorted(seated) == sorted(names)


def test_bad_tables_are_refused() -> None:
    """An odd number of places, a round out of range, or one entrant are `ValueError`s."""
    for call in (lambda: berger_round(5, 1), lambda: berger_round(4, 4), lambda: round_robin_rounds(["a"])):
        with pytest.raises(ValueError):
            call()

"""Swiss pairing (FIDE Dutch through caissify-pairings): a worked example derived by hand, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments.records import Pairing
from server.tournaments.swiss import NoPairingError, histories, swiss_round

SEVEN = [f"p{i}" for i in range(1, 8)]


def _played(lines: list[str]) -> list[Pairing]:
    """Pairings from their text form."""
    return [Pairing.parse(line) for line in lines]


def test_seven_entrants_three_rounds_match_the_dutch_rules_worked_by_hand() -> None:
    """Seven entrants, seeded p1..p7, three rounds, a bye each round.

    Round 1. Everyone has 0: the bye goes to the lowest in the lowest score group, p7. The other
    six split into S1 = p1 p2 p3 and S2 = p4 p5 p6, paired in order: p1-p4, p2-p5, p3-p6; p1 has
    the initial colour (south, moving first) and the colours alternate down the tables:
    p1-p4, p5-p2, p3-p6. Results: p1, p2 and p3 win.

    Round 2. Scores p1 p2 p3 p7 1, p4 p5 p6 0. The bye goes to the lowest score group (p4 p5 p6);
    there S1 = p4, S2 = p5 p6 pairs p4-p5 and leaves p6, who has had no bye. p4 was north, p5
    south: p4-p5. The group of 1 is p1 p2 p3 p7: S1 = p1 p2, S2 = p3 p7. The first candidate
    p1-p3 p2-p7 gives p1 and p3 (both south in round 1, both wanting north) a colour conflict; the
    transposition p1-p7 p2-p3 gives every player their colour: p1 north (p7 had the bye, no
    preference), p2 south and p3 north. Results: p1 wins, p2-p3 drawn, p4 wins.

    Round 3 (scores p1 2; p2 p3 1.5; p4 p6 p7 1; p5 0). The bye goes to p5, alone in the lowest
    group and without a bye. p1 floats down into the 1.5 group: S1 = p1, S2 = p2 p3; p1-p2 is new
    and gives both their colour (p1 was south then north, p2 north then south), p3 floats down to
    the group of 1: S1 = p3, S2 = p4 p6 p7: p3-p4 is new and colours fit (p3 wants south, p4
    north), which leaves p6-p7, new, p6 (north, bye) south and p7 (bye, south) north.
    """
    r1 = swiss_round(SEVEN, [], 1, 3)
    assert r1 == [("p1", "p4"), ("p5", "p2"), ("p3", "p6"), ("p7", None)]
    past = _played(["1.1 p1-p4 1-0 e-r1-t1", "1.2 p5-p2 0-1 e-r1-t2", "1.3 p3-p6 1-0 e-r1-t3", "1.4 p7 bye"])
    r2 = swiss_round(SEVEN, past, 2, 3)
    assert set(r2) == {("p7", "p1"), ("p2", "p3"), ("p4", "p5"), ("p6", None)}
    past += _played(["2.1 p7-p1 0-1 e-r2-t1", "2.2 p2-p3 1/2-1/2 e-r2-t2", "2.3 p4-p5 1-0 e-r2-t3", "2.4 p6 bye"])
    r3 = swiss_round(SEVEN, past, 3, 3)
    assert set(r3) == {("p1", "p2"), ("p3", "p4"), ("p6", "p7"), ("p5", None)}
    assert r3[-1] == ("p5", None)


def test_histories_count_byes_colours_and_floats() -> None:
    """A bye scores one point and counts as a float down; a game records each side's colour."""
    past = _played(["1.1 p1-p2 1-0 e-r1-t1", "1.2 p3 bye", "2.1 p3-p1 1/2-1/2 e-r2-t1", "2.2 p2 bye"])
    found = histories(["p1", "p2", "p3"], past)
    assert (found["p1"].score, found["p1"].colours, found["p1"].floats) == (1.5, ["white", "black"], ["none", "none"])
    assert (found["p3"].score, found["p3"].byes, found["p3"].floats) == (1.5, 1, ["down", "none"])
    assert (found["p2"].score, found["p2"].byes, found["p2"].colours) == (1.0, 1, ["black"])


def test_no_pairing_left_is_a_typed_error() -> None:
    """Three entrants who have all met and had their byes cannot be paired a fourth time."""
    past = _played(["1.1 a-b 1-0 x1", "1.2 c bye", "2.1 c-a 1-0 x2", "2.2 b bye", "3.1 b-c 1-0 x3", "3.2 a bye"])
    with pytest.raises(NoPairingError):
        swiss_round(["a", "b", "c"], past, 4, 4)


@st.composite
def _tournaments(draw: st.DrawFn) -> tuple[int, int, list[float]]:
    """A number of entrants, a number of rounds, and enough results for every game."""
    n = draw(st.integers(min_value=2, max_value=11))
    rounds = draw(st.integers(min_value=1, max_value=max(1, (n + 1) // 2)))
    results = draw(st.lists(st.sampled_from([1.0, 0.5, 0.0]), min_size=n * rounds, max_size=n * rounds))
    return n, rounds, results


@settings(max_examples=60, deadline=None)
@given(_tournaments())
def test_swiss_never_repeats_a_pairing_or_a_bye_and_keeps_colours_in_bounds(case: tuple[int, int, list[float]]) -> None:
    """Whatever the results: every round seats everyone once, no pair meets twice, nobody has two byes,
    and before the last round no entrant's south and north games differ by more than two."""
    n, rounds, results = case
    entrants = [f"e{i}" for i in range(n)]
    past: list[Pairing] = []
    outcomes = iter(results)
    met: set[frozenset[str]] = set()
    byes: dict[str, int] = dict.fromkeys(entrants, 0)
    balance: dict[str, int] = dict.fromkeys(entrants, 0)
    for rnd in range(1, rounds + 1):
        pairs = swiss_round(entrants, past, rnd, rounds)
        seated = [p for pair in pairs for p in pair if p is not None]
        assert sorted(seated) == sorted(entrants)
        for table, (south, north) in enumerate(pairs, start=1):
            if north is None:
                byes[south] += 1
                past.append(Pairing(rnd, table, south))
                continue
            assert frozenset((south, north)) not in met
            met.add(frozenset((south, north)))
            balance[south] += 1
            balance[north] -= 1
            past.append(Pairing(rnd, table, south, north, f"m{rnd}-{table}", next(outcomes)))
        assert max(byes.values()) <= 1
        if rnd < rounds:
            assert all(abs(b) <= 2 for b in balance.values()), balance

"""Standings: scores with Buchholz and Sonneborn-Berger tiebreaks worked by hand, and the crosstable."""

from __future__ import annotations

from server.tournaments.records import Pairing
from server.tournaments.standings import crosstable, crosstable_text, head_to_head, standings

SEVEN = [f"p{i}" for i in range(1, 8)]
SWISS = [Pairing.parse(line) for line in (
    "1.1 p1-p4 1-0 e-r1-t1", "1.2 p5-p2 0-1 e-r1-t2", "1.3 p3-p6 1-0 e-r1-t3", "1.4 p7 bye",
    "2.1 p7-p1 0-1 e-r2-t1", "2.2 p2-p3 1/2-1/2 e-r2-t2", "2.3 p4-p5 1-0 e-r2-t3", "2.4 p6 bye",
    "3.1 p1-p2 1/2-1/2 e-r3-t1", "3.2 p3-p4 1-0 e-r3-t2", "3.3 p6-p7 0-1 e-r3-t3", "3.4 p5 bye",
)]
"""The worked seven-entrant Swiss (tests/server/tournaments/test_swiss.py), with round-3 results."""


def test_tiebreaks_computed_by_hand() -> None:
    """Final scores p1 p3 2.5; p2 p7 2; p4 p5 p6 1 (a bye is a point).

    Buchholz (opponents' final scores, a bye adds nothing) and Sonneborn-Berger (beaten opponents'
    scores plus half the drawn ones'):
    p1 met p4 (1, won), p7 (2, won), p2 (2, drew): B 5, SB 1 + 2 + 1 = 4.
    p3 met p6 (1, won), p2 (2, drew), p4 (1, won): B 4, SB 1 + 1 + 1 = 3.
    p2 met p5 (1, won), p3 (2.5, drew), p1 (2.5, drew): B 6, SB 1 + 1.25 + 1.25 = 3.5.
    p7 bye, p1 (2.5, lost), p6 (1, won): B 3.5, SB 1.
    p4 met p1 (2.5, lost), p5 (1, won), p3 (2.5, lost): B 6, SB 1.
    p6 met p3 (2.5, lost), bye, p7 (2, lost): B 4.5, SB 0.
    p5 met p2 (2, lost), p4 (1, lost), bye: B 3, SB 0.
    Order: p1 (Buchholz 5 beats 4) p3, p2 (6 beats 3.5) p7, then p4 p6 p5 by Buchholz.
    """
    rows = standings(SEVEN, SWISS)
    got = [(r.name, r.score, r.buchholz, r.sonneborn_berger, r.rank) for r in rows]
    assert got == [("p1", 2.5, 5.0, 4.0, 1), ("p3", 2.5, 4.0, 3.0, 2), ("p2", 2.0, 6.0, 3.5, 3),
                   ("p7", 2.0, 3.5, 1.0, 4), ("p4", 1.0, 6.0, 1.0, 5), ("p6", 1.0, 4.5, 0.0, 6),
                   ("p5", 1.0, 3.0, 0.0, 7)]
    p2 = rows[2]
    assert (p2.wins, p2.draws, p2.losses, p2.byes) == (1, 2, 0, 0)
    assert (rows[6].wins, rows[6].losses, rows[6].byes) == (0, 2, 1)


def test_crosstable_names_opponents_by_rank_side_and_result() -> None:
    """p1 beat rank 5 as south, rank 4 as north and drew rank 3 as south; p5 lost twice and had the last bye."""
    rows = crosstable(SEVEN, SWISS)
    assert (rows[0].name, rows[0].cells) == ("p1", ["5s1", "4n1", "3s="])
    assert (rows[6].name, rows[6].cells) == ("p5", ["3s0", "5n0", "+"])
    text = crosstable_text(rows)
    assert text.splitlines()[0].split() == ["1", "p1", "2.5", "5s1", "4n1", "3s="]


def test_games_under_way_count_nothing_yet() -> None:
    """A game without a result scores nothing and shows `*` in the crosstable; an unplayed round `-`."""
    live = [Pairing.parse("1.1 a-b * e-r1-t1")]
    assert [r.score for r in standings(["a", "b", "c"], live)] == [0.0, 0.0, 0.0]
    cells = {r.name: r.cells for r in crosstable(["a", "b", "c"], live, rounds=2)}
    assert cells == {"a": ["2s*", "-"], "b": ["1n*", "-"], "c": ["-", "-"]}


def test_head_to_head_sums_both_cycles() -> None:
    """A double round-robin's grid adds up both games of each pair."""
    games = [Pairing.parse(line) for line in ("1.1 a-b 1-0 m1", "2.1 b-a 1/2-1/2 m2", "2.2 c bye")]
    grid = head_to_head(["a", "b", "c"], games)
    assert grid == {"a": {"b": 1.5}, "b": {"a": 0.5}, "c": {}}

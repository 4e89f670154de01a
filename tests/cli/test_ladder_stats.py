"""The ladder's statistics against values worked out by hand: Elo ± 95 %, the GSPRT ratio, its bounds, the report."""

from __future__ import annotations

import math

import pytest

from cli.ladder_report import tallies
from cli.ladder_stats import Sprt, elo_estimate, elo_of, llr_pentanomial, llr_trinomial, score_of


def test_elo_and_score_are_inverse_logistic_maps() -> None:
    """A 3/4 score is +190.85 Elo, 1/2 is 0, and score_of undoes elo_of; 0 and 1 are infinite."""
    assert elo_of(0.75) == pytest.approx(190.848, abs=1e-3)
    assert elo_of(0.5) == 0
    assert score_of(elo_of(0.3)) == pytest.approx(0.3)
    assert elo_of(1.0) == math.inf and elo_of(0.0) == -math.inf


def test_elo_interval_of_ten_wins_twenty_draws_five_losses() -> None:
    """W10 D20 L5: score 4/7 (+49.98 Elo), per-game variance 0.10204, standard error 0.05399; the 95 % interval
    is [elo(4/7 - 1.96 se), elo(4/7 + 1.96 se)] = [-23.94, +128.76]."""
    est = elo_estimate(10, 20, 5)
    assert est is not None
    assert est.elo == pytest.approx(49.975, abs=1e-3)
    assert est.low == pytest.approx(-23.94, abs=0.01)
    assert est.high == pytest.approx(128.76, abs=0.01)
    assert est.text() == "+50.0 ± 76.3"
    assert elo_estimate(0, 0, 0) is None


def test_gsprt_trinomial_and_pentanomial_ratios() -> None:
    """Elo0 0, Elo1 10 (scores 0.5 and 0.514387): W10 D20 L5 gives 35 x 0.014387 x 0.128470 / (2 x 0.102041)
    = 0.31699; pairs [1, 3, 10, 4, 2] (mean 0.5375, variance 0.057969) give 20 x 0.014387 x 0.060613 /
    (2 x 0.057969) = 0.15043."""
    assert llr_trinomial(10, 20, 5, 0, 10) == pytest.approx(0.31699, abs=1e-5)
    assert llr_pentanomial([1, 3, 10, 4, 2], 0, 10) == pytest.approx(0.15043, abs=1e-5)
    assert llr_trinomial(0, 0, 0, 0, 10) == 0
    assert llr_trinomial(5, 20, 10, 0, 10) < 0


def test_sprt_bounds_and_verdicts() -> None:
    """alpha = beta = 0.05: bounds log(0.05/0.95) = -2.944 and +2.944; a sample without variance (a clean sweep)
    has no ratio yet; pairs [0, 0, 5, 0, 10] against [-300, 0] Elo accept H1, [10, 0, 5, 0, 0] accept H0."""
    sprt = Sprt.parse("0,10,0.05,0.05")
    assert sprt.lower == pytest.approx(-2.9444, abs=1e-4) and sprt.upper == pytest.approx(2.9444, abs=1e-4)
    assert sprt.verdict(3.0) == "H1" and sprt.verdict(-3.0) == "H0" and sprt.verdict(0.1) is None
    assert llr_pentanomial([0, 0, 0, 0, 50], sprt.elo0, sprt.elo1) == 0
    wide = Sprt.parse("-300,0,0.05,0.05")
    assert wide.verdict(llr_pentanomial([0, 0, 5, 0, 10], wide.elo0, wide.elo1)) == "H1"
    assert wide.verdict(llr_pentanomial([10, 0, 5, 0, 0], wide.elo0, wide.elo1)) == "H0"
    for bad in ("0,10,0.05", "10,0,0.05,0.05", "0,10,0.6,0.6", "a,b,c,d"):
        with pytest.raises(ValueError):
            Sprt.parse(bad)


def test_tallies_count_each_pairing_from_its_first_players_side_and_pair_the_openings() -> None:
    """Two openings of a v b, each played with both colours: a's W-D-L, its pairs' points, and each player's."""
    games = [("k|0|0", "a", "b", 1.0), ("k|0|1", "b", "a", 0.0),   # a wins both: a pair of 2 points
             ("k|1|0", "a", "b", 0.5), ("k|1|1", "b", "a", 1.0),   # a draws, then loses: 1/2 point
             ("k|2|0", "a", "b", 1.0)]                              # an unfinished pair: not a pentanomial count
    by_pair, by_player = tallies(games, ["a", "b"])
    t = by_pair[("a", "b")]
    assert (t.wins, t.draws, t.losses) == (3, 1, 1)
    assert t.pairs == [0, 1, 0, 0, 1]
    assert (by_player["b"].wins, by_player["b"].draws, by_player["b"].losses) == (1, 1, 3)


def test_a_sweep_has_a_bound_not_an_estimate() -> None:
    """All won (or all lost): no finite estimate, so the exact 95 % bound is printed (2-0 says little, 20-0 more)."""
    two, twenty, lost = elo_estimate(2, 0, 0), elo_estimate(20, 0, 0), elo_estimate(0, 0, 4)
    assert two is not None and twenty is not None and lost is not None
    assert two.text() == ">= -291" and twenty.text() == ">= +277" and lost.text() == "<= +72"
    assert score_of(two.low) == pytest.approx(0.025 ** 0.5)
    open_above, none = elo_estimate(1, 1, 0), elo_estimate(1, 0, 1)
    assert open_above is not None and none is not None
    assert open_above.text() == "+190.8 (>= -68)" and none.text() == "+0.0 (no bound yet)"

"""Glicko-2 against Glickman's published worked example."""

from __future__ import annotations

import pytest

from server.core.ratings import Rating, update, update_pair


def test_glickman_worked_example() -> None:
    """1500/200/0.06 beating 1400/30 and losing to 1550/100 and 1700/300 -> 1464.06/151.52/0.05999."""
    player = Rating(1500, 200, 0.06)
    games = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    new = update(player, games)
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.rd == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)


def test_no_games_widens_deviation() -> None:
    """A period without games keeps the rating and widens the deviation."""
    new = update(Rating(1500, 50, 0.06), [])
    assert new.rating == 1500 and new.rd == pytest.approx((50**2 + (0.06 * 173.7178) ** 2) ** 0.5)


def test_pair_update_is_zero_sum_for_equal_players() -> None:
    """Between equal players a win moves both by the same amount in opposite directions."""
    a, b = update_pair(Rating(), Rating(), 1.0)
    assert a.rating > 1500 > b.rating
    assert a.rating - 1500 == pytest.approx(1500 - b.rating)
    draw_a, draw_b = update_pair(Rating(), Rating(), 0.5)
    assert draw_a.rating == pytest.approx(1500) and draw_b.rating == pytest.approx(1500)
    assert draw_a.rd < 350


def test_text_shows_interval() -> None:
    """The text form is rating ± 1.96 RD."""
    assert Rating(1600, 100).text() == "1600 ± 196"

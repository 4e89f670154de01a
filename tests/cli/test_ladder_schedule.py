"""The ladder's schedule and standings (pure parts)."""

from __future__ import annotations

import pytest

from cli.ladder_schedule import schedule
from protocol import Game, Variant
from server.core.standings import GameResult, compute, render


def test_every_opening_played_twice_with_sides_exchanged() -> None:
    """Each pairing gets games/2 openings, each once with either bot as South."""
    games = schedule(["random", "greedy", "alphabeta:2"], 4, Variant(), seed=7)
    assert len(games) == 3 * 4
    assert len({g.key for g in games}) == len(games)
    for first, second in zip(games[::2], games[1::2], strict=True):
        assert (first.south, first.north) == (second.north, second.south)
        assert first.opening == second.opening
        Game.from_record(Variant(), list(first.opening))  # the opening is legal


def test_schedule_is_reproducible_from_the_seed() -> None:
    """The same seed gives the same schedule; another seed other openings."""
    a = schedule(["x", "y"], 20, Variant(), seed=1)
    assert a == schedule(["x", "y"], 20, Variant(), seed=1)
    assert [g.opening for g in a] != [g.opening for g in schedule(["x", "y"], 20, Variant(), seed=2)]


def test_pie_openings_stop_before_the_swap_decision() -> None:
    """With the pie rule the bots decide the swap themselves: openings stop before it."""
    for g in schedule(["x", "y"], 10, Variant(pie=True), seed=3):
        game = Game.from_record(Variant(pie=True), list(g.opening))
        assert all(a.token() != "swap" for a in g.opening)
        assert not game.over


def test_bad_schedules() -> None:
    """Fewer than two distinct bots or no games are refused."""
    with pytest.raises(ValueError):
        schedule(["x"], 2, Variant())
    with pytest.raises(ValueError):
        schedule(["x", "x"], 2, Variant())
    with pytest.raises(ValueError):
        schedule(["x", "y"], 0, Variant())


def test_standings_order_and_head_to_head() -> None:
    """A bot that wins every game ranks first; head-to-head counts mirror each other."""
    results = [GameResult("strong", "weak", 1.0)] * 6 + [GameResult("weak", "strong", 0.5)]
    table, h2h = compute(results)
    assert [s.name for s in table] == ["strong", "weak"]
    assert (table[0].wins, table[0].draws, table[0].losses) == (6, 1, 0)
    assert h2h["strong", "weak"] == [6, 1, 0] and h2h["weak", "strong"] == [0, 1, 6]
    assert table[0].rating.rd < 350
    text = render(table, h2h)
    assert "strong" in text.splitlines()[1] and "6-1-0" in text

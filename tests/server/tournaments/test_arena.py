"""Arena pairing: only waiting entrants are paired, never one twice at once, no immediate rematch, streaks."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from server.tournaments.arena_pairing import ArenaError, ArenaPool
from server.tournaments.records import Pairing


def test_first_wave_pairs_neighbours_in_joining_order() -> None:
    """Six entrants with no points are paired first with second, third with fourth, fifth with sixth."""
    pool = ArenaPool()
    for name in "abcdef":
        pool.join(name)
    assert pool.pair() == [("a", "b"), ("c", "d"), ("e", "f")]
    assert pool.pair() == [] and pool.playing() == set("abcdef")


def test_finished_players_are_paired_again_but_not_with_their_last_opponent() -> None:
    """a-b ends while c-d plays: a and b wait (no rematch); when c-d ends, a meets c and b meets d."""
    pool = ArenaPool()
    for name in "abcd":
        pool.join(name)
    pool.pair()
    pool.finish("a", "b", 1.0)
    assert pool.pair() == [] and pool.waiting() == ["a", "b"]
    pool.finish("c", "d", 0.5)
    games = pool.pair()
    assert {frozenset(g) for g in games} == {frozenset("ac"), frozenset("bd")}


def test_two_entrants_alone_may_play_again() -> None:
    """With only two active entrants, the rematch is the only game: it is played."""
    pool = ArenaPool()
    pool.join("a")
    pool.join("b")
    pool.pair()
    pool.finish("a", "b", 0.0)
    assert len(pool.pair()) == 1


def test_streak_bonus_doubles_after_two_wins_until_a_draw() -> None:
    """Wins score 2, 2, then 4 and 4 on fire; a draw on fire scores 2 and ends the streak; then a win is 2."""
    pool = ArenaPool(streak_bonus=True)
    for name in "ab":
        pool.join(name)
    totals = []
    for score in (1.0, 1.0, 1.0, 1.0, 0.5, 1.0):
        (south, north), = pool.pair()
        pool.finish(south, north, score if south == "a" else 1.0 - score)
        totals.append(pool.entrants["a"].points)
    assert totals == [2, 4, 8, 12, 14, 16]
    assert pool.entrants["b"].points == 1


def test_without_the_bonus_a_win_is_always_two() -> None:
    """Streak bonus off: three wins are six points."""
    pool = ArenaPool(streak_bonus=False)
    for name in "ab":
        pool.join(name)
    for _ in range(3):
        (south, north), = pool.pair()
        pool.finish(south, north, 1.0 if south == "a" else 0.0)
    assert pool.entrants["a"].points == 6


def test_a_paused_entrant_finishes_the_game_and_waits_no_more() -> None:
    """Leaving during a game keeps the points of that game but the entrant is not paired again until back."""
    pool = ArenaPool()
    for name in "abc":
        pool.join(name)
    pool.pair()
    pool.leave("a")
    pool.finish("a", "b", 1.0)
    assert pool.entrants["a"].points == 2 and "a" not in pool.waiting()
    assert len(pool.pair()) == 1
    pool.join("a")
    assert pool.waiting() == ["a"]


def test_an_end_of_a_game_not_under_way_is_refused() -> None:
    """Finishing a game the pool did not start is an `ArenaError`."""
    pool = ArenaPool()
    pool.join("a")
    pool.join("b")
    with pytest.raises(ArenaError):
        pool.finish("a", "b", 1.0)


def test_replay_rebuilds_points_streaks_and_who_plays() -> None:
    """A pool rebuilt from the stored games has the same points, streaks and live games."""
    pool = ArenaPool()
    for name in "abcd":
        pool.join(name)
    games: list[Pairing] = []
    for wave in range(1, 4):
        for table, (s, n) in enumerate(pool.pair(), start=1):
            games.append(Pairing(wave, table, s, n, f"m{wave}{table}"))
        for i, g in enumerate(games):
            if g.score is None and (g.round < 3 or g.table == 1):
                pool.finish(g.south, g.north or "", 1.0)
                games[i] = g.ended(1.0)
    again = ArenaPool()
    again.replay(list("abcd"), games)
    assert {n: (e.points, e.streak, e.playing) for n, e in again.entrants.items()} == \
           {n: (e.points, e.streak, e.playing) for n, e in pool.entrants.items()}


@settings(max_examples=80, deadline=None)
@example([("join", 0, 1.0), ("join", 2, 1.0), ("pair", 0, 1.0), ("finish", 0, 1.0), ("pair", 0, 1.0),
          ("join", 1, 1.0), ("finish", 0, 1.0), ("pair", 0, 1.0), ("finish", 0, 1.0), ("pair", 0, 1.0)])
@given(st.lists(st.tuples(st.sampled_from(["join", "leave", "finish", "pair"]), st.integers(0, 7),
                          st.sampled_from([1.0, 0.5, 0.0])), max_size=80))
def test_any_sequence_pairs_only_waiting_entrants_once_at_a_time(steps: list[tuple[str, int, float]]) -> None:
    """Whatever joins, pauses and game ends come: a game is only made of two waiting entrants, nobody is in
    two games at once, and nobody meets the opponent of their last game while a third entrant is active."""
    pool = ArenaPool()
    live: list[tuple[str, str]] = []
    last: dict[str, str] = {}
    for action, who, score in steps:
        name = f"e{who}"
        if action == "join":
            pool.join(name)
        elif action == "leave":
            pool.leave(name)
        elif action == "finish" and live:
            south, north = live.pop(who % len(live))
            pool.finish(south, north, score)
        elif action == "pair":
            waiting = set(pool.waiting())
            active = sum(e.active for e in pool.entrants.values())
            for south, north in pool.pair():
                assert south in waiting and north in waiting and south != north
                waiting -= {south, north}
                if active > 2:
                    assert last.get(south) != north and last.get(north) != south
                last[south], last[north] = north, south
                live.append((south, north))
        busy = [p for game in live for p in game]
        assert len(busy) == len(set(busy))
        assert pool.playing() == set(busy)

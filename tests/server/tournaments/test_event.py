"""The event state machine: entry rules, start, rounds, results, the end, and restore after a restart."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import EventFullError, EventStartedError, NotEligibleError
from protocol.event_settings import EventSettings
from server.tournaments.records import Pairing
from server.tournaments.tournament import Entrant, EntrantKind, Tournament, TournamentStatus
from server.tournaments.view import standings_rows

PERSON, BOT, ENGINE = EntrantKind.PERSON, EntrantKind.BOT, EntrantKind.ENGINE


def _event(**fields: object) -> Tournament:
    """An event `ev` with these settings, created by alice at time 0."""
    return Tournament("ev", EventSettings.checked(name="test", **fields), "alice", 0.0)


def _status(event: Tournament) -> TournamentStatus:
    """The event's status read afresh (a result changes it; a narrowed attribute would not)."""
    return event.status


def _restored(event: Tournament) -> Tournament:
    """The same event rebuilt from what storage would hold."""
    return Tournament.restore(event.event_id, event.settings, event.creator, event.created_at, event.status,
                         event.started_at, list(event.entrants.values()), list(event.pairings))


def test_swiss_of_seven_plays_the_worked_rounds_and_finishes() -> None:
    """The seven-entrant Swiss of tests/server/tournaments/test_swiss.py played through the machine: the same pairings,
    a bye each round, match ids per round and table, finished after round 3."""
    ev = _event(kind="swiss", rounds=3, min_entrants=7, max_entrants=8)
    for i in range(1, 8):
        ev.join(f"p{i}", PERSON)
    assert ev.due(1.0)
    first = ev.start(1.0)
    assert [str(p) for p in first] == ["1.1 p1-p4 * ev-r1-t1", "1.2 p5-p2 * ev-r1-t2", "1.3 p3-p6 * ev-r1-t3",
                                        "1.4 p7 bye"]
    results = {"ev-r1-t1": 1.0, "ev-r1-t2": 0.0, "ev-r1-t3": 1.0}
    nxt: list[Pairing] = []
    for match_id, score in results.items():
        nxt = ev.result(match_id, score, 2.0)
    assert {(p.south, p.north) for p in nxt} == {("p7", "p1"), ("p2", "p3"), ("p4", "p5"), ("p6", None)}
    by_players = {(p.south, p.north): p.match_id for p in nxt}
    for pair, score in (((("p7", "p1")), 0.0), (("p2", "p3"), 0.5), (("p4", "p5"), 1.0)):
        nxt = ev.result(by_players[pair] or "", score, 3.0)
    assert {(p.south, p.north) for p in nxt} == {("p1", "p2"), ("p3", "p4"), ("p6", "p7"), ("p5", None)}
    assert _restored(ev).live() == ev.live()
    for p in [p for p in nxt if not p.bye]:
        assert ev.status is TournamentStatus.RUNNING
        assert ev.result(p.match_id or "", 1.0, 4.0) == []
    assert ev.status is TournamentStatus.FINISHED
    assert sum(p.bye for p in ev.pairings) == 3


def test_a_result_told_twice_changes_nothing() -> None:
    """The second report of a game's end (a restart replaying it) pairs nobody and scores nothing."""
    ev = _event(kind="swiss", rounds=2, min_entrants=4)
    for name in "abcd":
        ev.join(name, PERSON)
    games = ev.start(0.0)
    ev.result(games[0].match_id or "", 1.0, 1.0)
    assert ev.result(games[0].match_id or "", 0.0, 1.0) == []
    assert ev.pairings[0].score == 1.0


def test_round_robin_of_three_plays_six_rounds_with_a_bye_each() -> None:
    """Three entrants, two cycles: six rounds of one game and one bye; each pair meets once on each side."""
    ev = _event(kind="round_robin", min_entrants=3)
    for name, kind in (("e1", ENGINE), ("e2", ENGINE), ("e3", BOT)):
        ev.join(name, kind)
    live = ev.start(0.0)
    rounds = 0
    while ev.status is TournamentStatus.RUNNING:
        rounds += 1
        game = next(p for p in live if not p.bye)
        ev = _restored(ev)
        live = ev.result(game.match_id or "", 1.0, float(rounds))
    assert rounds == 6 and ev.total_rounds == 6
    games = sorted((p.south, p.north) for p in ev.pairings if not p.bye)
    assert games == sorted([("e2", "e3"), ("e1", "e2"), ("e3", "e1"), ("e3", "e2"), ("e2", "e1"), ("e1", "e3")])
    assert [r.score for r in ev.standings()] == [2.0, 2.0, 2.0]  # a free round scores nothing


def test_arena_pairs_finishers_until_time_is_up_then_ends_with_the_last_game() -> None:
    """An arena of four: two games at the start, new games as games end, none after the end; it finishes
    when the last game under way ends."""
    ev = _event(kind="arena", duration_s=60)
    for name in "abcd":
        ev.join(name, BOT)
    first = ev.start(100.0)
    assert [(p.south, p.north) for p in first] == [("a", "b"), ("c", "d")]
    assert ev.result("ev-r1-t1", 1.0, 110.0) == []
    again = ev.result("ev-r1-t2", 0.0, 120.0)
    assert {frozenset(p.players()) for p in again} == {frozenset("ad"), frozenset("bc")}
    assert _restored(ev).pool is not None
    assert ev.result(again[0].match_id or "", 1.0, 161.0) == []
    assert ev.join("e", BOT) == [] and ev.status is TournamentStatus.RUNNING  # past the end: entered, not paired
    ev.result(again[1].match_id or "", 0.5, 162.0)
    assert _status(ev) is TournamentStatus.FINISHED
    assert ev.pool is not None and ev.pool.ranking()[0].name in "ad"


def test_arena_entrant_may_join_late_and_pause() -> None:
    """After the start a newcomer enters an arena; a paused entrant is not paired until it joins again."""
    ev = _event(kind="arena", duration_s=600)
    for name in "abc":
        ev.join(name, PERSON)
    assert [p.players() for p in ev.start(0.0)] == [("a", "b")]
    ev.leave("c")
    assert ev.join("d", PERSON) == []
    assert [set(p.players()) for p in ev.join("c", PERSON)] == [{"c", "d"}]
    assert {frozenset(p.players()) for p in ev.live()} == {frozenset("ab"), frozenset("cd")}



def test_an_arena_lists_its_entrants_before_the_start() -> None:
    """An open arena's standings hold everyone entered, at 0 points in joining order, as a Swiss's do."""
    ev = _event(kind="arena", duration_s=600, min_entrants=3)
    for name in ("carol", "ann", "bob"):
        ev.join(name, PERSON)
    ev.leave("bob")
    rows = standings_rows(ev)
    assert [(r.rank, r.name, r.points) for r in rows] == [(1, "carol", 0), (2, "ann", 0)]
    ev.join("bob", PERSON)
    ev.start(0.0)
    assert sorted(r.name for r in standings_rows(ev)) == ["ann", "bob", "carol"]


@pytest.mark.parametrize(("fields", "name", "kind", "error"), [
    ({"entry": "people"}, "bot:random", BOT, NotEligibleError),
    ({"entry": "engines"}, "alice", PERSON, NotEligibleError),
    ({"entry": "listed", "names": ("bob",)}, "alice", PERSON, NotEligibleError),
    ({"sanity_games": 3}, "engine:x", ENGINE, NotEligibleError),
    ({"max_entrants": 2}, "carol", PERSON, EventFullError),
])
def test_entry_rules_refuse_with_typed_errors(fields: dict[str, object], name: str, kind: EntrantKind,
                                              error: type[Exception]) -> None:
    """People only, engines only, a list of names, games against random, a full event: each its own error."""
    ev = _event(kind="swiss", rounds=1, **fields)
    if error is EventFullError:
        ev.join("a", PERSON)
        ev.join("b", PERSON)
    with pytest.raises(error):
        ev.join(name, kind)


def test_engine_with_enough_wins_against_random_enters() -> None:
    """An engine with the asked number of wins against random is let in."""
    ev = _event(kind="swiss", rounds=1, sanity_games=3)
    ev.join("engine:x", ENGINE, wins_against_random=3)
    assert list(ev.entrants) == ["engine:x"]


def test_a_started_swiss_takes_no_one_and_a_leaver_is_not_paired_again() -> None:
    """Entering a started Swiss is `EventStartedError`; an entrant who left gets no pairing in later rounds."""
    ev = _event(kind="swiss", rounds=3, min_entrants=4)
    for name in "abcd":
        ev.join(name, PERSON)
    games = ev.start(0.0)
    with pytest.raises(EventStartedError):
        ev.join("e", PERSON)
    ev.leave("d")
    nxt: list[Pairing] = []
    for p in games:
        nxt = ev.result(p.match_id or "", 1.0, 1.0)
    assert nxt and all("d" not in p.players() for p in nxt)


def test_too_few_entrants_at_the_start_time_cancel_the_event() -> None:
    """At its start time an event with fewer than `min_entrants` is cancelled and pairs nobody."""
    ev = _event(kind="swiss", rounds=2, start_at=50.0, min_entrants=4)
    ev.join("a", PERSON)
    assert not ev.due(49.0) and ev.due(50.0)
    assert ev.start(50.0) == [] and ev.status is TournamentStatus.CANCELLED


def test_leaving_before_the_start_removes_the_entry() -> None:
    """Before the start, leaving takes the entrant off the list."""
    ev = _event(kind="swiss", rounds=2)
    ev.join("a", PERSON)
    ev.leave("a")
    assert ev.entrants == {}
    assert Entrant("a", PERSON).active


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(1, 4), st.lists(st.sampled_from([1.0, 0.5, 0.0]), min_size=60, max_size=60),
       st.sets(st.integers(0, 8), max_size=3))
def test_any_swiss_event_plays_its_rounds_and_never_pairs_a_leaver(n: int, rounds: int, results: list[float],
                                                                    leavers: set[int]) -> None:
    """Whatever the results and whoever leaves after round 1: each round is paired only when the last ended,
    pairs only active entrants, each at most once, and the event finishes after at most its rounds (a restore
    at any point gives the same machine)."""
    ev = _event(kind="swiss", rounds=min(rounds, n - 1 + n % 2), min_entrants=2, max_entrants=16)
    names = [f"e{i}" for i in range(n)]
    for name in names:
        ev.join(name, PERSON)
    live = ev.start(0.0)
    outcome = iter(results)
    while ev.status is TournamentStatus.RUNNING:
        rnd = live[0].round
        assert all(p.round == rnd for p in live) and rnd <= (ev.total_rounds or 0)
        seated = [x for p in live for x in p.players()]
        assert len(seated) == len(set(seated))
        assert all(ev.entrants[x].active for x in seated)
        if rnd == 1:
            for i in leavers:
                if i < n:
                    ev.leave(names[i])
        ev = _restored(ev)
        nxt: list[Pairing] = []
        for p in [p for p in live if not p.bye]:
            nxt = ev.result(p.match_id or "", next(outcome, 1.0), float(rnd))
        if not nxt:
            break
        live = nxt
    assert ev.status is TournamentStatus.FINISHED
    assert max(p.round for p in ev.pairings) <= (ev.total_rounds or 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["join", "leave", "end", "tick"]), st.integers(0, 6),
                          st.sampled_from([1.0, 0.5, 0.0])), max_size=60))
def test_any_arena_event_keeps_each_entrant_in_one_game_and_pairs_nobody_after_its_end(
        steps: list[tuple[str, int, float]]) -> None:
    """Joins, pauses, game ends and the clock in any order: nobody is in two games at once, no game starts
    after the arena's end, and once the end has come and the last game ended the arena is finished."""
    ev = _event(kind="arena", duration_s=100)
    for name in ("a0", "a1"):
        ev.join(name, BOT)
    ev.start(0.0)
    now = 0.0
    for action, who, score in steps:
        if ev.status is TournamentStatus.FINISHED:  # the end came and the last game ended: it takes no one now
            with pytest.raises(EventStartedError):
                ev.join(f"a{who}", BOT)
            break
        name = f"a{who}"
        before = len(ev.pairings)
        if action == "join":
            if name not in ev.entrants or not ev.entrants[name].active:
                ev.join(name, BOT)
        elif action == "leave":
            ev.leave(name)
        elif action == "end":
            if ev.live():
                game = ev.live()[who % len(ev.live())]
                ev.result(game.match_id or "", score, now)
        else:
            now += 30.0
            ev.tick(now)
        if now >= 100.0:
            assert len(ev.pairings) == before
        busy = [x for p in ev.live() for x in p.players()]
        assert len(busy) == len(set(busy))
    now = max(now, 100.0)
    for game in ev.live():
        ev.result(game.match_id or "", 1.0, now)
    ev.tick(now)
    assert ev.status is TournamentStatus.FINISHED


def test_a_start_seeds_the_entrants_by_rating() -> None:
    """Entrants are seeded by rating at the start (ties and the unrated keep joining order): a Swiss of four
    with ratings d 1900, b 1700, a and c 1500 pairs d-a and c-b (S1 d b, S2 a c), and a restore keeps it."""
    ev = _event(kind="swiss", rounds=2, min_entrants=4)
    for name in "abcd":
        ev.join(name, PERSON)
    first = ev.start(0.0, {"a": 1500.0, "b": 1700.0, "c": 1500.0, "d": 1900.0})
    assert list(ev.entrants) == ["d", "b", "a", "c"]
    assert [(p.south, p.north) for p in first] == [("d", "a"), ("c", "b")]
    assert list(_restored(ev).entrants) == ["d", "b", "a", "c"]


@pytest.mark.parametrize(("asked", "said"), [(1, "1 win against random"), (2, "2 wins against random")])
def test_eligibility_refusal_counts_wins_in_words(asked: int, said: str) -> None:
    """The refusal of an engine short of wins against random says "1 win" or "N wins"."""
    ev = _event(kind="swiss", rounds=1, sanity_games=asked)
    with pytest.raises(NotEligibleError, match=f"asks an engine for {said} first"):
        ev.join("engine:x", ENGINE)

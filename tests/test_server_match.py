"""The sans-I/O match: seats, turns, plies, pie swap, transfer, clocks, endings — no sockets."""

from __future__ import annotations

import random

import pytest

from protocol import GameOverError, IllegalMoveError, OutOfTurnError, Sow, Swap, SwapNotOfferedError, Transfer
from protocol.variant import TimeControl, Variant
from server.clocks import Clocks
from server.errors import (
    AlreadySeatedError,
    ClaimRefusedError,
    FuturePlyError,
    MatchFullError,
    NotSeatedError,
    NotStartedError,
    StalePlyError,
    TimeOutError,
)
from server.match import ActionChange, Duplicate, EndChange, Match, Seat

ALICE, BOB = Seat("pa", "alice"), Seat("pb", "bob")


class FakeTime:
    """A time source the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def live(variant: str = "kalah(6,4)", now: FakeTime | None = None, grace_s: float = 60.0) -> Match:
    """A live match: alice in seat 0 (South), bob in seat 1 (North)."""
    m = Match("m1", Variant.parse(variant), now or FakeTime(), grace_s=grace_s)
    m.commit(m.prepare_join(ALICE))
    m.commit(m.prepare_join(BOB))
    return m


def test_join_fills_seats_and_goes_live() -> None:
    """Two joins make the match live with numbered joined events."""
    m = Match("m1", Variant(), FakeTime())
    assert m.commit(m.prepare_join(ALICE))[0].seq == 1
    assert m.status == "open"
    with pytest.raises(AlreadySeatedError):
        m.prepare_join(ALICE)
    events = m.commit(m.prepare_join(BOB))
    assert (m.status, events[0].kind, events[0].side, events[0].player) == ("live", "joined", "north", "bob")
    with pytest.raises(MatchFullError):
        m.prepare_join(Seat("pc", "carol"))


def test_actions_before_start_and_by_strangers_are_refused() -> None:
    """No action before the second player, nor from a seat nobody holds."""
    m = Match("m1", Variant(), FakeTime())
    m.commit(m.prepare_join(ALICE))
    with pytest.raises(NotStartedError):
        m.play(0, Sow(3), 0)
    with pytest.raises(NotSeatedError):
        m.play(1, Sow(10), 0)


def test_play_whole_game_with_events_in_order() -> None:
    """A random game to the end: one action event per ply, then game_over with the score."""
    m = live()
    rng = random.Random(4)
    while m.status == "live":
        seat = m.seat_to_move()
        assert seat is not None
        m.play(seat, rng.choice(m.position.legal_actions()), m.ply)
    kinds = [e.kind for e in m.events]
    assert kinds[:2] == ["joined", "joined"] and kinds[-1] == "game_over"
    assert kinds.count("action") == m.ply
    assert [e.seq for e in m.events] == list(range(1, len(m.events) + 1))
    over = m.events[-1]
    assert over.result == m.position.result and over.reason == m.position.end
    if over.result:
        assert over.winner == ("south" if over.result > 0 else "north")
    with pytest.raises(GameOverError):
        m.play(0, Sow(1), m.ply)


def test_turns_plies_and_duplicates() -> None:
    """Out of turn, illegal bins, future and stale plies are refused; a resent action is a duplicate."""
    m = live()
    with pytest.raises(OutOfTurnError):
        m.play(1, Sow(10), 0)
    with pytest.raises(IllegalMoveError):
        m.play(0, Sow(10), 0)
    with pytest.raises(FuturePlyError):
        m.play(0, Sow(3), 1)
    events = m.play(0, Sow(3), 0)
    assert events[0].path == [4, 5, 6, 7] and events[0].extra_turn
    again = m.prepare_action(0, Sow(3), 0)
    assert again == Duplicate(0, events[0].seq)
    assert m.play(0, Sow(3), 0) == [] and m.ply == 1
    with pytest.raises(StalePlyError):
        m.prepare_action(0, Sow(2), 0)
    with pytest.raises(StalePlyError):
        m.prepare_action(1, Sow(3), 0)


def test_prepare_changes_nothing_until_commit() -> None:
    """A prepared action leaves the match as it was until it is committed."""
    m = live()
    change = m.prepare_action(0, Sow(1), 0)
    assert isinstance(change, ActionChange)
    assert m.ply == 0 and m.seq == 2
    m.commit(change)
    assert m.ply == 1 and m.seq == 3


def test_pie_swap_exchanges_seats() -> None:
    """After North swaps, bob plays South and alice (now North) moves next."""
    m = live("kalah(6,4,pie=on)")
    m.play(0, Sow(1), 0)
    with pytest.raises(OutOfTurnError):
        m.play(0, Swap(), 1)
    events = m.play(1, Swap(), 1)
    assert events[0].action == "swap" and events[0].side == "north"
    assert m.side_of(1).name == "SOUTH" and m.side_of(0).name == "NORTH"
    assert m.seat_to_move() == 0
    snap = m.snapshot(0)
    assert (snap.south, snap.north, snap.you) == ("bob", "alice", "north")
    with pytest.raises(OutOfTurnError):
        m.play(1, Sow(1), 2)
    with pytest.raises(SwapNotOfferedError):
        m.play(0, Swap(), 2)
    m.play(0, Sow(9), 2)
    assert m.prepare_action(1, Swap(), 1) == Duplicate(1, events[0].seq)


def test_opening_transfer_by_north_first() -> None:
    """With the opening transfer, North (seat 1) acts first, then South sows."""
    m = live("kalah(6,4,transfer=on)")
    assert m.seat_to_move() == 1
    m.play(1, Transfer(2, 9), 0)
    assert m.position.pits[1] == 3 and m.position.pits[8] == 5
    assert m.seat_to_move() == 0


def test_base_increment_clock_and_flag() -> None:
    """Elapsed time is charged, the increment added; running out ends the game on time."""
    now = FakeTime()
    m = live("kalah(6,4,clock=10+2)", now)
    now.t += 3
    m.play(0, Sow(1), 0)
    assert m.clocks.left(0, now.t) == 9000
    now.t += 11
    assert m.prepare_flag() == EndChange("time", 0)
    with pytest.raises(TimeOutError):
        m.play(1, Sow(9), 1)
    events = m.commit(EndChange("time", 0))
    assert events[0].reason == "time" and events[0].winner == "south" and events[0].player == "alice"
    assert events[0].clocks is not None and events[0].clocks.north_ms == 0


def test_per_move_clock_resets_each_action() -> None:
    """A per-move limit is given afresh for every action."""
    now = FakeTime()
    m = live("kalah(6,4,clock=5/move)", now)
    now.t += 4
    m.play(0, Sow(1), 0)
    assert m.clocks.left(1, now.t) == 5000
    assert m.deadline() == pytest.approx(now.t + 5)
    now.t += 5.5
    assert m.prepare_flag() == EndChange("time", 0)


def test_clocks_pure_values() -> None:
    """The clock pair charges only the running seat and never goes below zero."""
    c = Clocks(TimeControl(base_ms=1000))
    c.start(0, 0.0)
    assert c.left(0, 0.4) == 600 and c.left(1, 0.4) == 1000
    assert c.left(0, 5.0) == 0 and c.expired(5.0) == 0
    assert Clocks(None).expired(1e9) is None


def test_resign_and_claim() -> None:
    """Resigning hands the win over; a claim needs the opponent away past the grace period."""
    now = FakeTime()
    m = live(now=now, grace_s=10)
    assert m.prepare_resign(0) == EndChange("resign", 1)
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0)
    m.set_connected(1, False)
    now.t += 5
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0)
    now.t += 6
    assert m.prepare_claim(0) == EndChange("abandonment", 0)
    m.set_connected(1, True)
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0)


def test_events_since_and_snapshot() -> None:
    """Events after a sequence number, or None beyond the log; a snapshot names the seq."""
    m = live()
    m.play(0, Sow(1), 0)
    assert [e.seq for e in m.events_since(1) or []] == [2, 3]
    assert m.events_since(3) == []
    assert m.events_since(4) is None
    snap = m.snapshot(None, spectators=2)
    assert snap.seq == 3 and snap.record == ["1"] and snap.spectators == 2 and snap.you is None


def test_repetition_ends_game() -> None:
    """A clockwise game that repeats a position three times ends by repetition."""
    m = live("kalah(2,1,clockwise=on,capture=none)")
    rng = random.Random(1)
    while m.status == "live" and m.ply < 500:
        seat = m.seat_to_move()
        assert seat is not None
        m.play(seat, rng.choice(m.position.legal_actions()), m.ply)
    assert m.status == "finished"


def test_threefold_repetition_ends_the_match() -> None:
    """With clockwise sowing the third occurrence of a position ends the match by repetition."""
    m = live("kalah(2,1,clockwise=on)")
    events = []
    for ply, bin_number in enumerate([2, 4, 1, 5, 2, 4, 1, 5, 2, 4]):
        seat = m.seat_to_move()
        assert seat is not None
        events = m.play(seat, Sow(bin_number), ply)
    assert m.status == "finished" and m.end is not None and m.end.reason == "repetition"
    assert events[-1].kind == "game_over" and events[-1].reason == "repetition"

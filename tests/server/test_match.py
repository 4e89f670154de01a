"""The sans-I/O match: seats, turns, plies, pie swap, transfer, clocks, endings — no sockets."""

from __future__ import annotations

import random

import pytest

from protocol import (
    EndReason,
    GameOverError,
    IllegalMoveError,
    OutOfTurnError,
    Sow,
    Swap,
    SwapNotOfferedError,
    Transfer,
)
from protocol.events import ActionEvent, Captured, CatchUp, GameOverEvent, JoinedEvent
from protocol.messages import Ack, Snapshot, encode
from protocol.variant import TimeControl, Variant
from server.core.clocks import Clocks
from server.core.errors import (
    AlreadySeatedError,
    ClaimRefusedError,
    FuturePlyError,
    MatchFullError,
    NotSeatedError,
    NotStartedError,
    StalePlyError,
    TimeOutError,
)
from server.core.match import CATCH_UP_BYTES, ActionChange, Duplicate, EndChange, Match, Seat

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
    joined = m.commit(m.prepare_join(BOB))[0]
    assert isinstance(joined, JoinedEvent)
    assert (m.status, joined.side, joined.player, joined.clocks) == ("live", "north", "bob", None)
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
    assert isinstance(over, GameOverEvent)
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
    sown = m.play(0, Sow(3), 0)[0]
    assert isinstance(sown, ActionEvent) and sown.path == [4, 5, 6, 7] and sown.extra_turn
    again = m.prepare_action(0, Sow(3), 0)
    assert again == Duplicate(0, sown.seq)
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
    swap = m.play(1, Swap(), 1)[0]
    assert isinstance(swap, ActionEvent) and swap.action == "swap" and swap.side == "north"
    assert m.side_of(1).name == "SOUTH" and m.side_of(0).name == "NORTH"
    assert m.seat_to_move() == 0
    snap = m.snapshot(0)
    assert (snap.south, snap.north, snap.you) == ("bob", "alice", "north")
    with pytest.raises(OutOfTurnError):
        m.play(1, Sow(1), 2)
    with pytest.raises(SwapNotOfferedError):
        m.play(0, Swap(), 2)
    m.play(0, Sow(9), 2)
    assert m.prepare_action(1, Swap(), 1) == Duplicate(1, swap.seq)


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
    assert m.prepare_flag() == EndChange(EndReason.TIME, 0)
    with pytest.raises(TimeOutError):
        m.play(1, Sow(9), 1)
    over = m.commit(EndChange(EndReason.TIME, 0))[0]
    assert isinstance(over, GameOverEvent)
    assert over.reason is EndReason.TIME and over.winner == "south" and over.player == "alice"
    assert over.clocks is not None and over.clocks.north_ms == 0


def test_per_move_clock_resets_each_action() -> None:
    """A per-move limit is given afresh for every action."""
    now = FakeTime()
    m = live("kalah(6,4,clock=5/move)", now)
    now.t += 4
    m.play(0, Sow(1), 0)
    assert m.clocks.left(1, now.t) == 5000
    assert m.deadline() == pytest.approx(now.t + 5)
    now.t += 5.5
    assert m.prepare_flag() == EndChange(EndReason.TIME, 0)


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
    assert m.prepare_resign(0) == EndChange(EndReason.RESIGN, 1)
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0, None)
    away = now.t
    now.t += 5
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0, away)
    now.t += 6
    assert m.prepare_claim(0, away) == EndChange(EndReason.ABANDONMENT, 0)
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0, None)


def test_an_abort_unrates_the_match_only_once_committed() -> None:
    """The operator's abort is prepared like any end (no winner, refused once over) and leaves the match rated until
    it is committed; a rated match's abort moves no rating."""
    m = live()
    abort = m.prepare_abort()
    assert abort == EndChange(EndReason.ABORTED, None)
    assert m.rated and m.status == "live" and not m.rates(abort)
    assert not m.rates(m.prepare_resign(0))  # a resignation before the first move is unrated too
    m.play(0, Sow(1), 0)
    assert m.rates(m.prepare_resign(0))
    m.commit(abort)
    assert (m.rated, m.status) == (False, "finished")
    with pytest.raises(GameOverError):
        m.prepare_abort()


def test_grace_counts_from_the_match_going_live() -> None:
    """An opponent away since before the match went live has the whole grace period from then."""
    now = FakeTime()
    now.t = 100.0
    m = live(now=now, grace_s=10)
    now.t += 9
    with pytest.raises(ClaimRefusedError, match=r"claim in 1\.0 s"):
        m.prepare_claim(0, 0.0)
    now.t += 1
    assert m.prepare_claim(0, 0.0).reason == EndReason.ABANDONMENT


def test_untimed_no_move_limit() -> None:
    """In an untimed match, a connected opponent who does not move for the no-move limit can be claimed
    against; the limit restarts with each action and never applies to the side to move itself."""
    now = FakeTime()
    m = Match("m1", Variant(), now, idle_s=30)
    m.commit(m.prepare_join(Seat("a", "alice")))
    m.commit(m.prepare_join(Seat("b", "bob")))
    m.play(0, Sow(3), 0)  # South's extra turn: South is to move again
    now.t += 31
    with pytest.raises(ClaimRefusedError):
        m.prepare_claim(0, None)  # it is South's own turn
    m.play(0, Sow(1), 1)
    now.t += 29
    with pytest.raises(ClaimRefusedError, match="may still move"):
        m.prepare_claim(0, None)
    now.t += 1
    assert m.prepare_claim(0, None) == EndChange(EndReason.ABANDONMENT, 0)
    timed = Match("m2", Variant.parse("kalah(6,4,clock=60+0)"), now, idle_s=30)
    timed.commit(timed.prepare_join(Seat("a", "alice")))
    timed.commit(timed.prepare_join(Seat("b", "bob")))
    now.t += 100
    with pytest.raises(ClaimRefusedError):
        timed.prepare_claim(1, None)  # a timed game has its clock instead


def test_snapshot_names_the_seq() -> None:
    """A snapshot is the whole state as of the last event, whose number it names."""
    m = live()
    m.play(0, Sow(1), 0)
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
    assert m.status == "finished" and m.end is not None and m.end.reason is EndReason.REPETITION
    assert isinstance(events[-1], GameOverEvent) and events[-1].reason is EndReason.REPETITION


def test_join_that_starts_a_timed_match_carries_the_clocks() -> None:
    """The second join of a timed match starts the clocks, and its event says so."""
    m = Match("m1", Variant.parse("kalah(6,4,clock=10+2)"), FakeTime())
    first = m.commit(m.prepare_join(ALICE))[0]
    second = m.commit(m.prepare_join(BOB))[0]
    assert isinstance(first, JoinedEvent) and first.clocks is None
    assert isinstance(second, JoinedEvent) and second.clocks is not None
    assert (second.clocks.south_ms, second.clocks.north_ms, second.clocks.running) == (10_000, 10_000, "south")


def test_capture_is_reported_by_bin_numbers() -> None:
    """An action that captures names the captured house by its bin number, and the seeds it stored."""
    m = live()
    for ply, (seat, bin_number) in enumerate([(0, 1), (1, 11), (0, 2)]):
        m.play(seat, Sow(bin_number), ply)
    store, opposite = m.position.stores[0], m.position.pits[11]
    event = m.play(0, Sow(1), 3)[0]
    assert isinstance(event, ActionEvent) and event.path == [2]
    assert event.capture == Captured(bin=12, seeds=opposite + 1)
    assert m.position.stores[0] == store + opposite + 1 and m.position.pits[11] == 0


def test_game_over_names_the_reason_and_the_winner_of_the_margin() -> None:
    """A game decided on the board ends with the rules' reason and the side the margin favours."""
    m = live("kalah(1,2)")
    over = m.play(0, Sow(1), 0)[-1]  # one seed to the store, one to North's house: South's row is empty
    assert isinstance(over, GameOverEvent) and over.reason is EndReason.EMPTY
    assert (over.result, over.winner, over.player) == (-2, "north", "bob")
    assert m.end == EndChange(EndReason.EMPTY, 1, -2)


def test_catch_up_answers_every_watch_or_sync() -> None:
    """The events after `since` (none: an empty catch-up naming the seq), else a snapshot."""
    m = live()
    m.play(0, Sow(1), 0)
    caught = m.catch_up(1)
    assert isinstance(caught, CatchUp) and caught.seq == 3 and [e.seq for e in caught.events] == [2, 3]
    assert m.catch_up(3) == CatchUp(match_id="m1", seq=3, events=[])
    for since in (None, 4):
        snap = m.catch_up(since, you=1, spectators=2)
        assert isinstance(snap, Snapshot) and snap.seq == 3 and snap.you == "north" and snap.spectators == 2


def test_long_catch_up_becomes_a_snapshot() -> None:
    """Missed events longer than the catch-up bound are answered with the (shorter) snapshot."""
    m = live("kalah(12,24)")
    rng = random.Random(2)
    while m.status == "live" and sum(len(e.model_dump_json()) for e in m.events) <= CATCH_UP_BYTES:
        seat = m.seat_to_move()
        assert seat is not None
        m.play(seat, rng.choice(m.position.legal_actions()), m.ply)
    assert isinstance(m.catch_up(0), Snapshot)
    assert isinstance(m.catch_up(m.seq - 5), CatchUp)


def test_catch_up_text_is_the_encoded_catch_up() -> None:
    """The catch-up joined from the logged texts is exactly the encoded `catch_up` reply, for every `since`."""
    m = live()
    m.play(0, Sow(3), 0)
    m.play(0, Sow(1), 1)
    for since in (None, 0, 1, m.seq, m.seq + 1):
        assert m.catch_up_text(since, 0, 2) == encode(m.catch_up(since, 0, 2))


def test_ack_text_is_the_encoded_ack() -> None:
    """The ack written from the match's encoded head is exactly the encoded `Ack`, for any ply and number."""
    m = Match("m_x-9", Variant.parse("kalah(6,4)"), FakeTime())
    for ply, seq in ((0, 1), (7, 12), (311, 400)):
        assert m.ack_text(ply, seq) == encode(Ack(match_id="m_x-9", ply=ply, seq=seq)).encode()


@pytest.mark.parametrize("variant", ["kalah(6,4,clock=60+2)", "kalah(3,2,pie=on)", "kalah(3,3,transfer=on)",
                                     "kalah(4,3,capture=empty,clockwise=on)", "kalah(1,1,relay=on)"])
def test_action_event_text_is_what_its_model_encodes(variant: str) -> None:
    """Each action event, written out directly when logged, is the text its pydantic model encodes, byte for byte
    (captures, extra turns, swaps, transfers, running and stopped clocks): the wire schema's, decoded and read back."""
    rng = random.Random(7)
    for game in range(12):
        now = FakeTime()
        m = Match(f"m_{game}-x", Variant.parse(variant), now)
        m.commit(m.prepare_join(ALICE))
        m.commit(m.prepare_join(BOB))
        while m.status == "live":
            now.t += rng.random()
            seat = m.seat_to_move()
            assert seat is not None
            before = m.seq
            change = m.prepare_action(seat, rng.choice(m.position.legal_actions()), m.ply)
            assert isinstance(change, ActionChange)
            logged = m.commit_logged(change)
            texts = m.logged_texts(logged)
            assert m.seq == before + logged and len(texts) == logged
            event = ActionEvent.model_validate_json(texts[0])
            assert encode(event).encode() == texts[0]
            assert event.seq == before + 1 and event.ply == m.ply - 1 and event.position == m.position.fen()

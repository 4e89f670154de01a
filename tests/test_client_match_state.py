"""The client's match state: snapshots, numbered events, gaps, the pie swap and game over."""

from __future__ import annotations

from client.match_state import EventOutcome, MatchState, result_text
from protocol import Game, Side, Variant
from protocol.messages import Clocks, MatchEvent, Snapshot


def snapshot(record: str = "", variant: str = "kalah(6,4)", you: str | None = "south", seq: int = 2) -> Snapshot:
    """A live snapshot of `record` played in `variant`."""
    game = Game.from_record(Variant.parse(variant), record)
    return Snapshot(match_id="m1", seq=seq, variant=variant, south="ann", north="bob", you=you,  # type: ignore[arg-type]
                    status="live", record=record.split(), position=game.position.fen())


def action(seq: int, token: str, side: str, variant: str = "kalah(6,4)", record: str = "") -> MatchEvent:
    """The action event that plays `token` after `record`."""
    game = Game.from_record(Variant.parse(variant), f"{record} {token}")
    return MatchEvent(match_id="m1", seq=seq, kind="action", ply=game.ply - 1, side=side,  # type: ignore[arg-type]
                      action=token, position=game.position.fen())


def test_snapshot_replays_record_and_last_move() -> None:
    """A snapshot gives every position of its record and the highlight of the last action."""
    st = MatchState.from_snapshot(snapshot("3 6"))
    assert st.ply == 2 and len(st.positions) == 3
    assert st.position.to_move == Side.NORTH
    assert st.last is not None and st.last.token == "6" and st.last.path == (7, 8, 9, 10, 11)


def test_events_in_order_stale_and_gap() -> None:
    """Event seq+1 applies; an old one is ignored; a jump is reported as a gap."""
    st = MatchState.from_snapshot(snapshot("3"))
    assert st.apply_event(action(3, "6", "south", record="3")) is EventOutcome.APPLIED
    assert st.record == ["3", "6"] and st.seq == 3
    assert st.apply_event(action(3, "6", "south", record="3")) is EventOutcome.STALE
    assert st.apply_event(action(9, "9", "north", record="3 6")) is EventOutcome.GAP
    assert st.record == ["3", "6"]


def test_capture_and_extra_turn_are_described() -> None:
    """The last action carries the extra turn, and a capture's bin and seeds."""
    st = MatchState.from_snapshot(snapshot("", seq=0))
    st.apply_event(action(1, "3", "south"))
    assert st.last is not None and st.last.extra_turn and st.my_turn
    record = "1 11 2"
    st = MatchState.from_snapshot(snapshot(record))
    assert st.apply_event(action(3, "1", "south", record=record)) is EventOutcome.APPLIED
    assert st.last is not None and st.last.captured_bin is not None and st.last.captured_seeds > 0


def test_pie_swap_exchanges_sides_and_names() -> None:
    """After a swap the opener sits North: names and the viewer's side change with it."""
    st = MatchState.from_snapshot(snapshot("3 6", variant="kalah(6,4,pie=on)"))
    before = (st.you, st.my_turn)
    st.apply_event(action(3, "swap", "north", variant="kalah(6,4,pie=on)", record="3 6"))
    assert before == (Side.SOUTH, False)
    assert st.you == Side.NORTH and (st.south, st.north) == ("bob", "ann")
    assert st.my_turn and st.viewpoint == Side.NORTH


def test_game_over_event_and_verdict() -> None:
    """A game_over event (resignation) ends the match with winner and reason."""
    st = MatchState.from_snapshot(snapshot("3"))
    st.apply_event(MatchEvent(match_id="m1", seq=3, kind="game_over", result=None, reason="resign",
                              winner="north"))
    assert st.over and not st.my_turn
    assert result_text(st) == "bob (North) wins (resignation)"


def test_running_clock_counts_down() -> None:
    """Only the running side's clock counts down, from when it was received."""
    st = MatchState.from_snapshot(snapshot("3"))
    st.clocks = Clocks(south_ms=60_000, north_ms=50_000, running="south")
    st.clocks_at = 100.0
    assert st.clock_ms(Side.SOUTH, now=101.5) == 58_500
    assert st.clock_ms(Side.NORTH, now=101.5) == 50_000

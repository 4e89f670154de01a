"""The client's match state: snapshots, numbered events, gaps, the pie swap and game over."""

from __future__ import annotations

from client.match_state import EventOutcome, MatchState, describe_last, result_text
from protocol import EndReason, Game, Side, Variant
from protocol.messages import ActionEvent, Captured, Clocks, GameOverEvent, JoinedEvent, Snapshot


def snapshot(record: str = "", variant: str = "kalah(6,4)", you: str | None = "south", seq: int = 2) -> Snapshot:
    """A live snapshot of `record` played in `variant`."""
    game = Game.from_record(Variant.parse(variant), record)
    return Snapshot(match_id="m1", seq=seq, variant=variant, south="ann", north="bob", you=you,  # type: ignore[arg-type]
                    status="live", record=record.split(), position=game.position.fen())


def action(seq: int, token: str, side: str, variant: str = "kalah(6,4)", record: str = "") -> ActionEvent:
    """The action event the server sends when `token` is played after `record`."""
    game = Game.from_record(Variant.parse(variant), f"{record} {token}")
    move = game.events[-1]
    cap = None if move.captured_bin is None or move.capture is None else Captured(bin=move.captured_bin,
                                                                                   seeds=move.capture[1])
    return ActionEvent(match_id="m1", seq=seq, ply=game.ply - 1, side=side,  # type: ignore[arg-type]
                       action=token, path=list(move.path), capture=cap, extra_turn=move.extra_turn,
                       position=game.position.fen())


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
    assert st.last is not None and (st.last.captured_bin, st.last.captured_seeds) == (12, 6)


def test_pie_swap_exchanges_sides_and_names() -> None:
    """After a swap the opener sits North: names and the viewer's side change with it."""
    st = MatchState.from_snapshot(snapshot("3 6", variant="kalah(6,4,pie=on)"))
    before = (st.you, st.my_turn)
    st.apply_event(action(3, "swap", "north", variant="kalah(6,4,pie=on)", record="3 6"))
    assert before == (Side.SOUTH, False)
    assert st.you == Side.NORTH and (st.south, st.north) == ("bob", "ann")
    assert st.my_turn and st.viewpoint == Side.NORTH


def test_the_swap_is_a_turn_of_its_own_and_names_who_took_it() -> None:
    """The swap is told as bob taking over South, not as North's move; the next sowing is a new turn."""
    pie = "kalah(6,4,pie=on)"
    st = MatchState.from_snapshot(snapshot("3 6", variant=pie))
    assert st.last_turn() == ["3", "6"]
    st.apply_event(action(3, "swap", "north", variant=pie, record="3 6"))
    assert st.last is not None and st.last_turn() == ["swap"]
    assert describe_last(st.last, st.last_turn(), seats=(st.south, st.north)) == (
        "Pie swap: bob took over South, with its opening move, and now plays South; ann now plays North.")
    st.apply_event(action(4, "10", "north", variant=pie, record="3 6 swap"))
    assert st.last is not None and st.last_turn() == ["10"]
    assert describe_last(st.last, st.last_turn()) == "North sowed bin 10."


def test_game_over_event_and_verdict() -> None:
    """A game_over event (resignation) ends the match with winner and reason."""
    st = MatchState.from_snapshot(snapshot("3"))
    st.apply_event(GameOverEvent(match_id="m1", seq=3, result=None, reason=EndReason.RESIGN, winner="north",
                                 player="bob", position=st.position.fen()))
    assert st.over and not st.my_turn and st.reason is EndReason.RESIGN
    assert result_text(st) == "bob (North) wins (resignation)"


def test_running_clock_counts_down() -> None:
    """Only the running side's clock counts down, from when it was received."""
    st = MatchState.from_snapshot(snapshot("3"))
    st.clocks = Clocks(south_ms=60_000, north_ms=50_000, running="south")
    st.clocks_at = 100.0
    assert st.clock_ms(Side.SOUTH, now=101.5) == 58_500
    assert st.clock_ms(Side.NORTH, now=101.5) == 50_000


def test_highlight_comes_from_the_event() -> None:
    """The path and capture shown are the server's, in bin numbers, even where a local replay would differ."""
    st = MatchState.from_snapshot(snapshot("3"))
    event = action(3, "6", "south", record="3").model_copy(update={"capture": Captured(bin=8, seeds=3)})
    st.apply_event(event)
    assert st.last is not None and st.last.path == tuple(event.path) and st.last.captured_bin == 8


def test_joined_event_seats_the_player_and_starts_the_clocks() -> None:
    """The second player's joined event makes an open match live with the clocks it carries."""
    snap = snapshot("", seq=1).model_copy(update={"north": None, "status": "open"})
    st = MatchState.from_snapshot(snap)
    clocks = Clocks(south_ms=60_000, north_ms=60_000, running="south")
    assert st.apply_event(JoinedEvent(match_id="m1", seq=2, side="north", player="bob", clocks=clocks)) \
        is EventOutcome.APPLIED
    assert (st.status, st.north, st.clocks) == ("live", "bob", clocks)


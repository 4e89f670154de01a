"""The bridge's bookkeeping of a match: events in order, resync on a gap, and the engine's thinking time."""

from __future__ import annotations

import pytest

from cli.bridge_game import MIN_THINK_S, Game, kgp_variant
from protocol import Position, Variant
from protocol.events import ActionEvent, Clocks, GameOverEvent, JoinedEvent
from protocol.outcome import EndReason
from protocol.replies import Snapshot


def snapshot(variant: str = "kalah(6,4)", you: str = "north", clocks: Clocks | None = None) -> Snapshot:
    """A live match at its start, the bridge seated as `you`."""
    v = Variant.parse(variant)
    return Snapshot(match_id="m1", seq=2, variant=v.text(), south="alice", north="bridge", you=you,  # type: ignore[arg-type]
                    status="live", position=Position.initial(v).fen(), clocks=clocks or Clocks())


def test_events_apply_in_order_and_a_gap_asks_for_a_resync() -> None:
    """An event seen already is skipped, the next one applied, one after a gap refused (None)."""
    game = Game(snapshot(), now=0.0)
    after = Position.initial(game.variant).apply(game.position.legal_actions()[0])
    move = ActionEvent(match_id="m1", seq=3, ply=0, side="south", action="1", position=after.fen())
    assert not game.our_turn
    assert game.advance(JoinedEvent(match_id="m1", seq=2, side="north", player="bridge"), 1.0) is False
    assert game.advance(move.model_copy(update={"seq": 5}), 1.0) is None
    assert game.advance(move, 1.0) is True and game.position == after and game.our_turn == (after.to_move == 1)
    end = GameOverEvent(match_id="m1", seq=4, reason=EndReason.RESIGN, winner="north", player="bridge",
                        position=after.fen())
    assert game.advance(end, 2.0) is True
    assert game.status == "finished" and game.ending is not None and game.ending.text() == "win resign"


def test_thinking_time_stays_inside_the_clock() -> None:
    """Per move: the clock left less the margin; base time: a tenth of it plus the increment, at most the
    move limit; untimed: the move limit."""
    per_move = Game(snapshot("kalah(6,4,clock=2/move)", clocks=Clocks(south_ms=2000, north_ms=2000,
                                                                       running="north")), now=10.0)
    assert per_move.think_s(10.5, move_s=5.0, margin_s=0.5) == pytest.approx(1.0)
    assert per_move.think_s(12.0, move_s=5.0, margin_s=0.5) == MIN_THINK_S
    assert per_move.time_options(1.0, 10.5, 0.5) == [("time:mode", "relative"), ("time:clock", 1)]
    base = Game(snapshot("kalah(6,4,clock=60+1)", clocks=Clocks(south_ms=30_000, north_ms=20_500,
                                                                running="north")), now=0.0)
    assert base.think_s(0.0, move_s=5.0, margin_s=0.5) == pytest.approx(3.0)
    assert base.think_s(0.0, move_s=2.0, margin_s=0.5) == pytest.approx(2.0)
    assert base.think_s(19.9, move_s=5.0, margin_s=0.5) == pytest.approx(0.1)
    assert base.time_options(3.0, 0.0, 0.5) == [("time:mode", "absolute"), ("time:clock", 20),
                                                ("time:opclock", 30)]
    assert Game(snapshot(), now=0.0).think_s(0.0, move_s=3.0, margin_s=0.5) == 3.0


def test_only_sowing_variants_are_for_kgp_engines() -> None:
    """A pie-rule variant is refused with one sentence."""
    assert kgp_variant("kalah(6,4)").houses == 6
    with pytest.raises(ValueError, match="can only sow"):
        kgp_variant("kalah(6,4,pie=on)")

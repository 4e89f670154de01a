"""The client's one stored-game model: from the wire, from a database row, its verdict, and replay."""

from __future__ import annotations

from datetime import UTC, datetime

from client.stored_game import StoredGame, replay
from protocol import EndReason, Game, Variant
from protocol.messages import GameInfo
from server.storage import StoredGame as StoredRow

CREATED = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
FINISHED = datetime(2024, 5, 1, 12, 41, tzinfo=UTC)


def test_the_wire_and_a_database_row_give_the_same_game() -> None:
    """A game read from the database and the same game as the server sends it are one `StoredGame`."""
    row = StoredRow("m7", "kalah(4,3)", "ann", "bob", "finished", "1 6 2", 3, 4, "ann", "empty", CREATED, FINISHED)
    info = GameInfo(match_id="m7", variant="kalah(4,3)", south="ann", north="bob", status="finished",
                    record=["1", "6", "2"], result=4, winner="ann", reason=EndReason.EMPTY,
                    created_at=CREATED.isoformat(), finished_at=FINISHED.isoformat())
    game = StoredGame.from_row(row)
    assert game == StoredGame.from_info(info)
    assert game.variant == Variant.parse("kalah(4,3)") and game.record == ("1", "6", "2") and game.ply == 3
    assert game.created_at == CREATED and game.finished_at == FINISHED


def test_verdict_in_words() -> None:
    """Winner and margin with the reason; a draw; an end without a winner; a game that never finished."""
    v = Variant()
    assert StoredGame("a", v, result=-4, winner="bob", reason="empty").verdict == "bob wins by 4 (a row is empty)"
    assert StoredGame("b", v, result=None, winner="ann", reason="resign").verdict == "ann wins (resignation)"
    assert StoredGame("c", v, result=0, reason="majority").verdict == "Draw (a store holds the majority)"
    assert StoredGame("d", v, reason="abandonment").verdict == "Game over (abandoned)"
    unfinished = StoredGame("e", v, ("3",), status="live")
    assert not unfinished.finished and unfinished.verdict == "unfinished (live)"


def test_replay_goes_as_far_as_the_record_is_legal() -> None:
    """A record replays move by move and stops, without raising, at its first illegal move."""
    variant = Variant.parse("kalah(4,3)")
    game = replay(variant, ["1", "6", "9", "2"])  # South is to move and 9 is a North house
    assert game.actions == Game.from_record(variant, "1 6").actions
    assert replay(variant, []).positions == [Game(variant).position]

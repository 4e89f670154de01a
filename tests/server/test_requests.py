"""The request router's pure parts: the wire form of stored games."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from protocol.outcome import EndReason
from server.front.router import game_info
from server.storage import StoredGame

GAME = StoredGame("m1", "kalah(6,4)", "alice", "bob", "finished", "3 6", 2, None, "bob", "resign",
                  datetime(2026, 11, 21, 12, tzinfo=UTC), datetime(2026, 11, 21, 12, 10, tzinfo=UTC))


def test_stored_game_reason_is_an_end_reason() -> None:
    """A stored game's reason goes on the wire as its `EndReason`."""
    info = game_info(GAME)
    assert info is not None and info.reason is EndReason.RESIGN and info.record == ["3", "6"]


def test_stored_game_with_an_unknown_reason_is_skipped() -> None:
    """A row whose reason is none of the end reasons is left out of listings, not fatal to them."""
    assert game_info(replace(GAME, reason="boredom")) is None
    assert game_info(replace(GAME, reason=None, status="live")) is not None

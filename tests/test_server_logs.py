"""Structured logs: one JSON object per line, with the event name and its fields."""

from __future__ import annotations

import json
import logging

import pytest

from server.logs import LOGGER_NAME, JsonFormatter, event
from tests.conftest import Serve
from tests.wire import Client, FirstLegal


def test_json_lines_carry_event_and_fields() -> None:
    """A logged event formats as JSON with its level, name and fields kept as data."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            """Keep the record."""
            records.append(record)

    logger = logging.getLogger(LOGGER_NAME)
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        event("match_finished", match="m1", result=-2, winner_seat=1)
        event("noise", level=logging.DEBUG)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(records) == 1
    data = json.loads(JsonFormatter().format(records[0]))
    assert data["event"] == "match_finished" and data["level"] == "info"
    assert (data["match"], data["result"], data["winner_seat"]) == ("m1", -2, 1)



async def test_a_failing_bot_turn_is_logged_with_its_traceback(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """A hosted bot's turn that fails (here: started when the bot is not to move) is logged as `bot_failed`, a
    warning with the traceback that shows where it failed."""
    server = await serve(bot_factory=FirstLegal.make)
    alice = await Client.open(server.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south",
                               opponent="first"))["match_id"]
    room = server.arena.rooms[mid]
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        await server.arena.bot_turn(room, 1, "first")
    [record] = [r for r in caplog.records if r.getMessage() == "bot_failed"]
    data = json.loads(JsonFormatter().format(record))
    assert data["level"] == "warning" and data["error"].startswith("OutOfTurnError")
    assert data["exc"].startswith("Traceback") and "prepare_action" in data["exc"]

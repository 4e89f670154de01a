"""Structured logs: one JSON object per line, with the event name and its fields."""

from __future__ import annotations

import json
import logging

from server.logs import LOGGER_NAME, JsonFormatter, event


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

"""Structured logs: one JSON object per line, with an event name and its fields."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER_NAME = "kalah.server"
log = logging.getLogger(LOGGER_NAME)


def event(name: str, level: int = logging.INFO, exc_info: bool = False, **fields: Any) -> None:
    """Log the event `name` with its fields (kept as data, not formatted into the text); `exc_info` adds the
    traceback of the exception being handled (as `exc`)."""
    if log.isEnabledFor(level):
        log.log(level, name, exc_info=exc_info, extra={"fields": fields})


class JsonFormatter(logging.Formatter):
    """Formats a record as `{"ts": ..., "level": ..., "event": ..., **fields}`."""

    def format(self, record: logging.LogRecord) -> str:
        """The JSON line of one record."""
        data: dict[str, Any] = {"ts": round(record.created, 3), "level": record.levelname.lower(),
                                "logger": record.name, "event": record.getMessage()}
        data.update(getattr(record, "fields", {}))
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)


def configure(level: str = "info") -> None:
    """Send the server's logs to standard error as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    logging.Formatter.converter = time.gmtime
    root = logging.getLogger("kalah")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False

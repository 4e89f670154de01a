"""Structured logs: an event name and its fields, written as text lines (the default) or one JSON object a line.

Every record carries `match`, `player` and `node` (None when they do not apply; `node` is the
cluster node's name, set once the server knows it) and the traceback of the exception being
handled when the event was logged with `exc_info`.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import unicodedata
from typing import Any

from server.log_writer import QueuedLogs

LOGGER_NAME = "kalah.server"
log = logging.getLogger(LOGGER_NAME)

FORMATS = ("text", "json")
KEYED = ("match", "player", "node")
"""Fields every JSON line has (null when they do not apply), so a log tool can index them."""


CONTROL_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
"""Unicode categories a log line never carries raw: control characters (C0, DEL, C1: ESC colour codes, OSC titles,
carriage returns), format characters (bidirectional overrides, zero widths) and line and paragraph separators."""


def _is_control(char: str) -> bool:
    """Whether `char` would act on a terminal or an editor rather than show (see `CONTROL_CATEGORIES`)."""
    return unicodedata.category(char) in CONTROL_CATEGORIES


def _escaped(char: str) -> str:
    """A control character as JSON writes it escaped: `\\uNNNN` (a pair of them past U+FFFF)."""
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else json.dumps(char)[1:-1]


def escape(text: str, keep: str = "") -> str:
    """`text` with every control character (but those in `keep`) escaped as JSON escapes it (`\\u001b` for ESC), so
    that what a client sent (an engine's name, a header) cannot colour, retitle or rewrite the operator's terminal."""
    if text.isprintable() and not keep:
        return text
    return "".join(c if c in keep or not _is_control(c) else _escaped(c) for c in text)


def event(name: str, level: int = logging.INFO, exc_info: bool = False, **fields: Any) -> None:
    """Log the event `name` with its fields (kept as data, not formatted into the text); `exc_info` adds the
    traceback of the exception being handled (as `traceback`)."""
    if log.isEnabledFor(level):
        log.log(level, name, exc_info=exc_info, extra={"fields": fields})


def _utc(created: float) -> str:
    """A record's time in ISO 8601, UTC, to the millisecond."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{int(created % 1 * 1000):03d}Z"


class EventFormatter(logging.Formatter):
    """What both formats share: the node's name, and a record's fields."""

    def __init__(self, node: str | None = None) -> None:
        super().__init__()
        self.node = node
        """The cluster node's name, on every line (None for a server on its own)."""

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        """The record's fields, with `node` filled in."""
        fields: dict[str, Any] = dict(getattr(record, "fields", {}))
        fields.setdefault("node", self.node)
        return fields


class JsonFormatter(EventFormatter):
    """Formats a record as `{"time", "level", "event", "match", "player", "node", **fields, "traceback"?}`."""

    def format(self, record: logging.LogRecord) -> str:
        """The JSON line of one record."""
        fields = self.fields(record)
        data: dict[str, Any] = {"time": _utc(record.created), "level": record.levelname.lower(),
                                "event": record.getMessage()}
        data.update({key: fields.pop(key, None) for key in KEYED})
        data.update(fields)
        if record.name != LOGGER_NAME:
            data["logger"] = record.name
        if record.exc_info:
            data["traceback"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str).replace("\x7f", "\\u007f")  # ASCII-only but for DEL


class TextFormatter(EventFormatter):
    """Formats a record as `TIME LEVEL event key=value ...`, the traceback on the lines after it."""

    def format(self, record: logging.LogRecord) -> str:
        """The text line (and traceback lines) of one record."""
        parts = [_utc(record.created), record.levelname.lower(), escape(record.getMessage())]
        for key, value in self.fields(record).items():
            if value is None:
                continue
            text = str(value)
            parts.append(f"{escape(key)}={text}" if text.isprintable() and text and not any(c in text for c in ' "=\\')
                         else f"{escape(key)}={escape(json.dumps(text, ensure_ascii=False))}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + escape(self.formatException(record.exc_info), keep="\n")
        return line


def configure(level: str = "info", fmt: str = "text") -> EventFormatter:
    """Send the server's logs to standard error as text lines or JSON lines (`fmt`), written by a thread of their own
    through a bounded queue (`server.log_writer`); returns the formatter (whose `node` the server sets once it knows
    its name)."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    formatter: EventFormatter = JsonFormatter() if fmt == "json" else TextFormatter()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger("kalah")
    for old in root.handlers:
        old.close()
    root.handlers[:] = [QueuedLogs(handler)]  # written by a thread of its own: a blocked stderr never holds the loop
    root.setLevel(level.upper())
    root.propagate = False
    return formatter

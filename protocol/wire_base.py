"""Shared pieces of the wire messages: field types and the strict `Message` base."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from protocol.errors import ERROR_CODES
from protocol.outcome import EndReason
from protocol.variant import Variant

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 16 * 1024
"""The largest message a client may send."""
MAX_SERVER_MESSAGE_BYTES = 1024 * 1024
"""The largest message the server sends (a websocket client's default frame limit)."""

Int32 = Annotated[int, Field(ge=0, le=2**31 - 1)]
Bin = Annotated[int, Field(ge=1, le=26)]
MATCH_ID_PATTERN = r"^[A-Za-z0-9_-]+$"
MATCH_ID_MAX_LENGTH = 64
MatchId = Annotated[str, Field(min_length=1, max_length=MATCH_ID_MAX_LENGTH, pattern=MATCH_ID_PATTERN)]
MATCH_ID_RULE = f"1 to {MATCH_ID_MAX_LENGTH} letters, digits, '-' or '_'"
"""What a match id is, in words."""
NAME_MAX_LENGTH = 32
"""The longest name of a player or bot on the wire."""
Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=r"^[A-Za-z0-9_.:-]+$")]
Token = Annotated[str, Field(min_length=16, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")]
SideName = Literal["south", "north"]
Fen = Annotated[str, Field(max_length=512)]
Reason = Annotated[EndReason, Field(strict=False)]
"""An end reason on the wire: its text (`resign`), read back as the `EndReason` member."""


def is_match_id(text: str) -> bool:
    """Whether `text` can travel as a match id (a hand-written database may hold others)."""
    return len(text) <= MATCH_ID_MAX_LENGTH and re.fullmatch(MATCH_ID_PATTERN, text) is not None


def _known_code(code: str) -> str:
    """Refuse an error code that no error class carries."""
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}")
    return code


ErrorCode = Annotated[str, AfterValidator(_known_code), WithJsonSchema({"type": "string", "enum": list(ERROR_CODES)})]
"""One of `protocol.errors.ERROR_CODES`."""


class Message(BaseModel):
    """Base of every wire message: strict, frozen, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def check_variant(text: str) -> str:
    """Validate a variant text and return its normal form."""
    if len(text) > 200:
        raise ValueError("variant text too long")
    return Variant.parse(text).text()

"""Shared pieces of the wire messages: field types, the strict `Message` base, message errors."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from protocol.errors import KalahError
from protocol.variant import Variant

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 16 * 1024

Int32 = Annotated[int, Field(ge=0, le=2**31 - 1)]
Bin = Annotated[int, Field(ge=1, le=26)]
MatchId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
Name = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_.:-]+$")]
Token = Annotated[str, Field(min_length=16, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")]
SideName = Literal["south", "north"]
Fen = Annotated[str, Field(max_length=512)]


class MessageError(KalahError):
    """A message that is not valid JSON or does not match any message type."""

    code = "bad_message"


class MessageTooLargeError(MessageError):
    """A message longer than `MAX_MESSAGE_BYTES`."""

    code = "too_large"


class InvalidJsonError(MessageError):
    """A message that is not one JSON object."""

    code = "bad_json"


class UnknownTypeError(MessageError):
    """A JSON object without a known `type`."""

    code = "unknown_type"


class BadFieldError(MessageError):
    """A known message type with a missing, unknown, mistyped or out-of-range field."""

    code = "bad_field"


class Message(BaseModel):
    """Base of every wire message: strict, frozen, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def check_variant(text: str) -> str:
    """Validate a variant text and return its normal form."""
    if len(text) > 200:
        raise ValueError("variant text too long")
    return Variant.parse(text).text()

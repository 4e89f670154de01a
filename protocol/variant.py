"""The `Variant` value: board size and every rule option of Kalah(h, s), with a text form."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from protocol.errors import VariantError

MIN_HOUSES, MAX_HOUSES = 1, 12
MIN_SEEDS, MAX_SEEDS = 1, 200
MAX_BASE_MS = 180 * 60 * 1000
"""Longest base time: 180 minutes (as lichess allows)."""
MAX_INCREMENT_MS = 180 * 1000
"""Longest increment per action: 180 seconds."""
MAX_PER_MOVE_MS = 3600 * 1000
"""Longest limit for a single action: one hour."""
MAX_CLOCK_MS = 2 * MAX_BASE_MS
"""A clock never holds more than this (increments stop adding once it is reached): 6 hours."""
_LIMITS = {"base_ms": MAX_BASE_MS, "increment_ms": MAX_INCREMENT_MS, "per_move_ms": MAX_PER_MOVE_MS}


class Capture(StrEnum):
    """What landing the last seed in an own empty house does."""

    STANDARD = "standard"
    EMPTY = "empty"
    NONE = "none"


class Leftover(StrEnum):
    """Who receives the seeds still in houses when the game ends."""

    OWNER = "owner"
    EMPTIER = "emptier"
    DISCARD = "discard"


def _parse_seconds(text: str) -> int:
    """Parse a non-negative number of seconds (decimals allowed) into milliseconds."""
    if not re.fullmatch(r"\d{1,6}(\.\d{1,3})?", text):
        raise VariantError(f"bad time value {text!r}: expected seconds such as 300 or 2.5")
    return round(float(text) * 1000)


def _format_seconds(ms: int) -> str:
    """Format milliseconds as the shortest seconds text that parses back."""
    if ms % 1000 == 0:
        return str(ms // 1000)
    return f"{ms / 1000:.3f}".rstrip("0")


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A clock setting: base time plus increment per move, or a fixed limit per move (ms)."""

    base_ms: int = 0
    increment_ms: int = 0
    per_move_ms: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value, limit = getattr(self, f.name), _LIMITS[f.name]
            if type(value) is not int or not 0 <= value <= limit:
                raise VariantError(f"time control {f.name.removesuffix('_ms')} must be 0..{limit // 1000} s")
        if self.per_move_ms and (self.base_ms or self.increment_ms):
            raise VariantError("a time control is either base+increment or a per-move limit")
        if not self.per_move_ms and not self.base_ms:
            raise VariantError("a time control needs a base time or a per-move limit")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse `300+5` (base and increment seconds) or `10/move` (per-move limit)."""
        if text.endswith("/move"):
            return cls(per_move_ms=_parse_seconds(text[: -len("/move")]))
        base, plus, inc = text.partition("+")
        return cls(base_ms=_parse_seconds(base), increment_ms=_parse_seconds(inc) if plus else 0)

    def text(self) -> str:
        """The text form that `parse` reads back."""
        if self.per_move_ms:
            return f"{_format_seconds(self.per_move_ms)}/move"
        return f"{_format_seconds(self.base_ms)}+{_format_seconds(self.increment_ms)}"

    def __str__(self) -> str:
        return self.text()


_BOOL_OPTIONS = {
    "extra": "extra_turn",
    "clockwise": "clockwise",
    "relay": "relay",
    "majority": "majority_end",
    "pie": "pie",
    "transfer": "opening_transfer",
}
_ON = {"on": True, "off": False}
_HEAD = re.compile(r"kalah\((\d{1,3}),(\d{1,3})(?:,(.*))?\)")


@dataclass(frozen=True, slots=True)
class Variant:
    """Kalah(h, s) with its options; frozen, validated, hashable; text form `kalah(6,4,...)`."""

    houses: int = 6
    seeds: int = 4
    capture: Capture = Capture.STANDARD
    extra_turn: bool = True
    clockwise: bool = False
    relay: bool = False
    leftover: Leftover = Leftover.OWNER
    majority_end: bool = False
    pie: bool = False
    opening_transfer: bool = False
    time_control: TimeControl | None = field(default=None)

    def __post_init__(self) -> None:
        for name, lo, hi in (("houses", MIN_HOUSES, MAX_HOUSES), ("seeds", MIN_SEEDS, MAX_SEEDS)):
            value = getattr(self, name)
            if type(value) is not int or not lo <= value <= hi:
                raise VariantError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
        try:
            object.__setattr__(self, "capture", Capture(self.capture))
            object.__setattr__(self, "leftover", Leftover(self.leftover))
        except ValueError as exc:
            raise VariantError(str(exc)) from None
        for name in _BOOL_OPTIONS.values():
            if type(getattr(self, name)) is not bool:
                raise VariantError(f"{name} must be true or false")
        if self.time_control is not None and not isinstance(self.time_control, TimeControl):
            raise VariantError("time_control must be a TimeControl or None")

    @property
    def pits(self) -> int:
        """Number of pits on the board: 2h houses and 2 stores."""
        return 2 * self.houses + 2

    @property
    def total_seeds(self) -> int:
        """Seeds on the board at the start."""
        return 2 * self.houses * self.seeds

    @property
    def can_repeat(self) -> bool:
        """Whether a position can recur (clockwise or relay sowing)."""
        return self.clockwise or self.relay

    def with_options(self, **changes: Any) -> Variant:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def text(self) -> str:
        """Compact text form, listing only options that differ from the defaults."""
        parts = [str(self.houses), str(self.seeds)]
        if self.capture is not Capture.STANDARD:
            parts.append(f"capture={self.capture.value}")
        for key, name in _BOOL_OPTIONS.items():
            value = getattr(self, name)
            if value != getattr(DEFAULT_VARIANT, name):
                parts.append(f"{key}={'on' if value else 'off'}")
        if self.leftover is not Leftover.OWNER:
            parts.append(f"leftover={self.leftover.value}")
        if self.time_control is not None:
            parts.append(f"clock={self.time_control.text()}")
        return f"kalah({','.join(parts)})"

    @classmethod
    def parse(cls, text: str) -> Variant:
        """Parse the text form, e.g. `kalah(6,4)` or `kalah(6,4,capture=empty,pie=on)`."""
        if cls is Variant:
            return _parse_variant(text)  # the same few texts come in every request: parsed once each
        return cls._parse(text)

    @classmethod
    def _parse(cls, text: str) -> Variant:
        """`parse` without the memo."""
        match = _HEAD.fullmatch(text.strip().replace(" ", "").lower())
        if not match:
            raise VariantError(f"bad variant {text!r}: expected kalah(H,S[,option=value...])")
        kwargs: dict[str, Any] = {"houses": int(match[1]), "seeds": int(match[2])}
        for item in filter(None, (match[3] or "").split(",")):
            key, eq, value = item.partition("=")
            if not eq:
                raise VariantError(f"bad variant option {item!r}: expected name=value")
            if key in kwargs or _BOOL_OPTIONS.get(key) in kwargs:
                raise VariantError(f"variant option {key!r} given twice")
            if key in _BOOL_OPTIONS:
                if value not in _ON:
                    raise VariantError(f"variant option {key} takes on or off, got {value!r}")
                kwargs[_BOOL_OPTIONS[key]] = _ON[value]
            elif key in ("capture", "leftover"):
                kwargs[key] = value
            elif key == "clock":
                kwargs["time_control"] = TimeControl.parse(value)
            else:
                raise VariantError(f"unknown variant option {key!r}")
        return cls(**kwargs)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Variant.parse({self.text()!r})"


DEFAULT_VARIANT = Variant()


@functools.lru_cache(maxsize=256)
def _parse_variant(text: str) -> Variant:
    """`Variant.parse` of a text, kept for the texts parsed lately (a refusal is not kept)."""
    return Variant._parse(text)

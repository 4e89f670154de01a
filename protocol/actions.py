"""Actions a player can take, and their notation tokens: a bin, `swap`, or a transfer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol.errors import NotationError


@dataclass(frozen=True, slots=True)
class Sow:
    """Sow from a house, named by its bin number (South 1..h, North h+2..2h+1)."""

    bin: int

    def token(self) -> str:
        """Notation token: the bin number."""
        return str(self.bin)


@dataclass(frozen=True, slots=True)
class Swap:
    """The pie-rule swap, offered on North's first turn."""

    def token(self) -> str:
        """Notation token: `swap`."""
        return "swap"


@dataclass(frozen=True, slots=True)
class Transfer:
    """North's opening transfer of one seed from bin `src` to bin `dst`, or none (both None)."""

    src: int | None = None
    dst: int | None = None

    def __post_init__(self) -> None:
        if (self.src is None) != (self.dst is None):
            raise NotationError("a transfer names both bins or neither")

    def token(self) -> str:
        """Notation token: `t3-9`, or `t-` for no transfer."""
        return "t-" if self.src is None else f"t{self.src}-{self.dst}"


Action = Sow | Swap | Transfer

_TRANSFER = re.compile(r"t(?:(\d{1,2})-(\d{1,2})|-)")


def parse_action(token: str) -> Action:
    """Parse one notation token: `3`, `swap`, `t3-9` or `t-`."""
    text = token.strip().lower()
    if text.isdigit() and len(text) <= 2 and text.isascii():
        return Sow(int(text))
    if text == "swap":
        return Swap()
    match = _TRANSFER.fullmatch(text)
    if match:
        if match[1] is None:
            return Transfer()
        return Transfer(int(match[1]), int(match[2]))
    raise NotationError(f"bad move {token!r}: expected a bin number, 'swap', 't3-9' or 't-'")


def parse_actions(record: str) -> list[Action]:
    """Parse a space-separated game record into actions."""
    return [parse_action(tok) for tok in record.split()]


def format_actions(actions: list[Action] | tuple[Action, ...]) -> str:
    """Format actions as a space-separated game record."""
    return " ".join(a.token() for a in actions)

"""The Kalah Game Protocol's text, sans I/O: lines, arguments, board literals, and a line splitter.

Pinned to KGP 1.1.0 (the `spec/` of KWARC/kalah-game at c30df8e): a line is
`[id][@ref] name args... CRLF`, an argument an integer, a real, a word (`[A-Za-z0-9:-]+`), a
double-quoted string with backslash escapes, or a board literal
`<n,south_store,north_store,s1..sn,n1..nn>` (1.0.0 listed North before South; 1.1.0 and the
go-kgp server put South first). The board is always shown from the mover's side: the agent
is South, and North's board is mirrored. Both ends of the gateway (the server's agents and
`kalah engine`) parse and format with this module only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol.errors import NotationError
from protocol.position import Position
from protocol.side import Side
from protocol.variant import MAX_SEEDS, Variant

VERSION = (1, 1, 0)
"""The KGP version the gateway implements and announces (`kgp 1 1 0`)."""
MAX_LINE = 16384
"""Longest line (characters before the line break, trailing white space included)."""

_HEAD = re.compile(r"\s*(?:(\d*)(?:@(\d+))?\s+)?([A-Za-z0-9]+)(?:\s+(.*?))?\s*")
_INTEGER = re.compile(r"[+-]?\d+")
_REAL = re.compile(r"[+-]?\d*\.\d+")
_WORD = re.compile(r"[A-Za-z0-9:-]+")
_ESCAPES = {"n": "\n", "t": "\t"}


class KgpSyntaxError(NotationError):
    """A KGP line or argument that does not follow the grammar."""


@dataclass(frozen=True, slots=True)
class Board:
    """A board literal: stores and pits, South's first; South's pits left to right, North's in its sowing order."""

    south_store: int
    north_store: int
    south: tuple[int, ...]
    north: tuple[int, ...]

    @property
    def size(self) -> int:
        """Houses per side."""
        return len(self.south)

    def text(self) -> str:
        """The literal: `<n,south_store,north_store,s1..sn,n1..nn>`."""
        values = (self.size, self.south_store, self.north_store, *self.south, *self.north)
        return "<" + ",".join(map(str, values)) + ">"

    @classmethod
    def parse(cls, text: str) -> Board:
        """Read a literal (spaces around the numbers are tolerated); raises `KgpSyntaxError`."""
        inner = text.strip()
        if not (inner.startswith("<") and inner.endswith(">")):
            raise KgpSyntaxError(f"a board is <n,south store,north store,pits...>, not {text[:40]!r}")
        try:
            values = [int(part) for part in inner[1:-1].split(",")]
        except ValueError:
            raise KgpSyntaxError(f"a board holds unsigned integers only: {text[:40]!r}") from None
        if not values or values[0] < 1 or len(values) != 3 + 2 * values[0] or min(values) < 0:
            raise KgpSyntaxError(f"a board of size n has 2n+3 unsigned values: {text[:40]!r}")
        n = values[0]
        return cls(values[1], values[2], tuple(values[3 : 3 + n]), tuple(values[3 + n :]))

    def mirror(self) -> Board:
        """The same board seen from the other side (North becomes South)."""
        return Board(self.north_store, self.south_store, self.north, self.south)

    @classmethod
    def of(cls, position: Position, side: Side) -> Board:
        """The board of `position` as `side` sees it (as South)."""
        h = position.variant.houses
        pits = position.pits
        board = cls(pits[h], pits[2 * h + 1], tuple(pits[:h]), tuple(pits[h + 1 : 2 * h + 1]))
        return board if side == Side.SOUTH else board.mirror()

    def position(self, ply: int = 0) -> Position:
        """This board as a position of Kalah(n, s), South to move (s from the seeds on the board)."""
        n = self.size
        total = self.south_store + self.north_store + sum(self.south) + sum(self.north)
        seeds = min(MAX_SEEDS, max(1, -(-total // (2 * n))))
        pits = (*self.south, self.south_store, *self.north, self.north_store)
        return Position(Variant(houses=n, seeds=seeds), pits, Side.SOUTH, ply)


Arg = int | float | str | Board


def bin_of(move: int, side: Side, houses: int) -> int:
    """The bin number of KGP move `move` (1-based pit of the mover, who sees itself as South)."""
    return move if side == Side.SOUTH else move + houses + 1


def gateway_variant(text: str) -> Variant:
    """The variant of gateway matches; refuses what KGP cannot express (pie rule, opening transfer)."""
    variant = Variant.parse(text)
    if variant.pie or variant.opening_transfer:
        raise ValueError("KGP agents can only sow: a gateway variant has no pie rule and no opening transfer")
    return variant


@dataclass(frozen=True, slots=True)
class Line:
    """One command: its optional id and reference, its name and its arguments."""

    name: str
    args: tuple[Arg, ...] = ()
    id: int | None = None
    ref: int | None = None

    def text(self) -> str:
        """The line without its line break."""
        head = "" if self.id is None else str(self.id)
        if self.ref is not None:
            head += f"@{self.ref}"
        parts = [f"{head} {self.name}" if head else self.name]
        parts += [format_arg(arg) for arg in self.args]
        return " ".join(parts)

    def wire(self) -> bytes:
        """The line as sent: UTF-8 with CRLF."""
        return (self.text() + "\r\n").encode()


def quote(text: str) -> str:
    """A string argument: double quotes, with backslash, quote and line breaks escaped."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + "".join(c if c >= " " else " " for c in escaped.replace("\r", "")) + '"'


def format_arg(arg: Arg) -> str:
    """The text of one argument: a string that reads back as a word is sent bare, any other quoted."""
    if isinstance(arg, Board):
        return arg.text()
    if isinstance(arg, bool):
        raise TypeError("KGP has no boolean arguments")
    if isinstance(arg, int):
        return str(arg)
    if isinstance(arg, float):
        return f"{arg:.6f}"
    if _WORD.fullmatch(arg) and not _INTEGER.fullmatch(arg):
        return arg
    return quote(arg)


def _unescape(body: str) -> str:
    """The value of a quoted string's body."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), body)


def parse_arg(token: str) -> Arg:
    """One argument token as its value; raises `KgpSyntaxError`."""
    if token.startswith('"'):
        return _unescape(token[1:-1])
    if token.startswith("<"):
        return Board.parse(token)
    if _INTEGER.fullmatch(token):
        return int(token)
    if _REAL.fullmatch(token):
        return float(token)
    if _WORD.fullmatch(token):
        return token
    raise KgpSyntaxError(f"not an integer, real, word, string or board: {token[:40]!r}")


def _tokens(text: str) -> list[str]:
    """The argument tokens of `text`: quoted strings (escapes kept), board literals, bare tokens."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        if text[i] == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                raise KgpSyntaxError(f"unterminated string {text[start:start + 40]!r}")
            i += 1
        elif text[i] == "<":
            i = text.find(">", i)
            if i < 0:
                raise KgpSyntaxError(f"unterminated board {text[start:start + 40]!r}")
            i += 1
        else:
            while i < n and not text[i].isspace():
                i += 1
        tokens.append(text[start:i])
    return tokens


def split_args(text: str) -> tuple[Arg, ...]:
    """Every argument of an argument list; raises `KgpSyntaxError`."""
    return tuple(parse_arg(token) for token in _tokens(text))


def parse_line(text: str) -> Line | None:
    """A line as a command (None for an empty line); raises `KgpSyntaxError`."""
    if not text.strip():
        return None
    m = _HEAD.fullmatch(text)
    if m is None:
        raise KgpSyntaxError(f"not a KGP command: {text[:40]!r}")
    ident, ref, name, rest = m.groups()
    return Line(name, split_args(rest or ""), int(ident) if ident else None, int(ref) if ref else None)


@dataclass(frozen=True, slots=True)
class Overlong:
    """A line longer than the limit, dropped unread: how many bytes it had."""

    size: int


class LineSplitter:
    """Cuts a byte stream into lines (LF or CRLF) without holding more than one line's limit."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._skipped = 0
        """Bytes dropped of the over-long line being skipped (0: none)."""

    def feed(self, data: bytes) -> list[str | Overlong]:
        """The complete lines in `data` (decoded, line break removed) and markers of over-long ones."""
        out: list[str | Overlong] = []
        self._buffer += data
        while (end := self._buffer.find(b"\n")) >= 0:
            raw = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._skipped or len(raw) > self.limit:
                out.append(Overlong(self._skipped + len(raw)))
                self._skipped = 0
            else:
                out.append(raw.decode("utf-8", "replace").removesuffix("\r"))
        if len(self._buffer) > self.limit:
            self._skipped += len(self._buffer)
            self._buffer.clear()
        return out

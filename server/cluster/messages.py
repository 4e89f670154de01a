"""The messages between the nodes of a cluster, each a typed value that prints (`text()`) and parses back (`parse`).

On a match's channel: `Changed` (the match reached a version; with the change itself when the
notice carries it) and `Cancelled`. On the nodes' channel: `NodeLeft`, `Paired`, `Online`,
`TournamentChanged` and `SessionsEnded`.
In a seek queue: `Waiting`. A text this node cannot read (a newer node's, or a damaged one)
raises `BusMessageError`, and the listener ignores it: a missed notice costs a read, never a gap.

Nodes of two versions share the bus during a rolling upgrade, so a carried change's fields are read by position
and a newer field is only ever appended: a reader takes the fields it knows and ignores those after them, and
fills a field the writer's version did not have yet with its default (an action's `age`, added after the
first release, is 0 when absent).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from protocol.outcome import EndReason


class BusMessageError(ValueError):
    """A bus message this node cannot read."""


# --- a match's channel ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Joined:
    """A player took `seat`."""

    seat: int
    player_id: str
    name: str
    bot: str | None


@dataclass(frozen=True, slots=True)
class Ended:
    """The game ended: South minus North if the board decided it, the winning seat (None: draw), and why."""

    result: int | None
    winner: int | None
    reason: EndReason


@dataclass(frozen=True, slots=True)
class Acted:
    """An action at `ply` by `seat`, with both clocks after it, when it was made (UNIX time, the storing node's:
    for the bus-lag figure only), the end it caused, and its `age` when told (seconds, by the storing node's
    monotonic clock: where a copy starts the next clock, whatever the nodes' wall clocks say)."""

    ply: int
    seat: int
    action: str
    clocks_ms: tuple[int, int]
    at: float
    end: Ended | None = None
    age: float = 0.0


Carried = Joined | Acted | Ended
"""A change a notice carries."""


def _end_json(end: Ended | None) -> list[object] | None:
    """An end as JSON."""
    return None if end is None else [end.result, end.winner, str(end.reason)]


def _end_of(data: object) -> Ended | None:
    """An end read back from JSON."""
    if data is None:
        return None
    if not isinstance(data, list) or len(data) != 3:
        raise BusMessageError(f"bad end {data!r}")
    result, winner, reason = data
    return Ended(result, winner, EndReason(reason))


@dataclass(frozen=True, slots=True)
class Changed:
    """A match reached `version` (how many changes made it); `change`, when carried, was made from `before`,
    so a copy at exactly that version applies it without reading the database."""

    version: int
    before: int | None = None
    change: Carried | None = None

    def text(self) -> str:
        """`<version>`, or `<version> <the change as JSON>`."""
        if self.change is None:
            return str(self.version)
        out: dict[str, object] = {"b": self.before}
        c = self.change
        if isinstance(c, Joined):
            out["j"] = [c.seat, c.player_id, c.name, c.bot]
        elif isinstance(c, Acted):
            out["a"] = [c.ply, c.seat, c.action, *c.clocks_ms, c.at, c.age]
            out["e"] = _end_json(c.end)
        else:
            out["e"] = _end_json(c)
        return f"{self.version} {json.dumps(out, separators=(',', ':'))}"

    @classmethod
    def parse(cls, text: str) -> Changed:
        """The notice of `text`; raises `BusMessageError`."""
        head, _, payload = text.partition(" ")
        if not head.isdigit():
            raise BusMessageError(f"bad change notice {text[:80]!r}")
        if not payload:
            return cls(int(head))
        try:
            data = json.loads(payload)
            change: Carried
            if "j" in data:
                seat, pid, name, bot = data["j"][:4]
                change = Joined(seat, pid, name, bot)
            elif "a" in data:
                ply, seat, action, ms0, ms1, at = data["a"][:6]
                age = float(data["a"][6]) if len(data["a"]) > 6 else 0.0  # a node before `age` sent six fields
                change = Acted(ply, seat, action, (ms0, ms1), at, _end_of(data.get("e")), max(0.0, age))
            else:
                end = _end_of(data.get("e"))
                if end is None:
                    raise BusMessageError("a notice with no change")
                change = end
            return cls(int(head), int(data["b"]), change)
        except (ValueError, KeyError, TypeError) as exc:
            raise BusMessageError(f"bad change notice {text[:80]!r}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Cancelled:
    """An open match was cancelled (its creator left, or it waited too long)."""

    def text(self) -> str:
        """`cancelled`."""
        return "cancelled"


MatchNotice = Changed | Cancelled


def parse_match_notice(text: str) -> MatchNotice:
    """A notice heard on a match's channel; raises `BusMessageError`."""
    return Cancelled() if text == "cancelled" else Changed.parse(text)


# --- the nodes' channel --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeLeft:
    """`node` drained: its matches are free to take."""

    node: str

    def text(self) -> str:
        """`left <node>`."""
        return f"left {self.node}"


@dataclass(frozen=True, slots=True)
class Paired:
    """A player waiting on `node` was given a seat in `match_id` by another node."""

    node: str
    player_id: str
    match_id: str

    def text(self) -> str:
        """`paired <node> <player> <match>`."""
        return f"paired {self.node} {self.player_id} {self.match_id}"


@dataclass(frozen=True, slots=True)
class Online:
    """A player's first connection on `node` opened (`online`), or its last one there closed."""

    online: bool
    node: str
    player_id: str

    def text(self) -> str:
        """`on <node> <player>` or `off <node> <player>`."""
        return f"{'on' if self.online else 'off'} {self.node} {self.player_id}"


@dataclass(frozen=True, slots=True)
class TournamentChanged:
    """An event reached `version` (a change stored by some node): a copy that is older reads it again."""

    event_id: str
    version: int

    def text(self) -> str:
        """`event <event> <version>`."""
        return f"event {self.event_id} {self.version}"


@dataclass(frozen=True, slots=True)
class SessionsEnded:
    """Accounts' sessions ended (signed out, revoked, a new password): every node closes its connections signed in
    with them."""

    session_ids: tuple[str, ...]

    def text(self) -> str:
        """`ended <session> <session> ...`."""
        return " ".join(("ended", *self.session_ids))


NodeNotice = NodeLeft | Paired | Online | TournamentChanged | SessionsEnded


def parse_node_notice(text: str) -> NodeNotice:
    """A notice heard on the nodes' channel; raises `BusMessageError`."""
    parts = text.split()
    match parts:
        case ["left", node]:
            return NodeLeft(node)
        case ["paired", node, player, match_id]:
            return Paired(node, player, match_id)
        case ["on" | "off" as kind, node, player]:
            return Online(kind == "on", node, player)
        case ["event", event_id, version] if version.isdigit():
            return TournamentChanged(event_id, int(version))
        case ["ended", *session_ids] if session_ids:
            return SessionsEnded(tuple(session_ids))
    raise BusMessageError(f"bad node notice {text[:80]!r}")


# --- a seek queue --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player of `node` waiting for an opponent (an entry of a variant's seek queue)."""

    node: str
    player_id: str
    name: str

    def text(self) -> str:
        """`<node> <player> <name>` (a name may hold spaces: it comes last)."""
        return f"{self.node} {self.player_id} {self.name}"

    @classmethod
    def parse(cls, text: str) -> Waiting:
        """The entry of `text`; raises `BusMessageError`."""
        parts = text.split(" ", 2)
        if len(parts) != 3 or not all(parts):
            raise BusMessageError(f"bad seek entry {text[:80]!r}")
        return cls(*parts)

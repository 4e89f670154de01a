"""The numbered events of a match, one model per `kind`, and the catch-up that answers watch and sync.

Every event is a `type: "event"` message with the match's `seq` (1, 2, 3, ...); `kind` tells
which model it is. Bins are bin numbers everywhere (South 1..h, North h+2..2h+1).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from protocol.wire_base import Bin, Fen, Int32, MatchId, Message, Name, Reason, SideName


class Clocks(Message):
    """Milliseconds left for each side, and which one is running (None: stopped)."""

    south_ms: Int32 | None = None
    north_ms: Int32 | None = None
    running: SideName | None = None


class Captured(Message):
    """A capture: the opponent's house emptied (a bin number) and the seeds it sent to the mover's store.

    `seeds` counts the captured house's seeds and the capturing last seed.
    """

    bin: Bin
    seeds: Int32


class MatchEvent(Message):
    """Base of the numbered events of a match: which match, and the event's number in it."""

    type: Literal["event"] = "event"
    match_id: MatchId
    seq: Int32


class JoinedEvent(MatchEvent):
    """A player took a seat; `clocks` are set when this join started a timed match."""

    kind: Literal["joined"] = "joined"
    side: SideName
    player: Name
    clocks: Clocks | None = None


class ActionEvent(MatchEvent):
    """An action at `ply` by `side`: the bins that received a seed, the capture, and the position after."""

    kind: Literal["action"] = "action"
    ply: Int32
    side: SideName
    action: Annotated[str, Field(max_length=8)]
    path: list[Bin] = Field(default_factory=list)
    capture: Captured | None = None
    extra_turn: bool = False
    position: Fen
    clocks: Clocks | None = None


class GameOverEvent(MatchEvent):
    """The end: why, South minus North if the board decided it, the winning side and player (None: a draw)."""

    kind: Literal["game_over"] = "game_over"
    reason: Reason
    result: int | None = None
    winner: SideName | None = None
    player: Name | None = None
    position: Fen
    clocks: Clocks | None = None


AnyMatchEvent = Annotated[JoinedEvent | ActionEvent | GameOverEvent, Field(discriminator="kind")]
"""Any one event, told apart by `kind`."""


class CatchUp(Message):
    """Answer to watch or sync with a `since` the server still has: the events after it, up to `seq`.

    `events` is empty when nothing happened since; live events continue from `seq + 1`.
    """

    type: Literal["catch_up"] = "catch_up"
    match_id: MatchId
    seq: Int32
    events: list[AnyMatchEvent] = Field(default_factory=list)


_event_adapter: TypeAdapter[Any] = TypeAdapter(AnyMatchEvent)


def decode_event(text: str | bytes) -> JoinedEvent | ActionEvent | GameOverEvent:
    """An event back from its JSON text (as logged or sent)."""
    return _event_adapter.validate_json(text)  # type: ignore[no-any-return]

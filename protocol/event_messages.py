"""Wire messages of events (tournaments): the requests `events`, `event`, `event_create`, `event_join` and
`event_leave`, `event_cancel`, and the replies `event_list` and `event_state` (also pushed to an event's followers)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.event_settings import EventKind, EventSettings
from protocol.wire_base import Int32, MatchId, Message, Name

EventId = Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_]+$")]
"""An event's id (match ids of its games are `ID-rROUND-tTABLE`, within the 64 a match id may have)."""
EventRef = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
"""An event as a request names it: any id of the shape of the `/event/ID` page's (a match id's); one that is no
event's id, also one no event can have, is `unknown_event`."""
BotName = Annotated[str, Field(min_length=1, max_length=28)]
"""A hosted bot, as `create` names an opponent (`greedy`, `minimax:4`, ...)."""
EventStatusName = Literal["open", "running", "finished", "cancelled"]
EntrantKindName = Literal["person", "bot", "engine"]
ResultName = Literal["1-0", "0-1", "1/2-1/2", "*", "bye"]
MAX_EVENT_BOTS = 64
"""The most hosted bots an `event_create` enters."""
MAX_PAIRINGS_SHOWN = 200
"""An `event_state` holds the games under way and at most this many of the latest others (or, asked for a page with
`pairings_from`, at most this many from there)."""


class ListEvents(Message):
    """Ask for events, newest first (of one status, or any)."""

    type: Literal["events"] = "events"
    status: EventStatusName | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 50


class FetchEvent(Message):
    """Ask for one event's state: standings, pairings, crosstable; `follow` keeps it coming on each change
    (false stops following)."""

    type: Literal["event"] = "event"
    event_id: EventRef
    follow: bool = False
    pairings_from: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    """Instead of the games under way and the latest others, the event's pairings from this one (0: its first) in
    the order they were made, at most `MAX_PAIRINGS_SHOWN`: pages that read every game of a long event."""


class CreateEvent(Message):
    """Open an event with these settings; `bots` are hosted bots the creator enters at once."""

    type: Literal["event_create"] = "event_create"
    settings: EventSettings
    bots: Annotated[list[BotName], Field(max_length=MAX_EVENT_BOTS)] = Field(default_factory=list)


class JoinEvent(Message):
    """Enter an event (an arena also after its start, or again after leaving); `bot`: its creator enters a
    hosted bot."""

    type: Literal["event_join"] = "event_join"
    event_id: EventRef
    bot: BotName | None = None


class LeaveEvent(Message):
    """Leave an event: off the list before the start, no more pairings after it (an arena: a pause);
    `bot`: its creator takes a hosted bot out."""

    type: Literal["event_leave"] = "event_leave"
    event_id: EventRef
    bot: BotName | None = None


class CancelEvent(Message):
    """Cancel an event its sender created, before it starts: its place on the server is free again."""

    type: Literal["event_cancel"] = "event_cancel"
    event_id: EventRef


class EventSummary(Message):
    """One line of the event list."""

    event_id: EventId
    name: str
    kind: EventKind
    variant: str
    status: EventStatusName
    creator: Name
    entrants: Int32
    max_entrants: Int32
    round: Int32 = 0
    rounds: Int32 | None = None
    created_at: float
    starts_at: float | None = None
    ends_at: float | None = None


class EventList(Message):
    """The answer to `events`."""

    type: Literal["event_list"] = "event_list"
    events: list[EventSummary]


class EntrantRow(Message):
    """An entrant's line of the standings, best first (an arena ranks by `points`)."""

    rank: Int32
    name: Name
    kind: EntrantKindName
    active: bool
    score: float
    points: Int32 | None = None
    """An arena's points (win 2, draw 1, doubled on a streak)."""
    on_fire: bool = False
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    wins: Int32 = 0
    draws: Int32 = 0
    losses: Int32 = 0
    byes: Int32 = 0


class PairingRow(Message):
    """A game of the event (or a bye: no `north`); `result` is `1-0`, `0-1`, `1/2-1/2`, `*` (under way) or
    `bye`. Its record line is `ROUND.TABLE SOUTH-NORTH RESULT MATCH` (`3.2 alice-bob 1-0 ID-r3-t2`), or
    `ROUND.TABLE NAME bye`."""

    round: Int32
    table: Int32
    south: Name
    north: Name | None = None
    match_id: MatchId | None = None
    result: ResultName

    def line(self) -> str:
        """The record line of this pairing (as `server.tournaments.records.Pairing` prints it)."""
        head = f"{self.round}.{self.table} {self.south}"
        return f"{head} bye" if self.north is None else f"{head}-{self.north} {self.result} {self.match_id}"


class CrossRow(Message):
    """A crosstable line: per round the opponent's rank, side and result (`4s1`, `3n=`, `+` bye, `-` none)."""

    rank: Int32
    name: Name
    score: float
    cells: list[Annotated[str, Field(max_length=8)]]


class EventState(Message):
    """An event as it stands: the answer to `event`, `event_create`, `event_join` and `event_leave`, and the
    message a follower gets after changes (at most one a second; `seq` counts the changes)."""

    type: Literal["event_state"] = "event_state"
    event_id: EventId
    seq: Int32
    settings: EventSettings
    creator: Name
    status: EventStatusName
    created_at: float
    started_at: float | None = None
    ends_at: float | None = None
    round: Int32 = 0
    rounds: Int32 | None = None
    standings: list[EntrantRow]
    pairings: list[PairingRow]
    pairings_total: Int32
    crosstable: list[CrossRow] = Field(default_factory=list)
    """Swiss and round-robin events (an arena has no rounds to cross)."""

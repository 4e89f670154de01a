"""Textual messages that carry network traffic between the worker, the app and the screens.

Down: the network worker posts each server message to the app as the `Received` subclass of
its type (`received`), and the app posts it on, as a fresh message of the same class, to the
screens it is for; screens handle them with `@on`. These never bubble: a screen that has no
handler for one simply ignores it. Up: screens post `Outgoing` and `ReplayRequested`, which
bubble to the app.
"""

from __future__ import annotations

from typing import Any, Generic, Self, TypeVar

from textual.message import Message

from client.stored_game import StoredGame
from protocol.messages import (
    Analysis,
    ErrorMessage,
    EventList,
    EventState,
    GameList,
    GameRecord,
    GameReview,
    MatchEvent,
    MatchList,
    Presence,
    Seeking,
    ServerMessage,
    Snapshot,
    Standings,
    Welcome,
)
from protocol.messages import Message as WireMessage

M = TypeVar("M", bound=WireMessage)


class Received(Message, Generic[M], bubble=False):
    """A message from the server; the subclass says which kind (this base: one no screen handles)."""

    def __init__(self, msg: M) -> None:
        super().__init__()
        self.msg = msg

    def copy(self) -> Self:
        """The same server message as a new Textual message, to post on to a screen."""
        return type(self)(self.msg)


class WelcomeReceived(Received[Welcome], bubble=False):
    """The server accepted the hello: the identity (name and token) and the seats held."""


class MatchListReceived(Received[MatchList], bubble=False):
    """The open and live matches."""


class StandingsReceived(Received[Standings], bubble=False):
    """The rating table and head-to-head results."""


class SeekingReceived(Received[Seeking], bubble=False):
    """The server is looking for an opponent for this client."""


class GameListReceived(Received[GameList], bubble=False):
    """Stored games, newest first."""


class GameRecordReceived(Received[GameRecord], bubble=False):
    """One stored game with its whole record, to replay."""


class SnapshotReceived(Received[Snapshot], bubble=False):
    """The whole state of one match."""


class EventReceived(Received[MatchEvent], bubble=False):
    """One numbered event of a match."""


class PresenceReceived(Received[Presence], bubble=False):
    """Who is connected to a match and how many watch it."""


class EventListReceived(Received[EventList], bubble=False):
    """The server's events (tournaments), newest first."""


class EventStateReceived(Received[EventState], bubble=False):
    """One event as it stands: its standings and pairings (the answer to a request, or a followed change)."""


class AnalysisReceived(Received[Analysis], bubble=False):
    """The solver's value of a position."""


class GameReviewReceived(Received[GameReview], bubble=False):
    """A finished game's review against perfect play."""


class ErrorReceived(Received[ErrorMessage], bubble=False):
    """A request was refused."""


RECEIVED: dict[type[WireMessage], type[Received[Any]]] = {
    Welcome: WelcomeReceived,
    MatchList: MatchListReceived,
    Standings: StandingsReceived,
    Seeking: SeekingReceived,
    GameList: GameListReceived,
    GameRecord: GameRecordReceived,
    Snapshot: SnapshotReceived,
    MatchEvent: EventReceived,
    Presence: PresenceReceived,
    Analysis: AnalysisReceived,
    GameReview: GameReviewReceived,
    EventList: EventListReceived,
    EventState: EventStateReceived,
    ErrorMessage: ErrorReceived,
}
"""The Textual message of each kind of server message (a subclass goes with its base: every event)."""


def received(msg: ServerMessage) -> Received[Any]:
    """The Textual message that carries `msg`; kinds no screen needs (acks) get the bare `Received`."""
    kind = next((RECEIVED[cls] for cls in type(msg).__mro__ if cls in RECEIVED), Received)
    return kind(msg)


class ConnectionChanged(Message, bubble=False):
    """The connection came up, went down, or is being retried (posted to the app, then to each screen)."""

    def __init__(self, connected: bool, detail: str) -> None:
        super().__init__()
        self.connected = connected
        self.detail = detail

    def copy(self) -> ConnectionChanged:
        """The same news as a new Textual message, to post on to a screen."""
        return ConnectionChanged(self.connected, self.detail)


class Outgoing(Message):
    """A screen asks the app to send a message to the server."""

    def __init__(self, msg: WireMessage) -> None:
        super().__init__()
        self.msg = msg


class ReplayRequested(Message):
    """A screen asks to replay a match: the stored game if the screen has it, else the app fetches it."""

    def __init__(self, match_id: str, stored: StoredGame | None = None) -> None:
        super().__init__()
        self.match_id = match_id
        self.stored = stored

"""Wire messages between clients and the server: strict pydantic v2 models with a `type` tag.

Every message is one JSON object; match events (`protocol.events`) are further told apart by
`kind`. Requests live in `protocol.requests`, replies in `protocol.replies`; this module gathers
every name, the two unions and the codec. `decode_client` / `decode_server` turn text into a
model or raise a `MessageError`; `encode` turns a model into text. Unknown fields, unknown types
and kinds, wrong types and out-of-range numbers are all refused. `protocol.schema` publishes the
same models as a JSON Schema.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from protocol.account_messages import (
    ChangePassword,
    ListSessions,
    Login,
    Logout,
    Recover,
    Register,
    RevokeSessions,
    SessionInfo,
    SessionList,
    SignedIn,
    SignedOut,
)
from protocol.errors import (
    ERROR_CODES,
    BadFieldError,
    InvalidJsonError,
    MessageError,
    MessageTooLargeError,
    UnknownTypeError,
)
from protocol.event_messages import (
    CancelEvent,
    CreateEvent,
    EventList,
    EventState,
    FetchEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
)
from protocol.events import (
    ActionEvent,
    AnyMatchEvent,
    Captured,
    CatchUp,
    Clocks,
    GameOverEvent,
    JoinedEvent,
    MatchEvent,
    decode_event,
)
from protocol.explore_messages import Explore, Explored, ExploredMove
from protocol.puzzle_messages import (
    AnswerPuzzle,
    AskPuzzle,
    ListPuzzles,
    PuzzleInfo,
    PuzzleList,
    PuzzleMove,
    PuzzleResult,
    PuzzleShown,
)
from protocol.replies import (
    Ack,
    Analysis,
    ErrorMessage,
    GameInfo,
    GameList,
    GameRecord,
    HeadToHead,
    MatchList,
    MatchSummary,
    Moderated,
    ModerationRow,
    Presence,
    Seeking,
    SeekSummary,
    Snapshot,
    StandingRow,
    Standings,
    Welcome,
)
from protocol.requests import (
    SEEK_VARIANT,
    ActionMessage,
    Analyse,
    ClaimWin,
    ClientMessage,
    CreateExhibition,
    CreateMatch,
    FetchGame,
    FindOpponent,
    Hello,
    JoinMatch,
    LeaveMatch,
    ListGames,
    ListMatches,
    ListStandings,
    MakeMove,
    Moderate,
    Resign,
    SwapSides,
    SyncMatch,
    TransferSeed,
    WatchMatch,
    message_action,
)
from protocol.review_messages import GameReview, MarkThresholds, ReviewedPly, ReviewGame, ReviewSummary
from protocol.wire_base import (
    MAX_MESSAGE_BYTES,
    MAX_SERVER_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    Bin,
    ErrorCode,
    Fen,
    Int32,
    MatchId,
    Message,
    Name,
    Reason,
    SideName,
    Token,
    check_variant,
)

ServerMessage = Annotated[
    Welcome | MatchList | Snapshot | AnyMatchEvent | CatchUp | Ack | Presence | Seeking | GameList | GameRecord
    | Standings | Analysis | Moderated | ErrorMessage | EventList | EventState | SignedIn | SessionList | SignedOut
    | GameReview | Explored | PuzzleShown | PuzzleResult | PuzzleList,
    Field(discriminator="type"),
]

_client_adapter: TypeAdapter[Any] = TypeAdapter(ClientMessage)
_server_adapter: TypeAdapter[Any] = TypeAdapter(ServerMessage)



def _decode(adapter: TypeAdapter[Any], data: str | bytes, limit: int) -> Any:
    """Validate JSON text against a union of messages, mapping failures to `MessageError`."""
    if len(data) > limit:
        raise MessageTooLargeError(f"message of {len(data)} bytes exceeds {limit}")
    try:
        return adapter.validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        kind = first.get("type", "")
        cls: type[MessageError] = BadFieldError
        if kind in ("union_tag_invalid", "union_tag_not_found"):
            cls = UnknownTypeError
        elif kind == "json_invalid" or not where:
            cls = InvalidJsonError
        raise cls(f"{where or 'message'}: {first['msg']}") from None


def decode_client(data: str | bytes) -> ClientMessage:
    """Parse a message sent by a client; raises `MessageError`."""
    return _decode(_client_adapter, data, MAX_MESSAGE_BYTES)  # type: ignore[no-any-return]


def decode_server(data: str | bytes) -> ServerMessage:
    """Parse a message sent by the server; raises `MessageError`."""
    return _decode(_server_adapter, data, MAX_SERVER_MESSAGE_BYTES)  # type: ignore[no-any-return]


def encode(msg: Message) -> str:
    """The JSON text of a message."""
    return msg.model_dump_json()


__all__ = [
    "ERROR_CODES",
    "MAX_MESSAGE_BYTES",
    "MAX_SERVER_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "SEEK_VARIANT",
    "Ack",
    "ActionEvent",
    "ActionMessage",
    "Analyse",
    "Analysis",
    "AnswerPuzzle",
    "AnyMatchEvent",
    "AskPuzzle",
    "BadFieldError",
    "Bin",
    "CancelEvent",
    "Captured",
    "CatchUp",
    "ChangePassword",
    "ClaimWin",
    "ClientMessage",
    "Clocks",
    "CreateEvent",
    "CreateExhibition",
    "CreateMatch",
    "ErrorCode",
    "ErrorMessage",
    "EventList",
    "EventState",
    "Explore",
    "Explored",
    "ExploredMove",
    "Fen",
    "FetchEvent",
    "FetchGame",
    "FindOpponent",
    "GameInfo",
    "GameList",
    "GameOverEvent",
    "GameRecord",
    "GameReview",
    "HeadToHead",
    "Hello",
    "Int32",
    "InvalidJsonError",
    "JoinEvent",
    "JoinMatch",
    "JoinedEvent",
    "LeaveEvent",
    "LeaveMatch",
    "ListEvents",
    "ListGames",
    "ListMatches",
    "ListPuzzles",
    "ListSessions",
    "ListStandings",
    "Login",
    "Logout",
    "MakeMove",
    "MarkThresholds",
    "MatchEvent",
    "MatchId",
    "MatchList",
    "MatchSummary",
    "Message",
    "MessageError",
    "MessageTooLargeError",
    "Moderate",
    "Moderated",
    "ModerationRow",
    "Name",
    "Presence",
    "PuzzleInfo",
    "PuzzleList",
    "PuzzleMove",
    "PuzzleResult",
    "PuzzleShown",
    "Reason",
    "Recover",
    "Register",
    "Resign",
    "ReviewGame",
    "ReviewSummary",
    "ReviewedPly",
    "RevokeSessions",
    "SeekSummary",
    "Seeking",
    "ServerMessage",
    "SessionInfo",
    "SessionList",
    "SideName",
    "SignedIn",
    "SignedOut",
    "Snapshot",
    "StandingRow",
    "Standings",
    "SwapSides",
    "SyncMatch",
    "Token",
    "TransferSeed",
    "UnknownTypeError",
    "WatchMatch",
    "Welcome",
    "check_variant",
    "decode_client",
    "decode_event",
    "decode_server",
    "encode",
    "message_action",
]

"""Wire messages between clients and the server: strict pydantic v2 models with a `type` tag.

Every message is one JSON object. `decode_client` / `decode_server` turn text into a model or
raise `MessageError`; `encode` turns a model into text. Unknown fields, unknown types, wrong
types and out-of-range numbers are all refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from protocol.actions import Action, Sow, Swap, Transfer
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


def _check_variant(text: str) -> str:
    """Validate a variant text and return its normal form."""
    if len(text) > 200:
        raise ValueError("variant text too long")
    return Variant.parse(text).text()


# ---------------------------------------------------------------- client -> server


class Hello(Message):
    """First message of a connection: a name, or a token to restore an identity."""

    type: Literal["hello"] = "hello"
    name: Name
    token: Token | None = None
    version: Int32 = PROTOCOL_VERSION


class CreateMatch(Message):
    """Create a match: a variant, the creator's seat, and an open seat or a hosted bot."""

    type: Literal["create"] = "create"
    variant: str = "kalah(6,4)"
    seat: Literal["south", "north", "random"] = "south"
    opponent: Annotated[str, Field(max_length=64)] | None = None
    rated: bool = True

    _variant = field_validator("variant")(_check_variant)


class FindOpponent(Message):
    """Ask to be paired with any other player waiting for the same variant."""

    type: Literal["seek"] = "seek"
    variant: str = "kalah(6,4)"

    _variant = field_validator("variant")(_check_variant)


class JoinMatch(Message):
    """Take the open seat of a match."""

    type: Literal["join"] = "join"
    match_id: MatchId


class WatchMatch(Message):
    """Spectate a match; `since` is the last event number already seen (None: snapshot)."""

    type: Literal["watch"] = "watch"
    match_id: MatchId
    since: Int32 | None = None


class SyncMatch(Message):
    """After reconnecting: send the events of a match after `since`, or a snapshot."""

    type: Literal["sync"] = "sync"
    match_id: MatchId
    since: Int32 | None = None


class LeaveMatch(Message):
    """Stop watching a match, or give up an open seat before the game starts."""

    type: Literal["leave"] = "leave"
    match_id: MatchId


class MakeMove(Message):
    """Sow from a bin, at ply `ply` of the match (a resent move is acknowledged, not replayed)."""

    type: Literal["move"] = "move"
    match_id: MatchId
    ply: Int32
    bin: Bin


class SwapSides(Message):
    """Take the pie-rule swap on North's first turn."""

    type: Literal["swap"] = "swap"
    match_id: MatchId
    ply: Int32


class TransferSeed(Message):
    """The opening transfer: move one seed from bin `src` to bin `dst`, or none (both null)."""

    type: Literal["transfer"] = "transfer"
    match_id: MatchId
    ply: Int32
    src: Bin | None = None
    dst: Bin | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> TransferSeed:
        """A transfer names both bins or neither."""
        if (self.src is None) != (self.dst is None):
            raise ValueError("a transfer names both src and dst, or neither")
        return self


class Resign(Message):
    """Resign a match."""

    type: Literal["resign"] = "resign"
    match_id: MatchId


class ClaimWin(Message):
    """Claim the win when the opponent has been disconnected past the grace period."""

    type: Literal["claim"] = "claim"
    match_id: MatchId


class ListMatches(Message):
    """Ask for the open and live matches."""

    type: Literal["list"] = "list"


class ListGames(Message):
    """Ask for stored games, newest first: finished ones unless `status` says otherwise."""

    type: Literal["games"] = "games"
    limit: Annotated[int, Field(ge=1, le=200)] = 50
    offset: Int32 = 0
    status: Literal["open", "live", "finished", "cancelled"] | None = "finished"
    player: Name | None = None
    variant: str | None = None

    _variant = field_validator("variant")(lambda v: None if v is None else _check_variant(v))


class FetchGame(Message):
    """Ask for one stored game, with its whole record, for replay."""

    type: Literal["game"] = "game"
    match_id: MatchId


class CreateExhibition(Message):
    """A match between two hosted bots from an agreed opening (the ladder's games); anyone may watch.

    A `match_id` chosen by the client makes creation idempotent: a second request with the same id
    is refused with `match_exists`, so a client that lost the answer can look the match up instead.
    """

    type: Literal["exhibition"] = "exhibition"
    variant: str = "kalah(6,4)"
    south: Annotated[str, Field(min_length=1, max_length=28)]
    north: Annotated[str, Field(min_length=1, max_length=28)]
    opening: Annotated[list[Annotated[str, Field(max_length=8)]], Field(max_length=16)] = []
    rated: bool = True
    match_id: MatchId | None = None

    _variant = field_validator("variant")(_check_variant)


class ListStandings(Message):
    """Ask for the rating table of rated games (humans and bots), best first."""

    type: Literal["standings"] = "standings"
    limit: Annotated[int, Field(ge=1, le=200)] = 50


class Analyse(Message):
    """Ask for the value of a position (South minus North at the end) and a best move."""

    type: Literal["analyse"] = "analyse"
    variant: str = "kalah(6,4)"
    position: Fen
    budget_ms: Annotated[int, Field(ge=10, le=5000)] = 1000

    _variant = field_validator("variant")(_check_variant)


ActionMessage = MakeMove | SwapSides | TransferSeed

ClientMessage = Annotated[
    Hello | CreateMatch | FindOpponent | JoinMatch | WatchMatch | SyncMatch | LeaveMatch
    | MakeMove | SwapSides | TransferSeed | Resign | ClaimWin | ListMatches | ListGames | FetchGame
    | CreateExhibition | ListStandings | Analyse,
    Field(discriminator="type"),
]


def message_action(msg: ActionMessage) -> Action:
    """The rules `Action` an action message asks for."""
    if isinstance(msg, MakeMove):
        return Sow(msg.bin)
    if isinstance(msg, SwapSides):
        return Swap()
    return Transfer(msg.src, msg.dst)


# ---------------------------------------------------------------- server -> client


class Welcome(Message):
    """Answer to hello: the identity, its secret token, and the matches where it holds a seat."""

    type: Literal["welcome"] = "welcome"
    player_id: MatchId
    name: Name
    token: Token
    seats: list[MatchId] = []
    version: Int32 = PROTOCOL_VERSION


class Clocks(Message):
    """Milliseconds left for each side, and which one is running (None: stopped)."""

    south_ms: Int32 | None = None
    north_ms: Int32 | None = None
    running: SideName | None = None


class MatchSummary(Message):
    """One match in a listing."""

    match_id: MatchId
    variant: str
    south: Name | None = None
    north: Name | None = None
    status: Literal["open", "live", "finished"]
    ply: Int32 = 0
    spectators: Int32 = 0
    result: int | None = None


class MatchList(Message):
    """The open and live matches."""

    type: Literal["matches"] = "matches"
    matches: list[MatchSummary]


class Snapshot(Message):
    """The whole state of a match, as of event number `seq`."""

    type: Literal["snapshot"] = "snapshot"
    match_id: MatchId
    seq: Int32
    variant: str
    south: Name | None = None
    north: Name | None = None
    you: SideName | None = None
    status: Literal["open", "live", "finished"]
    record: list[Annotated[str, Field(max_length=8)]] = []
    position: Fen
    clocks: Clocks = Clocks()
    spectators: Int32 = 0
    result: int | None = None
    reason: str | None = None
    winner: SideName | None = None


class MatchEvent(Message):
    """One numbered event of a match: an action with what it did, or a change of players."""

    type: Literal["event"] = "event"
    match_id: MatchId
    seq: Int32
    kind: Literal["action", "joined", "left", "spectators", "game_over"]
    ply: Int32 | None = None
    side: SideName | None = None
    action: Annotated[str, Field(max_length=8)] | None = None
    path: list[Bin] = []
    capture: list[Int32] | None = None
    extra_turn: bool = False
    position: Fen | None = None
    clocks: Clocks | None = None
    player: Name | None = None
    spectators: Int32 | None = None
    result: int | None = None
    reason: str | None = None
    winner: SideName | None = None


class Ack(Message):
    """An action was stored: it is durable from now on (`duplicate`: a resent action, not replayed)."""

    type: Literal["ack"] = "ack"
    match_id: MatchId
    ply: Int32
    seq: Int32
    duplicate: bool = False


class Presence(Message):
    """Who is there, outside the numbered events: spectator count and which seats are connected."""

    type: Literal["presence"] = "presence"
    match_id: MatchId
    spectators: Int32 = 0
    south_connected: bool = False
    north_connected: bool = False


class Seeking(Message):
    """Answer to seek: waiting for an opponent of this variant (a snapshot follows when paired)."""

    type: Literal["seeking"] = "seeking"
    variant: str


class ErrorMessage(Message):
    """A refused request: a stable `code`, a human message, and the request type it answers."""

    type: Literal["error"] = "error"
    code: Annotated[str, Field(max_length=64)]
    message: Annotated[str, Field(max_length=1000)]
    request: Annotated[str, Field(max_length=32)] | None = None
    match_id: MatchId | None = None


class GameInfo(Message):
    """A stored game: who opened as South and North, its record, and how it ended (times in ISO 8601)."""

    match_id: MatchId
    variant: str
    south: Name | None = None
    north: Name | None = None
    status: Literal["open", "live", "finished", "cancelled"]
    record: list[Annotated[str, Field(max_length=8)]] = []
    result: int | None = None
    winner: Name | None = None
    reason: str | None = None
    created_at: Annotated[str, Field(max_length=40)]
    finished_at: Annotated[str, Field(max_length=40)] | None = None


class GameList(Message):
    """Answer to `games`: stored games, newest first."""

    type: Literal["game_list"] = "game_list"
    games: list[GameInfo]


class GameRecord(Message):
    """Answer to `game`: one stored game with its whole record."""

    type: Literal["game_record"] = "game_record"
    game: GameInfo


class StandingRow(Message):
    """One player's line of the rating table: Glicko-2 rating and deviation, results."""

    name: Name
    rating: float
    rd: float
    games: Int32
    wins: Int32
    draws: Int32
    losses: Int32


class HeadToHead(Message):
    """The results of `player` against `opponent`."""

    player: Name
    opponent: Name
    wins: Int32
    draws: Int32
    losses: Int32


class Standings(Message):
    """Answer to `standings`: the rating table and head-to-head results."""

    type: Literal["standings_table"] = "standings_table"
    rows: list[StandingRow]
    head_to_head: list[HeadToHead] = []


class Analysis(Message):
    """Answer to `analyse`: the value (exact, or from a search of `depth` sowings) and best moves."""

    type: Literal["analysis"] = "analysis"
    position: Fen
    value: Annotated[int, Field(ge=-10_000, le=10_000)]
    best: list[Bin] = []
    exact: bool
    depth: Annotated[int, Field(ge=-1, le=1000)]


ServerMessage = Annotated[
    Welcome | MatchList | Snapshot | MatchEvent | Ack | Presence | Seeking | GameList | GameRecord | Standings
    | Analysis | ErrorMessage,
    Field(discriminator="type"),
]

_client_adapter: TypeAdapter[Any] = TypeAdapter(ClientMessage)
_server_adapter: TypeAdapter[Any] = TypeAdapter(ServerMessage)

M = TypeVar("M", bound=Message)


def _decode(adapter: TypeAdapter[Any], data: str | bytes) -> Any:
    """Validate JSON text against a union of messages, mapping failures to `MessageError`."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
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
    return _decode(_client_adapter, data)  # type: ignore[no-any-return]


def decode_server(data: str | bytes) -> ServerMessage:
    """Parse a message sent by the server; raises `MessageError`."""
    return _decode(_server_adapter, data)  # type: ignore[no-any-return]


def encode(msg: Message) -> str:
    """The JSON text of a message."""
    return msg.model_dump_json()

"""Messages the server sends to clients, besides the match events (`protocol.events`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.events import Clocks
from protocol.wire_base import (
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
)


class ModerationRow(Message):
    """One row of a moderation listing: who is online (player, name, addresses, and the cluster node), a ban, or an
    audited act."""

    kind: str
    target: str
    name: str | None = None
    address: str | None = None
    node: str | None = None
    reason: str | None = None
    actor: str | None = None
    at: float | None = None


class Moderated(Message):
    """The answer to a moderation act: what was done (`done`), and the rows of a listing."""

    type: Literal["moderated"] = "moderated"
    act: str
    done: str
    rows: list[ModerationRow] = Field(default_factory=list)


class Welcome(Message):
    """Answer to hello: the identity, its secret token (a guest's; None for an account, which signs in with its
    session), and the matches where it holds a seat."""

    type: Literal["welcome"] = "welcome"
    player_id: MatchId
    name: Name
    token: Token | None
    seats: list[MatchId] = Field(default_factory=list)
    version: Int32 = PROTOCOL_VERSION
    account: bool = False
    """The identity is an account (signed in with a session), not a guest."""


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


class SeekSummary(Message):
    """A player waiting for an opponent in a variant (a `seek` of the same variant plays them)."""

    variant: str
    name: Name


class MatchList(Message):
    """The open and live matches, and who seeks an opponent in which variant."""

    type: Literal["matches"] = "matches"
    matches: list[MatchSummary]
    seeks: list[SeekSummary] = Field(default_factory=list)


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
    record: list[Annotated[str, Field(max_length=8)]] = Field(default_factory=list)
    position: Fen
    clocks: Clocks = Clocks()
    spectators: Int32 = 0
    result: int | None = None
    reason: Reason | None = None
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
    code: ErrorCode
    message: Annotated[str, Field(max_length=1000)]
    request: Annotated[str, Field(max_length=32)] | None = None
    match_id: MatchId | None = None
    retry_ms: Annotated[int, Field(ge=1, le=3_600_000)] | None = None
    """For `rate_limited` and `too_many`: wait at least this long before asking again (absent: no hint)."""


class GameInfo(Message):
    """A stored game: who opened as South and North, its record, and how it ended (times in ISO 8601)."""

    match_id: MatchId
    variant: str
    south: Name | None = None
    north: Name | None = None
    status: Literal["open", "live", "finished", "cancelled"]
    record: list[Annotated[str, Field(max_length=8)]] = Field(default_factory=list)
    result: int | None = None
    winner: Name | None = None
    reason: Reason | None = None
    created_at: Annotated[str, Field(max_length=40)]
    finished_at: Annotated[str, Field(max_length=40)] | None = None
    detail: Annotated[str, Field(max_length=1000)] | None = None
    """Why an outside engine forfeited the game (`engine exited with status 3 ...`), if one did."""


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
    head_to_head: list[HeadToHead] = Field(default_factory=list)


class Analysis(Message):
    """Answer to `analyse`: the value (exact, or from a search of `depth` sowings) and best moves."""

    type: Literal["analysis"] = "analysis"
    position: Fen
    value: Annotated[int, Field(ge=-10_000, le=10_000)]
    best: list[Bin] = Field(default_factory=list)
    exact: bool
    depth: Annotated[int, Field(ge=-1, le=1000)]

"""Messages a client sends to the server (requests), their union, and the action they ask for."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from protocol.account_messages import (
    ChangePassword,
    ListSessions,
    Login,
    Logout,
    Recover,
    Register,
    RevokeSessions,
)
from protocol.actions import Action, Sow, Swap, Transfer
from protocol.event_messages import CancelEvent, CreateEvent, FetchEvent, JoinEvent, LeaveEvent, ListEvents
from protocol.explore_messages import Explore
from protocol.puzzle_messages import AnswerPuzzle, AskPuzzle, ListPuzzles
from protocol.review_messages import ReviewGame
from protocol.wire_base import PROTOCOL_VERSION, Bin, Fen, Int32, MatchId, Message, Name, Token, check_variant


class Hello(Message):
    """First message of a connection: a name, or a token to restore an identity."""

    type: Literal["hello"] = "hello"
    name: Name
    token: Token | None = None
    version: Int32 = PROTOCOL_VERSION
    session: Token | None = None
    """A terminal's signed-in session (from `login`): the account's identity, in place of a guest's token."""
    account: bool = False
    """A browser's signed-in session: the account whose session cookie the connection's handshake carried."""
    engine: bool = False
    """A program plays under this identity (`kalah bridge`): a new one is named `engine:NAME`, as the
    KGP gateway names its engine accounts, so that it is never taken for a person."""


class CreateMatch(Message):
    """Create a match: a variant, the creator's seat, and an open seat or a hosted bot."""

    type: Literal["create"] = "create"
    variant: str = "kalah(6,4)"
    seat: Literal["south", "north", "random"] = "south"
    opponent: Annotated[str, Field(max_length=64)] | None = None
    rated: bool = True

    _variant = field_validator("variant")(check_variant)


SEEK_VARIANT = "kalah(6,4,clock=300+5)"
"""What a seek asks for unless it names a variant: the terminal lobby's `a` and the web lobby's form by default, so
that their seekers meet."""


class FindOpponent(Message):
    """Ask to be paired with any other player waiting for the same variant."""

    type: Literal["seek"] = "seek"
    variant: str = SEEK_VARIANT

    _variant = field_validator("variant")(check_variant)


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

    _variant = field_validator("variant")(lambda v: None if v is None else check_variant(v))


class FetchGame(Message):
    """Ask for one stored game, with its whole record, for replay."""

    type: Literal["game"] = "game"
    match_id: MatchId


MAX_PACE_MS = 10_000
"""The longest minimum time per move an exhibition may ask for (10 s)."""


class CreateExhibition(Message):
    """A match between two hosted bots from an agreed opening (the ladder's games); anyone may watch.

    A `match_id` chosen by the client makes creation idempotent: a second request with the same id
    is refused with `match_exists`, so a client that lost the answer can look the match up instead.
    `pace_ms` is a minimum time per move, so that people can follow the game live (0: as fast as the bots).
    """

    type: Literal["exhibition"] = "exhibition"
    variant: str = "kalah(6,4)"
    south: Annotated[str, Field(min_length=1, max_length=28)]
    north: Annotated[str, Field(min_length=1, max_length=28)]
    opening: Annotated[list[Annotated[str, Field(max_length=8)]], Field(max_length=16)] = Field(default_factory=list)
    rated: bool = False
    match_id: MatchId | None = None
    operator_token: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    """The server operator's secret: only with it may an exhibition be rated (the operator's ladder)."""
    pace_ms: Annotated[int, Field(ge=0, le=MAX_PACE_MS)] = 0

    _variant = field_validator("variant")(check_variant)


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

    _variant = field_validator("variant")(check_variant)


ModerationAct = Literal["ban", "unban", "abort", "rename", "close", "reset", "online", "bans", "audit",
                        "cancel_event", "hide_event", "show_event"]


class Moderate(Message):
    """An operator's moderation act (only with the operator token): ban or unban a player (`kind: player`, by id
    or name) or an address (`kind: address`), abort a live match, rename or close an identity, give an account a
    one-time reset code (`reset`: the code is in the answer's `done`, to hand over), cancel, hide or show again an
    event; or list who is online, the bans, and the audit of past acts. Every act that changes something is audited
    with `reason`."""

    type: Literal["moderate"] = "moderate"
    operator_token: Annotated[str, Field(min_length=1, max_length=128)]
    act: ModerationAct
    kind: Literal["player", "address"] = "player"
    target: Annotated[str, Field(max_length=64)] = ""
    """A player's id or name, a network address (`kind: address`), a match id (`abort`), or an event id
    (`cancel_event`, `hide_event`: cancelled if still open or running and left out of every list, `show_event`)."""
    name: Name | None = None
    """The new name (`rename`)."""
    reason: Annotated[str, Field(max_length=500)] = ""
    actor: Annotated[str, Field(max_length=64)] = ""
    """Who acts, for the audit (default: the connection's identity, if it said hello); it may come before hello."""
    limit: Annotated[int, Field(ge=1, le=500)] = 100
    """How many rows a listing returns at most (`online`, `bans`, `audit`)."""


ActionMessage = MakeMove | SwapSides | TransferSeed

ClientMessage = Annotated[
    Hello | CreateMatch | FindOpponent | JoinMatch | WatchMatch | SyncMatch | LeaveMatch
    | MakeMove | SwapSides | TransferSeed | Resign | ClaimWin | ListMatches | ListGames | FetchGame
    | CreateExhibition | ListStandings | Analyse | Moderate | ListEvents | FetchEvent | CreateEvent | JoinEvent
    | LeaveEvent | Register | Login | Recover | Logout | ListSessions | RevokeSessions | ChangePassword
    | ReviewGame | CancelEvent | Explore | AskPuzzle | AnswerPuzzle | ListPuzzles,
    Field(discriminator="type"),
]


def message_action(msg: ActionMessage) -> Action:
    """The rules `Action` an action message asks for."""
    if isinstance(msg, MakeMove):
        return Sow(msg.bin)
    if isinstance(msg, SwapSides):
        return Swap()
    return Transfer(msg.src, msg.dst)

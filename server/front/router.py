"""The request router: one handler per request type, each turning a request into arena changes.

Handlers validate and answer; every write goes through the arena (`Arena.apply` for matches,
`Arena.apply_seek` for players waiting, `Arena.identities` for players), never from here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Literal, cast

from protocol.actions import parse_action
from protocol.errors import BadTokenError, InPlayError, KalahError, NotationError
from protocol.event_messages import FetchEvent, ListEvents
from protocol.explore_messages import Explore
from protocol.game import Game
from protocol.messages import (
    Analyse,
    ClaimWin,
    ClientMessage,
    CreateExhibition,
    CreateMatch,
    FetchGame,
    FindOpponent,
    GameInfo,
    GameList,
    GameRecord,
    Hello,
    JoinMatch,
    LeaveMatch,
    ListGames,
    ListMatches,
    ListStandings,
    MakeMove,
    MatchList,
    Message,
    Moderate,
    Resign,
    Seeking,
    SeekSummary,
    SwapSides,
    SyncMatch,
    TransferSeed,
    WatchMatch,
    Welcome,
    encode,
    message_action,
)
from protocol.outcome import EndReason
from protocol.position import Position
from protocol.puzzle_messages import AnswerPuzzle, AskPuzzle, ListPuzzles
from protocol.variant import Variant
from server.core.arena import Arena, SeekChange
from server.core.changes import CancelChange
from server.core.errors import (
    AlreadyHelloError,
    HelloFirstError,
    MatchExistsError,
    NotOperatorError,
    RateLimitedError,
    TooManyError,
    UnknownMatchError,
)
from server.core.follower import Follower
from server.core.match import Seat
from server.core.played import PlayedHere
from server.core.resume import room_or_stored
from server.core.rooms import Room
from server.core.standings import standings_table
from server.core.tokens import new_id
from server.edge.answers import Answers
from server.edge.session import Session
from server.front.account_requests import PUBLIC_ACCOUNT_REQUESTS, AccountRequests
from server.front.analysis import Analyst
from server.front.moderation import Moderator
from server.logs import event as log_event
from server.storage import StoredGame

GameStatus = Literal["open", "live", "finished", "cancelled"]
Handler = Callable[[Session, Any], Awaitable[list[Message]]]
PUBLIC: frozenset[type[ClientMessage]] = frozenset({Hello, ListMatches, ListGames, FetchGame, ListStandings,
                                                   Moderate, ListEvents, FetchEvent, Explore, AskPuzzle,
                                                   AnswerPuzzle, ListPuzzles})
"""Requests served before hello: the hello itself, the public reads (events, one event, the opening explorer and
puzzles included: puzzles answered before hello are unrated), and the operator's (with its token)."""


def game_info(game: StoredGame) -> GameInfo | None:
    """The wire form of a stored game, or None for a row the wire model refuses (it is skipped and logged)."""
    try:
        return _game_info(game)
    except ValueError as exc:  # a ValidationError, or an end reason that is none of EndReason's
        log_event("unreadable_game", match=game.match_id, error=str(exc)[:500], level=30)
        return None


def _game_info(game: StoredGame) -> GameInfo:
    """The wire form of a stored game (raises if a stored field breaks the wire's rules)."""
    return GameInfo(match_id=game.match_id, variant=game.variant, south=game.south, north=game.north,
                    status=cast(GameStatus, game.status), record=game.record.split(), result=game.result,
                    winner=game.winner, reason=None if game.reason is None else EndReason(game.reason),
                    created_at=game.created_at.isoformat(),
                    finished_at=None if game.finished_at is None else game.finished_at.isoformat(),
                    detail=None if game.detail is None else game.detail[:1000])


def too_many_rows(rows: int, wait_s: float) -> RateLimitedError:
    """The refusal of a public read whose budgets (the address's, its network's, the server's) lack `rows`."""
    return RateLimitedError(f"too many rows read from your address or its network: wait before asking for {rows} "
                            "more", wait_s)


def charge_rows(s: Session, rows: int) -> None:
    """Take `rows` from the public-read quotas of the address, its network and the server, or refuse with
    `rate_limited`."""
    if not s.peer.reads.allow(max(1, rows)):
        raise too_many_rows(rows, s.peer.reads.wait_s(max(1, rows)))


async def shared_read(answers: Answers, busy: bool, s: Session, key: Hashable,
                      make: Callable[[], Awaitable[tuple[Message, int]]]) -> list[Message]:
    """Answer `s` with the answer kept for the read `key` while the server is `busy` or many ask it (its rows
    charged), else with a new one `make` makes (charging the rows itself) and that is kept.

    A read whose budgets lack the rows the last answer held is refused (`rate_limited`) before any work."""
    kept = answers.shared(key, busy)
    if kept is not None:
        charge_rows(s, kept.rows)
        s.push([kept.text])
        return []
    rows = max(1, answers.rows(key))
    if (wait := s.peer.reads.wait_s(rows)) > 0:
        raise too_many_rows(rows, wait)
    with answers.making(key):
        reply, rows = await make()
    s.push([answers.keep(key, encode(reply).encode(), rows).text])
    return []


MAX_SEEKS_LISTED = 100
"""The most seeks a `matches` listing holds (the oldest first)."""


def still_open(follower: Follower) -> bool:
    """Whether a waiting seeker's connection is still open (an engine's session always is)."""
    return not isinstance(follower, Session) or follower.ws.state.name == "OPEN"


class Router:
    """Serves each request of a connection with the handler of its type."""

    def __init__(self, arena: Arena, analyst: Analyst, moderation: Moderator, answers: Answers,
                 busy: Callable[[], bool] = lambda: False,
                 more_handlers: Mapping[type[ClientMessage], Handler] | None = None,
                 accounts: AccountRequests | None = None, played: PlayedHere | None = None) -> None:
        self.arena = arena
        self.accounts = accounts or AccountRequests(arena)
        """Accounts' requests, and hellos with a session."""
        self.analyst = analyst
        self.played = played or PlayedHere(arena)
        """Whom the analysis queue serves first: identities that played a game here."""
        self.handlers: dict[type[ClientMessage], Handler] = {
            Hello: self.hello, ListMatches: self.listing, ListGames: self.stored, FetchGame: self.stored,
            ListStandings: self.standings, Analyse: self.analyse,
            MakeMove: self.act, SwapSides: self.act, TransferSeed: self.act,
            WatchMatch: self.follow, SyncMatch: self.follow, Resign: self.end, ClaimWin: self.end,
            LeaveMatch: self.leave, CreateMatch: self.create, CreateExhibition: self.exhibition,
            FindOpponent: self.seek, JoinMatch: self.join, Moderate: self.moderate,
            **self.accounts.handlers(),
            **(more_handlers or {}),
        }
        self.moderation = moderation
        self.answers = answers
        """Public reads' answers, shared while the server is busy or many ask them."""
        self.busy = busy
        """Whether the server is overloaded (the admission's judgement)."""

    async def handle(self, s: Session, msg: ClientMessage) -> list[Message]:
        """Serve one request; returns the direct replies, raises a typed error on refusal."""
        if s.player_id is None and type(msg) not in PUBLIC and type(msg) not in PUBLIC_ACCOUNT_REQUESTS:
            raise HelloFirstError("say hello first")
        return await self.handlers[type(msg)](s, msg)

    # --- identity --------------------------------------------------------------------------

    async def hello(self, s: Session, msg: Hello) -> list[Message]:
        """Restore an identity from its token, or make a new one; the identity's seats come back."""
        if s.player_id is not None:
            raise AlreadyHelloError("this connection already said hello")
        a = self.arena
        token: str | None
        if msg.session is not None or msg.account:
            player, token = await self.accounts.hello(s, msg), None
            self.moderation.check_player(s, player.player_id)
        elif msg.token is not None:
            self.moderation.check_token(s, msg.token)
            player, token = await a.identities.restore(msg.token), msg.token
            if await a.accounts.is_account(player.player_id):  # made an account on another node since it was read
                a.identities.forget(player.player_id)
                raise BadTokenError("this identity is an account now: sign in with its password")
        else:
            a.quotas.take_identity(s.peer.address)
            player, token = await a.identities.new_human(msg.name, msg.engine)
        pid = player.player_id
        s.player_id, s.name = pid, player.name
        await a.replication.seated(pid)  # in a cluster, seats held in matches this node has not loaded yet
        seats = a.connect(s)
        log_event("hello", player=pid, restored=msg.token is not None, account=s.account_session is not None,
                  remote=s.remote)
        return [Welcome(player_id=pid, name=player.name, token=token, seats=seats,
                        account=s.account_session is not None)]

    async def moderate(self, s: Session, msg: Moderate) -> list[Message]:
        """An operator's moderation act (see `server.front.moderation`)."""
        return [await self.moderation.act(s, msg)]

    @staticmethod
    def seat_of(s: Follower) -> Seat:
        """The seat value of a session's identity."""
        assert s.player_id is not None and s.name is not None
        return Seat(s.player_id, s.name)

    # --- public reads ---------------------------------------------------------------------------

    @staticmethod
    def charge_rows(s: Session, rows: int) -> None:
        """Take `rows` from the public-read quotas of the address, its network and the server, or refuse with
        `rate_limited`."""
        charge_rows(s, rows)

    async def shared_read(self, s: Session, key: Hashable,
                          make: Callable[[], Awaitable[tuple[Message, int]]]) -> list[Message]:
        """`shared_read` with this router's answers and judgement of the server's load."""
        return await shared_read(self.answers, self.busy(), s, key, make)

    async def listing(self, s: Session, msg: ListMatches) -> list[Message]:
        """Open matches whose creator is connected first, then live ones by spectators (in a cluster: every
        node's, as stored, with this node's spectator counts), and the players seeking an opponent (this node's first,
        then those waiting on the cluster's other live nodes)."""
        a = self.arena

        async def make() -> tuple[Message, int]:
            """The list, its rows charged to `s`."""
            matches = await a.replication.listing(a.options.max_list, lambda rows: self.charge_rows(s, rows))
            seeks = [SeekSummary(variant=variant, name=waiting.name) for variant, waiting in a.seeks.items()
                     if waiting.name is not None and still_open(waiting)][:MAX_SEEKS_LISTED]
            shown = {(seek.variant, seek.name) for seek in seeks}
            for variant, name in await a.replication.seeks_elsewhere(MAX_SEEKS_LISTED - len(seeks)):
                if (variant, name) not in shown:  # a player may wait on this node and another one
                    seeks.append(SeekSummary(variant=variant, name=name))
                    shown.add((variant, name))
            return MatchList(matches=matches, seeks=seeks), len(matches) + len(seeks)

        return await self.shared_read(s, "list", make)

    async def stored(self, s: Session, msg: ListGames | FetchGame) -> list[Message]:
        """Stored games for replay, read from the database."""
        storage = self.arena.storage
        if isinstance(msg, FetchGame):
            self.charge_rows(s, 1)
            game = await storage.fetch_game(msg.match_id)
            info = None if game is None else game_info(game)
            if info is None:
                raise UnknownMatchError(f"no readable stored game {msg.match_id!r}")
            return [GameRecord(game=info)]

        async def make() -> tuple[Message, int]:
            """The page of games, its rows charged to `s` before it is read."""
            self.charge_rows(s, msg.limit)
            games = await storage.list_games(msg.limit, msg.offset, msg.status, msg.player, msg.variant)
            return GameList(games=[info for info in map(game_info, games) if info is not None]), msg.limit

        return await self.shared_read(s, ("games", msg.limit, msg.offset, msg.status, msg.player, msg.variant), make)

    async def standings(self, s: Session, msg: ListStandings) -> list[Message]:
        """The rating table of rated games."""
        self.charge_rows(s, msg.limit)
        a = self.arena
        return [await standings_table(a.storage, await a.replication.ratings(), msg.limit)]

    async def analyse(self, s: Session, msg: Analyse) -> list[Message]:
        """The solver's value and best move of a position, within the request's budget; refused with `in_play` for
        the position an unfinished game of the asker's stands at."""
        self._refuse_own_game(s, msg)
        await self.played.played(s.player_id)  # learnt from the database if need be; then known in memory
        answer = await self.analyst.aanalyse(msg, s.peer, s.ws.wait_closed, lambda: self.played.known(s.player_id),
                                             who=s.player_id)
        return [] if answer is None else [answer]

    def _refuse_own_game(self, s: Session, msg: Analyse) -> None:
        """Raise `in_play` if `msg` asks about the position a live match the asker is seated in stands at."""
        if s.player_id is None:
            return
        try:
            rules = Variant.parse(msg.variant).with_options(time_control=None)
            fen = Position.from_fen(rules, msg.position).fen()
        except KalahError:
            return  # the analyst refuses it with the reason
        for room in self.arena.rooms_of(s.player_id):
            match = room.match
            if match.status == "live" and match.variant.with_options(time_control=None) == rules \
                    and match.position.fen() == fen:
                raise InPlayError(f"match {match.match_id} stands at this position and you play in it: "
                                  "ask again once it has ended")

    # --- lobby ---------------------------------------------------------------------------------

    async def create(self, s: Session, msg: CreateMatch) -> list[Message]:
        """Create a match, open to anyone or against a hosted bot; the creator follows it."""
        a = self.arena
        assert s.player_id is not None
        if msg.opponent is None:
            a.quotas.check_open(s.player_id, s.peer.address)  # before any other work
        variant = Variant.parse(msg.variant)
        seat = a.pick_seat(msg.seat)
        seats = [(seat, self.seat_of(s))]
        match_id = new_id("m")
        if msg.opponent is not None:
            seats.append((1 - seat, a.bot_seat(msg.opponent)))
        else:
            a.quotas.hold_open(match_id, s.player_id, s.peer.address)
        try:
            room = await a.create(variant, msg.rated, seat, seats, match_id=match_id, follow=s,
                                  creator=a.quotas.creators.get(match_id))  # stored with an open match
        except BaseException:
            a.quotas.release(match_id)
            raise
        return [room.match.snapshot(seat, room.spectators)]

    async def exhibition(self, s: Session, msg: CreateExhibition) -> list[Message]:
        """Open a live match between two hosted bots, play the opening, start the bots; `s` follows it."""
        a = self.arena
        if msg.rated and not self.moderation.operator.check(s.peer.address, msg.operator_token, "exhibition"):
            raise NotOperatorError("only the operator's ladder starts rated exhibitions: ask for an unrated one")
        assert s.player_id is not None
        a.quotas.check_exhibition(s.player_id, s.peer.address, operator=msg.rated)  # before any other work
        variant = Variant.parse(msg.variant)
        opening = [parse_action(token) for token in msg.opening]
        if Game.from_record(variant, opening).over:  # an illegal opening is refused before anything is stored
            raise NotationError("the opening ends the game: nothing would be left to play")
        seats = [(0, a.bot_seat(msg.south)), (1, a.bot_seat(msg.north))]
        match_id = msg.match_id or new_id("m")
        if a.id_taken(match_id):
            raise MatchExistsError(f"match {match_id!r} already exists")
        a.quotas.hold_exhibition(match_id, s.player_id, s.peer.address)
        try:
            room = await a.create(variant, msg.rated, 0, seats, opening, match_id, follow=s,
                                  pace_s=msg.pace_ms / 1000)
        except BaseException:
            a.quotas.release(match_id)
            raise
        return [room.match.snapshot(None, room.spectators)]

    async def seek(self, s: Session, msg: FindOpponent) -> list[Message]:
        """Pair with a player already waiting for this variant, or wait for one."""
        a = self.arena
        other = a.seeks.get(msg.variant)
        if other is None or other.player_id == s.player_id or not still_open(other):
            a.refuse_if_closing()
            if remote := await a.replication.take_seek(msg.variant, s.player_id or ""):
                node, waiting = remote
                room = await a.create(Variant.parse(msg.variant), True, 0, [(0, waiting), (1, self.seat_of(s))],
                                      follow=s)
                a.replication.paired(node, waiting.player_id, room.match.match_id)
                return [room.match.snapshot(1, room.spectators)]
            a.apply_seek(SeekChange(msg.variant, s, waiting=True))
            return [Seeking(variant=msg.variant)]
        a.apply_seek(SeekChange(msg.variant, other, waiting=False))
        seats = [(0, self.seat_of(other)), (1, self.seat_of(s))]
        room = await a.create(Variant.parse(msg.variant), True, 0, seats, follow=other)
        room.follow(s)
        other.send(room.match.snapshot(0, room.spectators))
        return [room.match.snapshot(1, room.spectators)]

    async def join(self, s: Session, msg: JoinMatch) -> list[Message]:
        """Take the open seat of a match and get its snapshot; it goes live and its clocks start."""
        a = self.arena
        room = await a.find_room(msg.match_id)
        seat = self.seat_of(s)
        async with room.lock:
            await a.retry(room, lambda: room.match.prepare_join(seat), follow=s)
            joined = room.match.seat_of(seat.player_id)
            assert joined is not None
            s.send(room.match.snapshot(joined, room.spectators))
        return []

    # --- playing -----------------------------------------------------------------------------

    async def act(self, s: Session, msg: MakeMove | SwapSides | TransferSeed) -> list[Message]:
        """A move, swap or transfer by the sender's seat (its ack and events go out from the arena)."""
        room = await self.arena.find_room(msg.match_id)
        await self.arena.act(room, await self.arena.current_seat(s, room), message_action(msg), msg.ply, s)
        return []

    async def end(self, s: Session, msg: Resign | ClaimWin) -> list[Message]:
        """Resign, or claim the win from an opponent away past the grace period."""
        a = self.arena
        room = await a.find_room(msg.match_id)
        seat = await a.current_seat(s, room)
        if isinstance(msg, Resign) and room.match.status == "open" and await self.cancel(room):
            self.unfollow(s, room)  # resigned before anyone joined: the match is cancelled
            return []
        m = room.match  # live (maybe only now: another node seated an opponent, and this copy has read it)
        opponent = m.seats[1 - seat]
        away = await a.presence.away(opponent)
        async with room.lock:
            a.refuse_if_closing()
            if isinstance(msg, Resign):
                await a.retry(room, lambda: m.prepare_resign(seat))
            else:
                await a.retry(room, lambda: m.prepare_claim(seat, away))
        return []

    # --- following ----------------------------------------------------------------------------

    async def follow(self, s: Session, msg: WatchMatch | SyncMatch) -> list[Message]:
        """Watch or re-sync a match: one answer, a catch-up with the events after `since` (maybe none) or a snapshot."""
        a = self.arena
        was = msg.match_id in s.following
        if not was:
            self.check_follow(s)  # before anything is loaded
        if msg.match_id not in a.rooms:
            self.charge_rows(s, 1)
        room = await room_or_stored(a, msg.match_id)
        if a.rooms.get(msg.match_id) is not room:  # a finished game read back: answered, not kept
            s.peer.reads.charge(room.match.ply)  # its replay's work, like that many rows
            s.send_text(room.match.catch_up_text(msg.since, room.match.seat_of(s.player_id or ""), 0))
            return []
        await a.replication.catch_up(room)
        room.follow(s)
        s.send_text(room.match.catch_up_text(msg.since, room.followers[s], room.spectators))
        if not was:
            a.presence.announce(room)
        return []

    def check_follow(self, s: Session) -> None:
        """Refuse to follow one more match past the connection's or the address's limit (`too_many`)."""
        opts = self.arena.options
        if len(s.following) >= opts.max_follow:
            raise TooManyError(f"this connection follows {opts.max_follow} matches already: leave one first")
        if sum(len(other.following) for other in s.peer.sessions) >= opts.max_follow_per_address:
            raise TooManyError(f"your address follows {opts.max_follow_per_address} matches already")

    async def leave(self, s: Session, msg: LeaveMatch) -> list[Message]:
        """Stop following; a creator leaving its still-open match cancels it."""
        a = self.arena
        room = await a.find_room(msg.match_id)
        m = room.match
        if s.player_id is not None and m.seat_of(s.player_id) is not None and m.status == "open":
            await self.cancel(room)
        self.unfollow(s, room)
        return []

    def unfollow(self, s: Session, room: Room) -> None:
        """`s` stops following `room` (the others see one spectator fewer)."""
        if room.unfollow(s):
            self.arena.presence.announce(room)

    async def cancel(self, room: Room) -> bool:
        """Cancel a match still open (its creator left); False if it is not open after all (in a cluster, another
        node seated an opponent, and this copy has read it)."""
        async with room.lock:
            await self.arena.retry(room, lambda: CancelChange() if room.match.status == "open" and self.arena.held(room)
                                   else None)
            return room.match.status == "open"

    async def disconnect(self, s: Session) -> None:
        """A connection closed: drop its seeks and follows; its seats' grace periods start."""
        self.accounts.disconnect(s)
        self.arena.disconnect(s)

"""Requests of a connection: hello, the lobby (create, seek, join, list), following and playing."""

from __future__ import annotations

from typing import Literal, cast

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
    Resign,
    Seeking,
    Snapshot,
    SwapSides,
    SyncMatch,
    TransferSeed,
    WatchMatch,
    Welcome,
    message_action,
)
from protocol.variant import Variant
from server.analysis import Analyst
from server.arena import Arena
from server.errors import BadTokenError, HelloFirstError, ServerError, ShuttingDownError, UnknownMatchError
from server.exhibition import create_exhibition, standings
from server.identity import hash_token, new_id, new_token, player_of_token, token_matches
from server.logs import event as log_event
from server.match import JoinChange, Seat
from server.rooms import Room
from server.session import Session
from server.storage import Op, StoredGame, StoredPlayer, afetch_game, alist_games
from server.storage.writer import op_cancel, op_create, op_join, op_player

GameStatus = Literal["open", "live", "finished", "cancelled"]


def game_info(game: StoredGame) -> GameInfo:
    """The wire form of a stored game."""
    return GameInfo(match_id=game.match_id, variant=game.variant, south=game.south, north=game.north,
                    status=cast(GameStatus, game.status), record=game.record.split(), result=game.result,
                    winner=game.winner, reason=game.reason, created_at=game.created_at.isoformat(),
                    finished_at=None if game.finished_at is None else game.finished_at.isoformat())


class AlreadyHelloError(ServerError):
    """A second hello on one connection."""

    code = "already_hello"


class Lobby:
    """Turns each client request into arena changes and replies (sent by the connection)."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.analyst = Analyst()

    async def handle(self, s: Session, msg: ClientMessage) -> list[Message]:
        """Serve one request; returns the direct replies, raises a typed error on refusal."""
        if isinstance(msg, Hello):
            return [await self.hello(s, msg)]
        if isinstance(msg, ListMatches):  # public reads need no identity
            return [self.listing()]
        if isinstance(msg, ListGames | FetchGame):
            return [await self.stored(msg)]
        if isinstance(msg, ListStandings):
            return [await standings(self.arena, msg.limit)]
        if s.player_id is None:
            raise HelloFirstError("say hello first")
        if isinstance(msg, Analyse):
            return [await self.analyst.aanalyse(msg)]
        if isinstance(msg, MakeMove | SwapSides | TransferSeed):
            room = self.arena.room(msg.match_id)
            await self.arena.act(room, self.arena.seat(s, room), message_action(msg), msg.ply, s)
            return []
        if isinstance(msg, WatchMatch | SyncMatch):
            await self.arena.room_or_stored(msg.match_id)
            self.follow(s, msg.match_id, msg.since)
            return []
        if isinstance(msg, Resign | ClaimWin):
            await self.end(s, msg)
            return []
        if isinstance(msg, LeaveMatch):
            await self.leave(s, msg.match_id)
            return []
        if self.arena.closing:
            raise ShuttingDownError("the server is shutting down")
        if isinstance(msg, CreateMatch):
            return [await self.create(s, msg)]
        if isinstance(msg, CreateExhibition):
            return [await create_exhibition(self, s, msg)]
        if isinstance(msg, FindOpponent):
            return [await self.seek(s, msg)]
        if isinstance(msg, JoinMatch):
            await self.join(s, msg)
            return []
        raise ServerError(f"unhandled request {msg.type}")  # pragma: no cover

    # --- identity --------------------------------------------------------------------------

    async def hello(self, s: Session, msg: Hello) -> Welcome:
        """Restore an identity from its token, or make a new one; the identity's seats come back."""
        if s.player_id is not None:
            raise AlreadyHelloError("this connection already said hello")
        a = self.arena
        if msg.token is not None:
            pid = player_of_token(msg.token)
            player = a.players.get(pid)
            if player is None or not token_matches(msg.token, player.token_hash):
                raise BadTokenError("unknown token: say hello with a name only for a new identity")
            token = msg.token
        else:
            pid = new_id("p")
            token = new_token(pid)
            player = StoredPlayer(pid, msg.name, hash_token(token), None)
            await a.storage.write([op_player(pid, msg.name, player.token_hash)])
            a.players[pid] = player
        s.player_id, s.name = pid, player.name
        first = not a.sessions_of[pid]
        a.sessions_of[pid].add(s)
        seats = []
        for room in a.rooms_of(pid):
            seat = room.match.seat_of(pid)
            if seat is not None and room.match.status != "finished":
                seats.append(room.match.match_id)
                if first:
                    room.match.set_connected(seat, True)
                    a.announce(room)
        log_event("hello", player=pid, restored=msg.token is not None, remote=s.remote)
        return Welcome(player_id=pid, name=player.name, token=token, seats=seats)

    def seat_of(self, s: Session) -> Seat:
        """The seat value of a session's identity."""
        assert s.player_id is not None and s.name is not None
        return Seat(s.player_id, s.name)

    # --- lobby -------------------------------------------------------------------------------

    def listing(self) -> MatchList:
        """Open matches whose creator is connected first, then live ones by spectators."""
        a = self.arena
        rooms = [r for r in a.rooms.values()
                 if r.match.status == "live" or (r.match.status == "open" and any(a.connected(r)))]
        rooms.sort(key=lambda r: (r.match.status != "open", -r.spectators))
        return MatchList(matches=[r.match.summary(r.spectators) for r in rooms[: a.options.max_list]])

    async def open_match(self, variant: Variant, rated: bool, joins: list[JoinChange],
                         creator_seat: int, extra: list[Op], match_id: str | None = None) -> Room:
        """Store a new match with its first players, then commit it into a new room."""
        a = self.arena
        match = a.new_match(match_id or new_id("m"), variant, rated)
        live = len(joins) == 2
        ops = [*extra, op_create(match.match_id, variant.text(), rated, creator_seat)]
        ops += [op_join(match.match_id, j.seat, j.player.player_id, live) for j in joins]
        await a.storage.write(ops)
        for j in joins:
            match.commit(j)
        room = Room(match)
        a.add_room(room)
        log_event("match_created", match=match.match_id, variant=variant.text(),
                  players=[j.player.player_id for j in joins])
        return room

    def bot_seat(self, bot: str) -> tuple[Seat, Op]:
        """The seat of a hosted bot, and the statement that stores its player row."""
        a = self.arena
        a.bots.check(bot)
        bot_id = "bot-" + "".join(c if c.isalnum() else "-" for c in bot)[:40]
        name = ("bot:" + bot)[:32]
        a.players.setdefault(bot_id, StoredPlayer(bot_id, name, None, bot))
        return Seat(bot_id, name, bot), op_player(bot_id, name, None, bot)

    async def create(self, s: Session, msg: CreateMatch) -> Snapshot:
        """Create a match, open to anyone or against a hosted bot; the creator follows it."""
        a = self.arena
        variant = Variant.parse(msg.variant)
        seat = a.pick_seat(msg.seat)
        joins = [JoinChange(seat, self.seat_of(s))]
        extra: list[Op] = []
        if msg.opponent is not None:
            bot, op = self.bot_seat(msg.opponent)
            extra.append(op)
            joins.append(JoinChange(1 - seat, bot))
        room = await self.open_match(variant, msg.rated, joins, seat, extra)
        room.follow(s)
        a.after_change(room)
        return room.match.snapshot(seat, room.spectators)

    async def seek(self, s: Session, msg: FindOpponent) -> Message:
        """Pair with a player already waiting for this variant, or wait for one."""
        a = self.arena
        other = a.seeks.get(msg.variant)
        if other is None or other.player_id == s.player_id or other.ws.state.name != "OPEN":
            a.seeks[msg.variant] = s
            return Seeking(variant=msg.variant)
        del a.seeks[msg.variant]
        joins = [JoinChange(0, self.seat_of(other)), JoinChange(1, self.seat_of(s))]
        room = await self.open_match(Variant.parse(msg.variant), True, joins, 0, [])
        room.follow(other)
        room.follow(s)
        other.send(room.match.snapshot(0, room.spectators))
        a.after_change(room)
        return room.match.snapshot(1, room.spectators)

    async def join(self, s: Session, msg: JoinMatch) -> None:
        """Take the open seat of a match and get its snapshot; it goes live and its clocks start."""
        a = self.arena
        room = a.room(msg.match_id)
        m = room.match
        async with room.lock:
            change = m.prepare_join(self.seat_of(s))
            await a.storage.write([op_join(m.match_id, change.seat, change.player.player_id, True)])
            room.send_all(m.commit(change))
            a.index_seats(room)
            for seat, who in enumerate(m.seats):  # an absent creator's grace period starts now
                if who is not None and who.bot is None and not a.sessions_of.get(who.player_id):
                    m.set_connected(seat, False)
            room.follow(s)
            s.send(m.snapshot(change.seat, room.spectators))
        a.after_change(room)
        a.announce(room)

    async def stored(self, msg: ListGames | FetchGame) -> Message:
        """Stored games for replay, read off the event loop from the database."""
        path = self.arena.storage.path
        if isinstance(msg, FetchGame):
            game = await afetch_game(path, msg.match_id)
            if game is None:
                raise UnknownMatchError(f"no stored game {msg.match_id!r}")
            return GameRecord(game=game_info(game))
        games = await alist_games(path, msg.limit, msg.offset, msg.status, msg.player, msg.variant)
        return GameList(games=[game_info(g) for g in games])

    # --- following ----------------------------------------------------------------------------

    def follow(self, s: Session, match_id: str, since: int | None) -> None:
        """Watch or re-sync a match: send the events after `since`, or a snapshot."""
        a = self.arena
        room = a.room(match_id)
        was = s in room.followers
        room.follow(s)
        seat = room.followers[s]
        missed = None if since is None else room.match.events_since(since)
        replies: list[Message] = [room.match.snapshot(seat, room.spectators)] if missed is None else list(missed)
        for reply in replies:
            s.send(reply)
        if not was:
            a.announce(room)

    async def leave(self, s: Session, match_id: str) -> None:
        """Stop following; a creator leaving its still-open match cancels it."""
        a = self.arena
        room = a.room(match_id)
        m = room.match
        seat = None if s.player_id is None else m.seat_of(s.player_id)
        if seat is not None and m.status == "open":
            async with room.lock:
                if m.status == "open":
                    await a.storage.write([op_cancel(m.match_id)])
                    a.drop_room(m.match_id)
                    room.cancel_timer()
                    log_event("match_cancelled", match=m.match_id)
        if room.unfollow(s):
            a.announce(room)

    async def end(self, s: Session, msg: Resign | ClaimWin) -> None:
        """Resign, or claim the win from an opponent away past the grace period."""
        a = self.arena
        room = a.room(msg.match_id)
        seat = a.seat(s, room)
        if isinstance(msg, Resign) and room.match.status == "open":
            await self.leave(s, msg.match_id)
            return
        async with room.lock:
            if a.closing:
                raise ShuttingDownError("the server is shutting down")
            m = room.match
            change = m.prepare_resign(seat) if isinstance(msg, Resign) else m.prepare_claim(seat)
            await a.finish(room, change)

    async def disconnect(self, s: Session) -> None:
        """A connection closed: drop its seeks and follows; its seats' grace periods start."""
        a = self.arena
        for variant, waiting in list(a.seeks.items()):
            if waiting is s:
                del a.seeks[variant]
        for match_id in list(s.following):
            room = a.rooms.get(match_id)
            if room is not None and room.unfollow(s):
                a.announce(room)
        pid = s.player_id
        if pid is None:
            return
        a.sessions_of[pid].discard(s)
        if a.sessions_of[pid]:
            return
        del a.sessions_of[pid]
        for room in a.rooms_of(pid):
            seat = room.match.seat_of(pid)
            if seat is not None and room.match.status == "live":
                room.match.set_connected(seat, False)
                a.announce(room)

"""The arena: every room and seek, and the durable path of each change.

Each change to a match follows one path under the room's lock: the sans-I/O `Match`
prepares it (or refuses it with a typed error), `store` commits it to storage and then to the
match, and `publish` updates the indexes, tells the actor and every follower (durable before
visible) and runs the after-change hooks. A change another node made reaches `publish` too.

The arena's collaborators are chosen once, at start-up: `identities` (the one writer of players),
`accounts` (the one writer of credentials and sign-in sessions), `presence` (who is connected),
`replication` (a server alone, or one node of a cluster: `server.core.replication`) and `bot_turns`.
The arena never asks which deployment runs.
"""

from __future__ import annotations

import asyncio
import hmac
import random
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.actions import Action
from protocol.errors import OutOfTurnError
from protocol.messages import Ack
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.core.accounts import Accounts
from server.core.arena_options import ArenaOptions
from server.core.bot_turns import BotTurns
from server.core.changes import (
    ArenaChange,
    CancelChange,
    CreateChange,
    end_of,
    explore_ops_of,
    ops_of,
    prepare_create,
)
from server.core.errors import (
    FuturePlyError,
    MatchExistsError,
    NotSeatedError,
    NotStartedError,
    ShuttingDownError,
    TimeOutError,
    UnknownMatchError,
)
from server.core.figures import Figures
from server.core.follower import Follower
from server.core.hosted import BotRunner
from server.core.identities import Identities
from server.core.match import ActionChange, Duplicate, EndChange, JoinChange, Match, Seat
from server.core.match_host import MatchHost
from server.core.passkeys import Passkeys
from server.core.passwords import Argon2Hasher, Passwords
from server.core.quotas import QuotaLimits, Quotas
from server.core.ratings import Rating, update_pair
from server.core.replication import Deployment, single_node
from server.core.rooms import Room
from server.core.sign_in_pace import PasswordPace
from server.core.sign_in_throttle import SignInThrottle
from server.core.tokens import new_id
from server.logs import event as log_event
from server.storage import ConflictError, Op, Storage
from server.storage.writer import op_rating

STALE_REFUSALS = (NotStartedError, OutOfTurnError, FuturePlyError)
"""Refusals a cluster node's copy may give only because another node's change has not reached it yet (a join, an
action): the node reads the match from the database once before it refuses (a server alone never needs to)."""


@dataclass(frozen=True, slots=True)
class SeekChange:
    """A player starts waiting for an opponent in `variant` (`waiting`), or stops (paired, or gone)."""

    variant: str
    session: Follower
    waiting: bool


class Arena:
    """All live state of the server, and the one path by which matches change."""

    def __init__(self, storage: Storage, bots: BotRunner, options: ArenaOptions,
                 deploy: Callable[[MatchHost], Deployment] = single_node,
                 wait_turn: Callable[[], Awaitable[None]] | None = None) -> None:
        self.storage = storage
        self.bots = bots
        self.options = options
        self.loop = asyncio.get_running_loop()
        self.rooms: dict[str, Room] = {}
        self.lingering: dict[str, None] = {}
        """Ids of the finished matches still in memory for late syncs, the longest finished first (at most
        `max_lingering`)."""
        self.identities = Identities(storage, self.write, options.max_cached_players)
        """Every known player, and the one writer of new ones."""
        deployment = deploy(self)
        self.replication = deployment.replication
        self.presence = deployment.presence
        counts = deployment.failure_counts
        self.accounts = Accounts(storage, self.write, self.identities,
                                 Passwords(Argon2Hasher(options.password_cost)),
                                 SignInThrottle(self.loop.time, options.sign_in_throttle, counts, "password"),
                                 SignInThrottle(self.loop.time, options.sign_in_throttle, counts, "code"),
                                 announce=self._sessions_ended,
                                 pace=PasswordPace(self.loop.time, options.sign_in_pace))
        """Accounts' credentials and sessions, and their one writer."""
        self.passkeys = Passkeys(storage, self.write, self.accounts, self.loop.time)
        """Accounts' passkeys (WebAuthn) and their pending challenges."""
        self.ratings: dict[str, tuple[Rating, int]] = {}
        self.rating_ends = asyncio.Lock()
        """Held by a rated end from reading its players' ratings until it stored their updates: two rated ends of one
        player at once each read what the other wrote (else one update would be lost)."""
        self.seeks: dict[str, Follower] = {}
        self.seated: defaultdict[str, dict[str, None]] = defaultdict(dict)
        """Player id -> ids of the rooms where it holds a seat, in the order it took them (the newest last)."""
        self.creating: set[str] = set()
        """Ids of the matches whose creation is being stored."""
        self.quotas = Quotas(QuotaLimits.of(options))
        self.quarantined = 0
        """Matches set aside at load because they could not be read back."""
        self.started = self.now()
        self.closing = False
        self.busy = 0
        self.actions = 0
        self.metrics = Figures()
        storage.on_commit = self.metrics.commit_seconds.observe
        self._tasks: set[asyncio.Task[Any]] = set()
        self.bot_turns = BotTurns(self.loop, bots, self.now, self.owns, lambda: self.closing, self.spawn, self.act,
                                  self.metrics, wait_turn)
        self.match_end_hooks: list[Callable[[Room, EndChange], None]] = []
        """Called once a match's end is published, here or from another node (events record their results)."""
        self.disconnect_hooks: list[Callable[[Follower], None]] = []
        """Called with each connection that closed (events forget what it followed)."""

    def _sessions_ended(self, session_ids: list[str]) -> None:
        """Tell the other servers of the deployment that accounts' sessions ended."""
        self.replication.sessions_ended(session_ids)

    def now(self) -> float:
        """The time source of every match: the injected clock, or the event loop's monotonic clock."""
        clock = self.options.clock
        return self.loop.time() if clock is None else clock()

    def owns(self, room: Room) -> bool:
        """Whether this server runs the match's clocks, hosted bots and expiry (a lone server runs all)."""
        return self.replication.owns(room.match.match_id)

    async def loaded_room(self, match_id: str) -> Room | None:
        """The room of a match in memory or, in a cluster, loaded as a copy; None if neither."""
        return self.rooms.get(match_id) or await self.replication.find(match_id)

    async def resume_matches(self) -> None:
        """Load the unfinished matches this server runs (all of them alone; a cluster node takes its share)."""
        await self.replication.resume()

    async def find_room(self, match_id: str) -> Room:
        """The room of an open, live or recently finished match (in a cluster, loaded from the database)."""
        room = self.rooms.get(match_id) or await self.replication.find(match_id)
        return room if room is not None else self.room(match_id)

    def call_at(self, when: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
        """Run `callback` when the arena's clock reads `when` (as measured by the loop from now)."""
        return self.loop.call_later(max(0.0, when - self.now()), callback)

    async def check_clocks(self) -> None:
        """Check every live match's flag now (after an injected clock moved on)."""
        for room in list(self.rooms.values()):
            await self.check_flag(room)

    def new_match(self, match_id: str, variant: Variant, rated: bool) -> Match:
        """A match wired to this arena's time source and grace period."""
        return Match(match_id, variant, self.now, rated=rated, grace_s=self.options.grace_s,
                     idle_s=self.options.idle_s)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background task that shutdown will cancel."""
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def load_room(self, room: Room) -> None:
        """Register a match read from the database (at start-up, or a cluster node's copy at a takeover or a first
        look-up): a load, not a change, so nothing is stored and nobody is told; the caller then arms its timers
        (`after_change`). Every change to the arena's rooms and seeks goes through `apply` or `apply_seek`."""
        self.add_room(room)

    def add_room(self, room: Room) -> None:
        """Register a room and index its seats by player."""
        self.rooms[room.match.match_id] = room
        self.index_seats(room)
        self.replication.watch(room.match.match_id)

    def index_seats(self, room: Room) -> None:
        """Note who holds a seat in `room` (after a join)."""
        for seat in room.match.seats:
            if seat is not None:
                self.seated[seat.player_id].setdefault(room.match.match_id)

    def drop_room(self, match_id: str) -> Room | None:
        """Forget a room and its seat index entries."""
        room = self.rooms.pop(match_id, None)
        self.lingering.pop(match_id, None)
        self.bot_turns.paces.pop(match_id, None)
        self.replication.unwatch(match_id)
        if room is not None:
            for seat in room.match.seats:
                if seat is not None:
                    ids = self.seated.get(seat.player_id)
                    if ids is not None:
                        ids.pop(match_id, None)
                        if not ids:
                            del self.seated[seat.player_id]
        return room

    def rooms_of(self, player_id: str) -> list[Room]:
        """The rooms where `player_id` holds a seat, the one it took last at the end."""
        return [self.rooms[m] for m in self.seated.get(player_id, ()) if m in self.rooms]

    def room(self, match_id: str) -> Room:
        """The room of an open, live or recently finished match."""
        room = self.rooms.get(match_id)
        if room is None:
            raise UnknownMatchError(f"no open or live match {match_id!r}")
        return room

    def bot_seat(self, bot: str) -> Seat:
        """The seat of a hosted bot; raises `UnknownBotError` for a bot this server cannot run."""
        bot = self.bots.check(bot)  # the canonical id: what is stored is what is read back
        return Seat("bot-" + bot.replace(":", "-"), "bot:" + bot, bot)

    def seat(self, session: Follower, room: Room) -> int:
        """The seat `session`'s identity holds in `room`; raises `NotSeatedError`."""
        seat = None if session.player_id is None else room.match.seat_of(session.player_id)
        if seat is None:
            raise NotSeatedError("you hold no seat in this match")
        return seat

    async def current_seat(self, session: Follower, room: Room) -> int:
        """The seat `session`'s identity holds in `room`; a copy that knows of none reads the match again first (in
        a cluster the seat may have been taken on another node, whose notice is on its way); raises
        `NotSeatedError`. A copy that knows both seats answers from memory: seats never change hands."""
        try:
            return self.seat(session, room)
        except NotSeatedError:
            if None not in room.match.seats:
                raise
            async with room.lock:
                await self.replication.conflict(room)  # a server alone has nothing to read
            return self.seat(session, room)

    # --- the one change path ---------------------------------------------------------------

    def rating_updates(self, room: Room, end: EndChange) -> list[tuple[str, Rating, int]]:
        """The Glicko-2 updates a rated match's end brings, as (player id, new rating, games)."""
        m = room.match
        s0, s1 = m.seats
        if not m.rates(end) or s0 is None or s1 is None:
            return []
        (r0, g0), (r1, g1) = (self.ratings.get(s.player_id, (Rating(), 0)) for s in (s0, s1))
        n0, n1 = update_pair(r0, r1, seat_score(end.winner))
        return [(s0.player_id, n0, g0 + 1), (s1.player_id, n1, g1 + 1)]

    def refuse_if_closing(self) -> None:
        """Raise `ShuttingDownError` once the server has begun to stop."""
        if self.closing:
            raise ShuttingDownError("the server is shutting down")

    async def write(self, ops: list[Op]) -> None:
        """Store `ops` as one durable write, counted as work in flight; refused while closing."""
        self.refuse_if_closing()
        self.busy += 1
        try:
            await self.storage.write(ops)
        finally:
            self.busy -= 1

    async def apply(self, room: Room, change: ArenaChange, actor: Follower | None = None,
                    follow: Follower | None = None) -> None:
        """The one path of every change made here (the caller holds the room's lock, a new room's is free):
        `store`; the other servers are told (a new match is this one's from then on); then `publish` (the
        actor's ack first; `follow` added as a follower after the events, its caller sending it the snapshot
        that holds them)."""
        logged, updates = await self.store(room, change)
        self.replication.stored(room, change)
        self.publish(room, change, logged, updates, actor, follow)
        if isinstance(change, ActionChange):  # its followers here had it then (another node's: bus_follower_seconds)
            self.metrics.local_follower_seconds.observe(self.now() - change.at)

    async def store(self, room: Room, change: ArenaChange) -> tuple[int, list[tuple[str, Rating, int]]]:
        """Refuse while closing; store the change (with the ratings an end brings, and what the deployment adds)
        as one durable write; commit it to the match. How many events it logged, and the rating updates stored."""
        end = end_of(change)
        if end is None or not room.match.rates(end):
            return await self._store(room, change, [])
        async with self.rating_ends:
            self.ratings.update(await self.replication.fresh_ratings([s.player_id for s in room.match.seats if s]))
            updates = self.rating_updates(room, end)
            stored = await self._store(room, change, updates)
            for pid, rating, games in updates:
                self.ratings[pid] = (rating, games)
            return stored

    async def _store(self, room: Room, change: ArenaChange,
                     updates: list[tuple[str, Rating, int]]) -> tuple[int, list[tuple[str, Rating, int]]]:
        """Store the change with the rating updates its end brings as one durable write and commit it to the match."""
        m = room.match
        ops = ops_of(m, change) + [op_rating(pid, r.rating, r.rd, r.volatility, g) for pid, r, g in updates]
        ops += explore_ops_of(m, change, self.ratings)  # the game's moves in the explorer, with its end
        try:
            await self.write(self.replication.guards(room, change, updates) + ops)
        except ConflictError:
            if not isinstance(change, CreateChange):
                await self.replication.conflict(room)
            raise
        logged = 0 if isinstance(change, CreateChange | CancelChange) else m.commit_logged(change)
        if isinstance(change, ActionChange):
            self.actions += 1  # counted where it was stored (each node's copy publishes it too)
        return logged, updates

    def publish(self, room: Room, change: ArenaChange, logged: int,
                updates: Sequence[tuple[str, Rating, int]] = (), actor: Follower | None = None,
                follow: Follower | None = None) -> None:
        """After a change was stored and committed to the match (here, or by another node), which logged the match's
        last `logged` events: the indexes, quotas, ratings and logs; the events to every follower; then clocks, bots
        and expiry."""
        m = room.match
        end = end_of(change)
        if isinstance(change, CreateChange):
            self.add_room(room)
            for step in change.steps:
                if isinstance(step, JoinChange) and step.player.bot is not None:
                    self.identities.note_bot(step.player)
            log_event("match_created", match=m.match_id, variant=m.variant.text(),
                      players=[s.player_id for s in m.seats if s is not None])
        elif isinstance(change, JoinChange):
            self.index_seats(room)
            self.quotas.release(m.match_id)
            self.presence.announce(room)  # who is connected, now that both seats are known
        elif isinstance(change, CancelChange):
            self.drop_room(m.match_id)
            self.quotas.release(m.match_id)
            room.cancel_timer()
            log_event("match_cancelled", match=m.match_id)
            return
        if end is not None:
            self.quotas.release(m.match_id)
        for pid, rating, games in updates:
            self.ratings[pid] = (rating, games)
        if end is not None:
            log_event("match_finished", match=m.match_id, reason=end.reason, result=end.result,
                      winner_seat=end.winner, ply=m.ply)
        first = None
        if actor is not None and isinstance(change, ActionChange):
            first = (actor, m.ack_text(change.ply, m.seq - logged + 1))  # the action's event, the first it logged
        room.send_texts(m.logged_texts(logged), first)  # each event encoded once, when the match logged it
        if follow is not None:  # after the events: its first message is the snapshot its caller sends, which holds them
            room.follow(follow)
        self.after_change(room)
        if end is not None:
            for hook in self.match_end_hooks:
                hook(room, end)

    async def act(self, room: Room, seat: int, action: Action, ply: int, actor: Follower | None) -> None:
        """Validate, store, apply and publish one action; the actor gets its ack first (a resent one: its ack
        again, marked duplicate). A clock that ran out ends the match on time instead (`TimeOutError`)."""
        m = room.match
        flagged, again = False, False

        def prepare() -> ArenaChange | None:
            """The flag if the clock ran out, else the action (None: a resent action, acknowledged again); prepared
            again, on a match still held here."""
            nonlocal flagged, again
            self.refuse_if_closing()
            if again:
                self.check_held(room)
            again = True
            flag = m.prepare_flag()
            flagged = flag is not None
            if flag is not None:
                return flag
            change = m.prepare_action(seat, action, ply)
            if isinstance(change, Duplicate):
                if actor is not None:
                    actor.send(Ack(match_id=m.match_id, ply=change.ply, seq=change.seq, duplicate=True))
                return None
            return change

        async with room.lock:
            await self.retry(room, prepare, actor=actor)
            if flagged:
                raise TimeOutError("your time has run out")

    async def retry(self, room: Room, prepare: Callable[[], ArenaChange | None], actor: Follower | None = None,
                    follow: Follower | None = None) -> None:
        """Prepare and apply a change (the caller holds the room's lock; None from `prepare`: nothing to apply). In
        a cluster, a change another node beat, or one a copy refuses for a state another node may have changed
        (`STALE_REFUSALS`, after reading the match once), is prepared again on the match as stored, which may
        refuse it with a typed error; a change prepared again for a match that left this server meanwhile is
        `unknown_match`."""
        retries, reread = self.replication.retries, False
        for attempt in range(retries):
            try:
                change = prepare()
                if change is None:
                    return
                if attempt:
                    self.check_held(room)
                await self.apply(room, change, actor, follow)
                return
            except ConflictError:  # another node stored a change first: prepare again on what it stored
                if attempt == retries - 1:
                    raise
            except STALE_REFUSALS:  # maybe only this copy's view: read the match, then prepare again
                if attempt == retries - 1 or reread:
                    raise
                reread = True
                await self.replication.conflict(room)

    def held(self, room: Room) -> bool:
        """Whether `room` is still this server's room of its match (not cancelled or set aside, maybe as read from
        the database after another node stored a change first)."""
        return self.rooms.get(room.match.match_id) is room

    def check_held(self, room: Room) -> None:
        """Refuse a change to a match that left this server meanwhile (`unknown_match`)."""
        if not self.held(room):
            raise UnknownMatchError(f"no open or live match {room.match.match_id!r}")

    async def create(self, variant: Variant, rated: bool, creator_seat: int, seats: list[tuple[int, Seat]],
                     opening: list[Action] | None = None, match_id: str | None = None,
                     follow: Follower | None = None, pace_s: float = 0.0,
                     creator: tuple[str, str] | None = None) -> Room:
        """Open a new match with its first players (and an opening played), stored before it is visible.

        `pace_s` holds each hosted bot's move until that long after its turn began (paced exhibitions);
        `creator` is the network and the address of the client opening it to anyone (stored while it is open).
        """
        match_id = match_id or new_id("m")
        if self.id_taken(match_id):
            raise MatchExistsError(f"match {match_id!r} already exists")
        match = self.new_match(match_id, variant, rated)
        room = Room(match)
        change = prepare_create(match, creator_seat, seats, opening or [], creator)
        self.creating.add(match_id)
        try:
            await self.apply(room, change, follow=follow)
        except ConflictError:
            raise MatchExistsError(f"match {match_id!r} already exists") from None
        finally:
            self.creating.discard(match_id)
        if pace_s > 0:  # before the first bot turn, which apply only scheduled, looks it up
            self.bot_turns.paces[match_id] = pace_s
        return room

    def id_taken(self, match_id: str) -> bool:
        """Whether a match in memory, or one being created, has this id (stored ones are refused on write)."""
        return match_id in self.rooms or match_id in self.creating

    # --- after each change: clocks, bots, eviction ----------------------------------------------

    def after_change(self, room: Room) -> None:
        """Arm the flag timer, start a hosted bot's turn, or schedule a finished match's eviction."""
        room.cancel_timer()
        m = room.match
        if m.status == "finished":
            if room.finished_at is None:
                room.finished_at = self.now()
                room.timer = self.loop.call_later(self.options.linger_s, lambda: self.evict(m.match_id))
                self.lingering[m.match_id] = None
                while len(self.lingering) > self.options.max_lingering:  # the longest finished leaves first
                    oldest = next(iter(self.lingering))
                    if (gone := self.rooms.get(oldest)) is not None:
                        gone.cancel_timer()
                    self.evict(oldest)
                    self.lingering.pop(oldest, None)
            return
        if not self.owns(room):
            return
        if m.status == "open":
            room.timer = self.loop.call_later(self.options.open_ttl_s, lambda: self.spawn(self.expire(room)))
            return
        deadline = m.deadline()
        if deadline is not None:
            room.timer = self.call_at(deadline + 0.002, lambda: self.spawn(self.check_flag(room)))
        self.bot_turns.maybe(room)

    async def expire(self, room: Room) -> None:
        """Cancel an open match that waited too long for an opponent."""
        async with room.lock:
            if room.match.status == "open" and room.match.match_id in self.rooms and not self.closing:
                log_event("match_expired", match=room.match.match_id)
                await self.retry(room, lambda: CancelChange() if room.match.status == "open" and self.held(room)
                                 else None)

    def is_operator(self, token: str | None) -> bool:
        """Whether `token` is the operator's secret (compared in constant time)."""
        secret = self.options.operator_token
        return secret is not None and token is not None and hmac.compare_digest(token.encode(), secret.encode())

    def evict(self, match_id: str) -> None:
        """Forget a finished match (it stays in the database)."""
        room = self.drop_room(match_id)
        if room is not None:
            for session in list(room.followers):
                room.unfollow(session)

    async def check_flag(self, room: Room) -> None:
        """End the match on time if the running clock has run out."""
        async with room.lock:
            if self.closing:
                return
            await self.retry(room, room.match.prepare_flag)
            if room.match.status == "live":
                self.after_change(room)

    # --- shutdown -----------------------------------------------------------------------------

    async def drain(self, timeout: float = 10.0) -> None:
        """Refuse new changes, wait for the ones being stored, stop timers and bots."""
        self.closing = True
        for room in self.rooms.values():
            room.cancel_timer()
        await self.replication.handover()
        deadline = self.now() + timeout
        while self.busy and self.now() < deadline:
            await asyncio.sleep(0.01)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- connections and seeks -------------------------------------------------------------------

    def connect(self, session: Follower) -> list[str]:
        """A session said hello: its connection is noted; the ids of the unfinished matches where it holds a seat."""
        return self.presence.connect(session)

    def apply_seek(self, change: SeekChange) -> None:
        """The one path of every change to the seeks: the deployment stores it (a cluster's shared queue, where
        other nodes pair with it; a lone server stores nothing), then this server's seeks show it."""
        variant, session = change.variant, change.session
        waiting = self.seeks.get(variant)
        if change.waiting:
            self.refuse_if_closing()
            if waiting is not None and waiting is not session:
                self.replication.unseek(variant, waiting)  # replaced (gone, or the same player again)
            self.replication.seek(variant, session)
            self.seeks[variant] = session
        else:
            self.replication.unseek(variant, session)
            if waiting is session:
                del self.seeks[variant]

    def disconnect(self, session: Follower) -> None:
        """A connection closed: drop its seeks and follows; its seats' grace periods start."""
        for variant, waiting in list(self.seeks.items()):
            if waiting is session:
                self.apply_seek(SeekChange(variant, session, waiting=False))
        for match_id in list(session.following):
            room = self.rooms.get(match_id)
            if room is not None and room.unfollow(session):
                self.presence.announce(room)
        self.presence.disconnect(session)
        for hook in self.disconnect_hooks:
            hook(session)

    def paired_elsewhere(self, player_id: str, match_id: str) -> None:
        """Another node gave a player waiting here a seat in `match_id`: it stops waiting, follows the match
        and gets its snapshot."""
        for variant, waiting in list(self.seeks.items()):
            if waiting.player_id == player_id:
                self.apply_seek(SeekChange(variant, waiting, waiting=False))
                self.spawn(self._seated(waiting, match_id))

    async def _seated(self, session: Follower, match_id: str) -> None:
        """Send a player paired by another node its new match (its first message of the match)."""
        room = await self.find_room(match_id)
        room.follow(session)
        session.send(room.match.snapshot(room.match.seat_of(session.player_id or ""), room.spectators))

    def pick_seat(self, choice: str) -> int:
        """Seat 0 (South) or 1 (North) for a creator's choice."""
        return {"south": 0, "north": 1}.get(choice, random.randrange(2))

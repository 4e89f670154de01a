"""The arena: every room, identity and seek, and the durable path of each change.

Each change to a match follows one path under the room's lock: the sans-I/O `Match`
prepares it (or refuses it with a typed error), storage commits it, the match commits it,
then the actor gets its ack and every follower the new events (durable before visible).
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from protocol.actions import Action, parse_action
from protocol.messages import Ack, MatchEvent
from protocol.variant import Variant
from server.errors import NotSeatedError, ShuttingDownError, TimeOutError, UnknownMatchError
from server.hosted import BotRunner, budget
from server.logs import event as log_event
from server.match import ActionChange, Change, Duplicate, EndChange, JoinChange, Match, Seat
from server.ratings import Rating, update_pair
from server.rooms import Room
from server.session import Session
from server.storage import Op, Storage, StoredMatch, StoredPlayer
from server.storage.writer import op_action, op_finish, op_rating


@dataclass
class ArenaOptions:
    """Tunable behaviour of the arena (the server passes its keyword options here)."""

    grace_s: float = 60.0
    """How long a disconnected player may stay away before the opponent can claim the win."""
    linger_s: float = 300.0
    """How long a finished match stays in memory for late syncs."""
    max_list: int = 500
    """Most matches in one listing."""
    clock: Callable[[], float] | None = None
    """The time source of every match (default: the event loop's monotonic clock); tests inject one."""


class Arena:
    """All live state of the server, and the one path by which matches change."""

    def __init__(self, storage: Storage, bots: BotRunner, options: ArenaOptions) -> None:
        self.storage = storage
        self.bots = bots
        self.options = options
        self.loop = asyncio.get_running_loop()
        self.rooms: dict[str, Room] = {}
        self.players: dict[str, StoredPlayer] = {}
        self.ratings: dict[str, tuple[Rating, int]] = {}
        self.sessions_of: defaultdict[str, set[Session]] = defaultdict(set)
        self.seeks: dict[str, Session] = {}
        self.seated: defaultdict[str, set[str]] = defaultdict(set)
        """Player id -> ids of the rooms where it holds a seat."""
        self.closing = False
        self.busy = 0
        self.actions = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    def now(self) -> float:
        """The time source of every match: the injected clock, or the event loop's monotonic clock."""
        clock = self.options.clock
        return self.loop.time() if clock is None else clock()

    def call_at(self, when: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
        """Run `callback` when the arena's clock reads `when` (as measured by the loop from now)."""
        return self.loop.call_later(max(0.0, when - self.now()), callback)

    async def check_clocks(self) -> None:
        """Check every live match's flag now (after an injected clock moved on)."""
        for room in list(self.rooms.values()):
            await self.check_flag(room)

    def new_match(self, match_id: str, variant: Variant, rated: bool) -> Match:
        """A match wired to this arena's time source and grace period."""
        return Match(match_id, variant, self.now, rated=rated, grace_s=self.options.grace_s)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background task that shutdown will cancel."""
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def add_room(self, room: Room) -> None:
        """Register a room and index its seats by player."""
        self.rooms[room.match.match_id] = room
        self.index_seats(room)

    def index_seats(self, room: Room) -> None:
        """Note who holds a seat in `room` (after a join)."""
        for seat in room.match.seats:
            if seat is not None:
                self.seated[seat.player_id].add(room.match.match_id)

    def drop_room(self, match_id: str) -> Room | None:
        """Forget a room and its seat index entries."""
        room = self.rooms.pop(match_id, None)
        if room is not None:
            for seat in room.match.seats:
                if seat is not None:
                    ids = self.seated.get(seat.player_id)
                    if ids is not None:
                        ids.discard(match_id)
                        if not ids:
                            del self.seated[seat.player_id]
        return room

    def rooms_of(self, player_id: str) -> list[Room]:
        """The rooms where `player_id` holds a seat."""
        return [self.rooms[m] for m in self.seated.get(player_id, ()) if m in self.rooms]

    def room(self, match_id: str) -> Room:
        """The room of an open, live or recently finished match."""
        room = self.rooms.get(match_id)
        if room is None:
            raise UnknownMatchError(f"no open or live match {match_id!r}")
        return room

    def seat(self, session: Session, room: Room) -> int:
        """The seat `session`'s identity holds in `room`; raises `NotSeatedError`."""
        seat = None if session.player_id is None else room.match.seat_of(session.player_id)
        if seat is None:
            raise NotSeatedError("you hold no seat in this match")
        return seat

    def connected(self, room: Room) -> tuple[bool, bool]:
        """Whether each seat's player has a connection (hosted bots always do)."""
        out = []
        for seat in room.match.seats:
            out.append(seat is not None and (seat.bot is not None or bool(self.sessions_of.get(seat.player_id))))
        return out[0], out[1]

    def announce(self, room: Room) -> None:
        """Send the room's presence (spectators, connected seats) to its followers."""
        room.send_all([room.presence(self.connected(room))])

    # --- resume -----------------------------------------------------------------------

    async def load(self) -> None:
        """Load identities and ratings, and rebuild every unfinished match from its stored actions."""
        self.players = {p.player_id: p for p in await self.storage.players()}
        for pid, (rating, rd, vol, games) in (await self.storage.ratings()).items():
            self.ratings[pid] = (Rating(rating, rd, vol), games)
        for stored in await self.storage.unfinished():
            room = Room(self.rebuild(stored))
            self.add_room(room)
            self.after_change(room)
            log_event("match_resumed", match=stored.match_id, ply=room.match.ply, status=room.match.status)

    def rebuild(self, stored: StoredMatch) -> Match:
        """A match replayed from storage: same seats, events and numbers as before; clocks as stored."""
        match = self.new_match(stored.match_id, Variant.parse(stored.variant), stored.rated)
        for seat in (stored.creator_seat, 1 - stored.creator_seat):
            holder = stored.seats[seat]
            if holder is not None and holder in self.players:
                p = self.players[holder]
                match.commit(JoinChange(seat, Seat(holder, p.name, p.bot)))
        now = self.now()
        for ply, seat, token, ms0, ms1 in stored.actions:
            match.commit(ActionChange(seat, parse_action(token), ply, (ms0, ms1), now))
        if stored.end is not None:
            result, winner, reason = stored.end
            match.commit(EndChange(reason, winner, result))
            return match
        if stored.actions:
            match.restore_clocks(stored.actions[-1][3:5])
        for seat, who in enumerate(match.seats):
            if who is not None and who.bot is None:
                match.set_connected(seat, False)
        return match

    async def room_or_stored(self, match_id: str) -> Room:
        """The room of a match in memory, or a finished one read back from storage (kept a while)."""
        room = self.rooms.get(match_id)
        if room is not None:
            return room
        stored = await self.storage.stored_match(match_id)
        if stored is None or stored.status != "finished" or match_id in self.rooms:
            return self.room(match_id)
        room = Room(self.rebuild(stored))
        self.add_room(room)
        self.after_change(room)
        return room

    # --- the durable path -------------------------------------------------------------------

    def end_ops(self, room: Room, end: EndChange) -> tuple[list[Op], list[tuple[str, Rating, int]]]:
        """Statements that store the end of a match, and the rating updates they carry."""
        m = room.match
        ops = [op_finish(m.match_id, end.result, end.winner, end.reason)]
        updates: list[tuple[str, Rating, int]] = []
        s0, s1 = m.seats
        if m.rated and s0 is not None and s1 is not None:
            (r0, g0), (r1, g1) = (self.ratings.get(s.player_id, (Rating(), 0)) for s in (s0, s1))
            score = 0.5 if end.winner is None else 1.0 if end.winner == 0 else 0.0
            n0, n1 = update_pair(r0, r1, score)
            updates = [(s0.player_id, n0, g0 + 1), (s1.player_id, n1, g1 + 1)]
            ops += [op_rating(pid, r.rating, r.rd, r.volatility, g) for pid, r, g in updates]
        return ops, updates

    async def store_and_commit(self, room: Room, change: Change, ops: list[Op]) -> list[MatchEvent]:
        """Store `ops`, then commit `change` (the caller holds the room's lock), and publish."""
        updates: list[tuple[str, Rating, int]] = []
        end = change if isinstance(change, EndChange) else getattr(change, "end", None)
        if end is not None:
            more, updates = self.end_ops(room, end)
            ops = ops + more
        self.busy += 1
        try:
            await self.storage.write(ops)
        finally:
            self.busy -= 1
        events = room.match.commit(change)
        for pid, rating, games in updates:
            self.ratings[pid] = (rating, games)
        if end is not None:
            log_event("match_finished", match=room.match.match_id, reason=end.reason, result=end.result,
                      winner_seat=end.winner, ply=room.match.ply)
        return events

    async def act(self, room: Room, seat: int, action: Action, ply: int, actor: Session | None) -> None:
        """Validate, store, apply and publish one action; the actor gets its ack first."""
        m = room.match
        async with room.lock:
            if self.closing:
                raise ShuttingDownError("the server is shutting down")
            flag = m.prepare_flag()
            if flag is not None:
                room.send_all(await self.store_and_commit(room, flag, []))
                self.after_change(room)
                raise TimeOutError("your time has run out")
            change = m.prepare_action(seat, action, ply)
            if isinstance(change, Duplicate):
                if actor is not None:
                    actor.send(Ack(match_id=m.match_id, ply=change.ply, seq=change.seq, duplicate=True))
                return
            op = op_action(m.match_id, change.ply, seat, action.token(), change.clocks_ms)
            events = await self.store_and_commit(room, change, [op])
            self.actions += 1
            ack = Ack(match_id=m.match_id, ply=change.ply, seq=events[0].seq)
            room.send_all(events, None if actor is None else (actor, ack))
            self.after_change(room)

    async def finish(self, room: Room, end: EndChange) -> None:
        """Store and publish the end of a match (the caller holds the lock)."""
        room.send_all(await self.store_and_commit(room, end, []))
        self.after_change(room)

    # --- after each change: clocks, bots, eviction ----------------------------------------------

    def after_change(self, room: Room) -> None:
        """Arm the flag timer, start a hosted bot's turn, or schedule a finished match's eviction."""
        room.cancel_timer()
        m = room.match
        if m.status == "finished":
            if room.finished_at is None:
                room.finished_at = self.now()
                room.timer = self.loop.call_later(self.options.linger_s, lambda: self.evict(m.match_id))
            return
        deadline = m.deadline()
        if deadline is not None:
            room.timer = self.call_at(deadline + 0.002, lambda: self.spawn(self.check_flag(room)))
        self.maybe_bot(room)

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
            end = room.match.prepare_flag()
            if end is not None:
                await self.finish(room, end)
            elif room.match.status == "live":
                self.after_change(room)

    def maybe_bot(self, room: Room) -> None:
        """If a hosted bot is to move, let it think (once at a time)."""
        seat = room.match.seat_to_move()
        if seat is None or room.bot_busy or self.closing:
            return
        who = room.match.seats[seat]
        if who is None or who.bot is None:
            return
        room.bot_busy = True
        self.spawn(self.bot_turn(room, seat, who.bot))

    async def bot_turn(self, room: Room, seat: int, bot: str) -> None:
        """One hosted-bot action, chosen off the event loop within the bot's clock."""
        m = room.match
        ply = m.ply
        try:
            think = budget(m.variant.time_control, m.clocks.left(seat, self.now()))
            action = await self.bots.choose(bot, m.position, think)
            await self.act(room, seat, action, ply, None)
        except Exception as exc:
            log_event("bot_failed", match=m.match_id, bot=bot, error=repr(exc))
        finally:
            room.bot_busy = False
        if m.status == "live" and m.ply != ply:
            self.maybe_bot(room)

    # --- shutdown -----------------------------------------------------------------------------

    async def drain(self, timeout: float = 10.0) -> None:
        """Refuse new changes, wait for the ones being stored, stop timers and bots."""
        self.closing = True
        for room in self.rooms.values():
            room.cancel_timer()
        deadline = self.now() + timeout
        while self.busy and self.now() < deadline:
            await asyncio.sleep(0.01)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def pick_seat(self, choice: str) -> int:
        """Seat 0 (South) or 1 (North) for a creator's choice."""
        return {"south": 0, "north": 1}.get(choice, random.randrange(2))

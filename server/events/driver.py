"""The events on a running server: requests, storage, starting paired games as matches, reacting to their ends.

The only module of `server.events` that does I/O. Each change to an event runs under the event's
lock: the state machine is asked (on a copy), the change is stored (a round's pairings in one
write, before their matches exist), the copy becomes the event, then its matches are created
under the pairings' ids and the followers get the new `event_state`. A match whose end the
arena reports (`Arena.match_end_hooks`) is looked up by its id, `EVENT-rROUND-tTABLE`. At
start-up every open or running event is loaded; a pairing whose match was stored finished
gets its result, one whose match was never created gets it now (under the same id, so never
twice). Events are run by one server; in a cluster each node runs the events it loaded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from protocol.errors import (
    BadEventError,
    EventStartedError,
    KalahError,
    MatchExistsError,
    NotEligibleError,
    TooManyError,
    UnknownEventError,
)
from protocol.event_messages import (
    CreateEvent,
    EventList,
    FetchEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
)
from protocol.messages import Message, encode
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.arena import Arena
from server.events.event import EntrantKind, Event, EventStatus
from server.events.records import Pairing
from server.events.view import state, summary
from server.identity import BOT_PREFIX, ENGINE_PREFIX, new_id
from server.logs import event as log_event
from server.match import EndChange, Seat
from server.ratings import Rating
from server.rooms import Room
from server.session import Session
from server.storage import Op
from server.storage.events import (
    load_event,
    load_unfinished,
    op_entrant,
    op_entrant_out,
    op_event,
    op_event_status,
    op_pairing_result,
    op_pairings,
    op_seeds,
    recent_events,
)

MAX_EVENTS_PER_PLAYER = 3
"""Open or running events one identity may have created."""
MAX_LIVE_EVENTS = 200
"""Open or running events on one server."""
MAX_FOLLOWED = 8
"""Events one connection may follow."""
PUSH_INTERVAL_S = 1.0
"""A follower gets an event's state at most once in this time (changes close together are sent once)."""
RANDOM_BOT = "bot:random"


class EventDriver:
    """Every open and running event of this server, with its followers and timers."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.events: dict[str, Event] = {}
        self.seq: dict[str, int] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.followers: dict[str, set[Session]] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.ended: dict[str, list[tuple[str, float]]] = {}
        """Event id -> results of its games not recorded yet (match id, score for south)."""
        self.to_push: dict[str, tuple[Event, set[Session]]] = {}
        """Event id -> its latest state not sent yet, and to whom."""
        self.push_due: dict[str, asyncio.TimerHandle] = {}
        self.pushed_at: dict[str, float] = {}
        arena.match_end_hooks.append(self.match_ended)

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handler of each event request."""
        return {ListEvents: self.list_events, FetchEvent: self.fetch, CreateEvent: self.create,
                JoinEvent: self.join, LeaveEvent: self.leave}

    # --- start-up and shutdown -------------------------------------------------------------------

    async def load(self) -> None:
        """Load every open or running event and bring each up to date with its matches."""
        events, bad = await load_unfinished(self.arena.storage)
        for aside in bad:
            log_event("event_unreadable", event_id=aside.event_id, reason=aside.reason[:500], level=30)
        for event in events:
            self._add(event)
        for event in events:
            await self.recover(event)

    async def recover(self, event: Event) -> None:
        """After a restart: results of matches that ended meanwhile, matches never created, the timers."""
        async with self.locks[event.event_id]:
            for p in event.live():
                assert p.match_id is not None
                if p.match_id in self.arena.rooms:
                    continue
                stored = await self.arena.storage.stored_match(p.match_id)
                if stored is None:
                    await self._start_matches(event, [p])
                elif stored.end is not None:
                    await self._record(event, [(p.match_id, seat_score(stored.end[1]))])
            if event.status is EventStatus.OPEN or event.status is EventStatus.RUNNING:
                self._arm(event)

    def _add(self, event: Event) -> None:
        """Keep an event in memory."""
        self.events[event.event_id] = event
        self.seq.setdefault(event.event_id, 0)
        self.locks.setdefault(event.event_id, asyncio.Lock())
        self.followers.setdefault(event.event_id, set())

    # --- requests -------------------------------------------------------------------------------

    async def list_events(self, s: Session, msg: ListEvents) -> list[Message]:
        """The open and running events, then the latest others, newest first."""
        live = sorted(self.events.values(), key=lambda e: -e.created_at)
        shown = [summary(e) for e in live if msg.status in (None, e.status.value)][: msg.limit]
        if len(shown) < msg.limit and msg.status not in ("open", "running"):
            rows = await recent_events(self.arena.storage, msg.limit + len(live))
            s.peer.reads.charge(len(rows))
            for event_id, _, status, _ in rows:
                if len(shown) >= msg.limit:
                    break
                if event_id in self.events or msg.status not in (None, status):
                    continue
                try:
                    stored = await load_event(self.arena.storage, event_id)
                except Exception as exc:  # an unreadable row is reported and skipped
                    log_event("event_unreadable", event_id=event_id, reason=str(exc)[:500], level=30)
                    continue
                if stored is not None:
                    shown.append(summary(stored))
        return [EventList(events=shown)]

    async def fetch(self, s: Session, msg: FetchEvent) -> list[Message]:
        """An event's state; `follow` adds the connection to its followers (false removes it)."""
        event = await self._find(s, msg.event_id)
        followers = self.followers.get(msg.event_id)
        if followers is not None:
            if msg.follow and s not in followers:
                if sum(s in f for f in self.followers.values()) >= MAX_FOLLOWED:
                    raise TooManyError(f"this connection follows {MAX_FOLLOWED} events already: unfollow one first")
                followers.add(s)
            elif not msg.follow:
                followers.discard(s)
            async with self.locks[msg.event_id]:  # not between a change and its write
                return [state(event, self.seq.get(event.event_id, 0))]
        return [state(event, self.seq.get(event.event_id, 0))]

    async def create(self, s: Session, msg: CreateEvent) -> list[Message]:
        """Open an event (its creator follows it), entering the hosted bots it names."""
        a = self.arena
        a.refuse_if_closing()
        settings = msg.settings
        Variant.parse(settings.variant)
        if settings.start_at is not None and settings.start_at < time.time() - 60:
            raise BadEventError("event start_at is in the past: give a UNIX time to come, or none")
        if len(msg.bots) > settings.max_entrants:
            raise BadEventError(f"event: {len(msg.bots)} bots are more than max_entrants ({settings.max_entrants})")
        assert s.name is not None
        mine = sum(e.creator == s.name for e in self.events.values())
        if mine >= MAX_EVENTS_PER_PLAYER:
            raise TooManyError(f"you have {MAX_EVENTS_PER_PLAYER} open or running events: wait for one to end")
        if len(self.events) >= MAX_LIVE_EVENTS:
            raise TooManyError("the server runs as many events as it may: try again later")
        event = Event(new_id("e"), settings, s.name, time.time())
        bots = [a.bot_seat(bot).name for bot in msg.bots]  # unknown bots are refused before anything is stored
        for name in bots:
            event.join(name, EntrantKind.BOT)
        await a.write([op_event(event), *(op_entrant(event.event_id, event.entrants[n]) for n in bots)])
        self._add(event)
        self.followers[event.event_id].add(s)
        log_event("event_created", event_id=event.event_id, kind=settings.kind.value, creator=s.name)
        async with self.locks[event.event_id]:
            await self._maybe_start(event)
            self._arm(event)
        return [state(event, self.seq.get(event.event_id, 0))]

    async def join(self, s: Session, msg: JoinEvent) -> list[Message]:
        """Enter the sender (or, for the creator, a hosted bot); the sender follows the event."""
        if msg.event_id not in self.events and await load_event(self.arena.storage, msg.event_id) is not None:
            raise EventStartedError(f"event {msg.event_id} has ended: look up its results with event")
        event = self._live(msg.event_id)
        name, kind = self._entrant(s, event, msg.bot)
        sanity = kind is EntrantKind.ENGINE and event.settings.sanity_games > 0
        wins = await self._wins_against_random(name) if sanity else 0
        async with self.locks[event.event_id]:
            event = self._live(msg.event_id)
            event.check_entry(name, kind, wins)
            await self._apply(event, lambda e: e.join(name, kind, wins),
                              lambda e: [op_entrant(e.event_id, e.entrants[name])])
            if msg.bot is None:
                self.followers.get(event.event_id, set()).add(s)
            await self._maybe_start(event)
        return [state(event, self.seq.get(event.event_id, 0))]

    async def leave(self, s: Session, msg: LeaveEvent) -> list[Message]:
        """Leave (or take a hosted bot out): off the list before the start, not paired again after it."""
        event = self._live(msg.event_id)
        name, _ = self._entrant(s, event, msg.bot)
        async with self.locks[event.event_id]:
            event = self._live(msg.event_id)
            if name not in event.entrants:
                raise NotEligibleError(f"{name} is not entered in event {event.event_id}")
            before = event.status is EventStatus.OPEN

            def change(e: Event) -> list[Pairing]:
                e.leave(name)
                return []

            def ops(e: Event) -> list[Op]:
                return [op_entrant_out(e.event_id, name) if before else op_entrant(e.event_id, e.entrants[name])]

            await self._apply(event, change, ops)
        return [state(event, self.seq.get(event.event_id, 0))]

    # --- the change path ---------------------------------------------------------------------------

    async def _apply(self, event: Event, change: Callable[[Event], list[Pairing]],
                     ops: Callable[[Event], list[Op]]) -> list[Pairing]:
        """Run `change`, store what it did (with any new pairings, in one write), start the new pairings' matches
        and tell the followers (the caller holds the event's lock, so no one reads the event before it is
        stored). If the write fails the event is read back as stored."""
        status = event.status
        fresh = change(event)
        extra = op_pairings(event.event_id, fresh) if fresh else []
        changed_status = [op_event_status(event)] if event.status is not status else []
        try:
            await self.arena.write(ops(event) + changed_status + extra)
        except BaseException:
            await self._reload(event.event_id)
            raise
        await self._start_matches(event, fresh)
        self._arm(event)
        self._publish(event)
        if event.status in (EventStatus.FINISHED, EventStatus.CANCELLED):
            log_event("event_ended", event_id=event.event_id, status=event.status.value)
            self._forget(event.event_id)
        return fresh

    async def _reload(self, event_id: str) -> None:
        """Put the event back as stored after a failed write (or forget it until the next start, if that fails)."""
        try:
            stored = await load_event(self.arena.storage, event_id)
        except Exception:
            stored = None
        if stored is None or stored.status not in (EventStatus.OPEN, EventStatus.RUNNING):
            self.events.pop(event_id, None)
        else:
            self.events[event_id] = stored

    async def _maybe_start(self, event: Event) -> None:
        """Start an event that is due (the caller holds its lock)."""
        if event.due(time.time()):
            await self._apply(event, lambda e: e.start(time.time(), self._ratings(e)), self._seeds)

    def _forget(self, event_id: str) -> None:
        """Drop a finished or cancelled event from memory (it stays in the database); its followers are told."""
        timer = self.timers.pop(event_id, None)
        if timer is not None:
            timer.cancel()
        self.events.pop(event_id, None)
        self.followers.pop(event_id, None)

    def _publish(self, event: Event) -> None:
        """Count a change and send the new state to the followers: at once if none was sent in the last
        `PUSH_INTERVAL_S`, else once at the end of it (the latest state then; a follower may skip numbers)."""
        eid = event.event_id
        self.seq[eid] = self.seq.get(eid, 0) + 1
        followers = self.followers.get(eid)
        if not followers:
            return
        self.to_push[eid] = (event, followers)
        if eid in self.push_due:
            return
        wait = self.pushed_at.get(eid, -PUSH_INTERVAL_S) + PUSH_INTERVAL_S - self.arena.loop.time()
        if wait <= 0:
            self._push(eid)
        else:
            self.push_due[eid] = self.arena.loop.call_later(wait, self._push, eid)

    def _push(self, eid: str) -> None:
        """Send an event's latest state to its followers, encoded once; a follower that is gone is dropped."""
        self.push_due.pop(eid, None)
        item = self.to_push.pop(eid, None)
        if item is None:
            return
        event, followers = item
        self.pushed_at[eid] = self.arena.loop.time()
        if event.status in (EventStatus.FINISHED, EventStatus.CANCELLED):
            del self.pushed_at[eid]
        text = encode(state(event, self.seq[eid])).encode()
        for session in list(followers):
            if not session.push([text]):
                followers.discard(session)

    def _arm(self, event: Event) -> None:
        """Set the event's next timer: its start time, or an arena's end."""
        old = self.timers.pop(event.event_id, None)
        if old is not None:
            old.cancel()
        when = None
        if event.status is EventStatus.OPEN and event.settings.start_at is not None:
            when = event.settings.start_at
        elif event.status is EventStatus.RUNNING and event.ends_at is not None:
            when = event.ends_at
        if when is not None:
            delay = max(0.0, when - time.time()) + 0.01
            self.timers[event.event_id] = self.arena.loop.call_later(
                delay, lambda: self.arena.spawn(self._timer(event.event_id)))

    async def _timer(self, event_id: str) -> None:
        """An event's start time or an arena's end came: start it, or stop pairing and maybe finish."""
        lock = self.locks.get(event_id)
        if lock is None or self.arena.closing:
            return
        async with lock:
            event = self.events.get(event_id)
            if event is None:
                return
            if event.status is EventStatus.OPEN:
                if event.due(time.time()):
                    await self._apply(event, lambda e: e.start(time.time(), self._ratings(e)), self._seeds)
                return
            await self._apply(event, lambda e: e.tick(time.time()), lambda e: [])

    def _ratings(self, event: Event) -> dict[str, float]:
        """Each entrant's rating on this server (the seeding of a start)."""
        found: dict[str, float] = {}
        for name in event.entrants:
            seat = self._seat(name)
            if seat is not None:
                rating, _ = self.arena.ratings.get(seat.player_id, (Rating(), 0))
                found[name] = rating.rating
        return found

    @staticmethod
    def _seeds(event: Event) -> list[Op]:
        """The seeds to store with a start (none when the event was cancelled instead)."""
        return op_seeds(event) if event.status is EventStatus.RUNNING else []

    # --- matches ------------------------------------------------------------------------------------

    def _seat(self, name: str) -> Seat | None:
        """The seat of an entrant: a hosted bot's, or a known identity's (None: no such player now)."""
        a = self.arena
        if name.startswith(BOT_PREFIX):
            return a.bot_seat(name.removeprefix(BOT_PREFIX))
        pid = a.identities.owner(name)
        return None if pid is None else Seat(pid, name)

    async def _start_matches(self, event: Event, pairings: list[Pairing]) -> None:
        """Create the matches of new pairings (stored already), together (their writes share commits)."""
        variant = Variant.parse(event.settings.variant)
        games = [p for p in pairings if p.north is not None and p.match_id is not None]
        await asyncio.gather(*(self._start_match(event, variant, p) for p in games))

    async def _start_match(self, event: Event, variant: Variant, p: Pairing) -> None:
        """Create one pairing's match and show it to its players' connections (a side unknown forfeits)."""
        a = self.arena
        assert p.north is not None and p.match_id is not None
        south, north = self._seat(p.south), self._seat(p.north)
        if south is None or north is None:  # an identity this server no longer knows: that side forfeits
            log_event("event_forfeit", event_id=event.event_id, match=p.match_id, south=p.south, north=p.north)
            self._ended(event.event_id, p.match_id, 0.0 if south is None else 1.0)
            return
        try:
            room = await a.create(variant, event.settings.rated, 0, [(0, south), (1, north)], match_id=p.match_id)
        except MatchExistsError:
            return
        for seat_index, seat in enumerate((south, north)):
            for session in list(a.presence.sessions_of.get(seat.player_id, ())):
                room.follow(session)
                session.send(room.match.snapshot(seat_index, room.spectators))

    def match_ended(self, room: Room, end: EndChange) -> None:
        """The arena's hook: a match ended; if it is an event's game, record its result."""
        match_id = room.match.match_id
        self._ended(match_id.rsplit("-r", 1)[0], match_id, seat_score(end.winner))

    def _ended(self, event_id: str, match_id: str, score: float) -> None:
        """Queue a game's result (score for south); the results queued meanwhile are recorded together."""
        if event_id in self.events:
            self.ended.setdefault(event_id, []).append((match_id, score))
            self.arena.spawn(self._results(event_id))

    async def _results(self, event_id: str) -> None:
        """Record the results queued for an event in one write, pair what comes next and start it."""
        lock = self.locks.get(event_id)
        if lock is None:
            return
        async with lock:
            batch = self.ended.pop(event_id, [])
            event = self.events.get(event_id)
            if event is None or not batch:
                return
            try:
                await self._record(event, batch)
            except KalahError as exc:  # the server is stopping: the results are read back from the matches at start-up
                log_event("event_result_deferred", event_id=event_id, matches=[m for m, _ in batch],
                          reason=str(exc)[:200])

    async def _record(self, event: Event, results: list[tuple[str, float]]) -> None:
        """Store and apply games' results, each once (the caller holds the event's lock)."""
        open_games = {p.match_id for p in event.pairings if not p.finished}
        fresh = [(m, score) for m, score in dict(results).items() if m in open_games]
        if not fresh:
            return

        def change(e: Event) -> list[Pairing]:
            now = time.time()
            return [p for m, score in fresh for p in e.result(m, score, now)]

        await self._apply(event, change, lambda e: [op_pairing_result(m, score) for m, score in fresh])

    # --- lookups ------------------------------------------------------------------------------------

    def _live(self, event_id: str) -> Event:
        """An open or running event, or the typed refusal."""
        event = self.events.get(event_id)
        if event is None:
            raise UnknownEventError(f"no open or running event {event_id!r}: see events")
        return event

    async def _find(self, s: Session, event_id: str) -> Event:
        """An event of any status: in memory, or read from the database."""
        event = self.events.get(event_id)
        if event is not None:
            return event
        s.peer.reads.charge(1)
        stored = await load_event(self.arena.storage, event_id)
        if stored is None:
            raise UnknownEventError(f"no event {event_id!r}: see events")
        return stored

    def _entrant(self, s: Session, event: Event, bot: str | None) -> tuple[str, EntrantKind]:
        """Who a join or leave is for: the sender, or a hosted bot of the event's creator."""
        assert s.name is not None
        if bot is None:
            return s.name, EntrantKind.ENGINE if s.name.startswith(ENGINE_PREFIX) else EntrantKind.PERSON
        if s.name != event.creator:
            raise NotEligibleError(f"only the creator of event {event.event_id} enters or takes out hosted bots")
        return self.arena.bot_seat(bot).name, EntrantKind.BOT

    async def _wins_against_random(self, name: str) -> int:
        """How many stored games `name` won against the hosted bot `random` (the engines' sanity check)."""
        games = await self.arena.storage.list_games(200, 0, "finished", name)
        return sum(1 for g in games if RANDOM_BOT in (g.south, g.north) and g.winner == name)


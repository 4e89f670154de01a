"""Driving the events on a running server: the change path, pairing rounds, starting their games as matches,
recording their ends, and each event's clock (start times, an arena's end).

With `server.events.requests` the only modules of `server.events` that do I/O. Each change to an event runs
under the event's lock: the state machine is asked (on a copy), the change is stored (a round's pairings in
one write, before their matches exist), the copy becomes the event, then its matches are created under the
pairings' ids and the followers get the new `event_state`. A match whose end the arena reports
(`Arena.match_end_hooks`) is looked up by its id, `EVENT-rROUND-tTABLE`. At start-up every open or running
event is loaded; a pairing whose match was stored finished gets its result, one whose match was never created
gets it now (under the same id, so never twice). Events are run by one server; in a cluster each node runs
the events it loaded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from protocol.errors import KalahError, MatchExistsError, UnknownEventError
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.arena import Arena
from server.events.event import Event, EventStatus
from server.events.followers import Followers
from server.events.records import Pairing
from server.identity import BOT_PREFIX
from server.logs import event as log_event
from server.match import EndChange, Seat
from server.ratings import Rating
from server.rooms import Room
from server.storage import Op
from server.storage.events import (
    load_event,
    load_unfinished,
    op_event_status,
    op_pairing_result,
    op_pairings,
    op_seeds,
)


class EventDriver:
    """Every open and running event of this server, with its locks, timers and followers."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.events: dict[str, Event] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.followers = Followers(arena.loop)
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.ended: dict[str, list[tuple[str, float]]] = {}
        """Event id -> results of its games not recorded yet (match id, score for south)."""
        self.end_hooks: list[Callable[[Event], None]] = []
        """Called with each event that finished or was cancelled (the KGP gateway frees its entrants)."""
        arena.match_end_hooks.append(self.match_ended)

    # --- start-up ------------------------------------------------------------------------------

    async def load(self) -> None:
        """Load every open or running event and bring each up to date with its matches."""
        events, bad = await load_unfinished(self.arena.storage)
        for aside in bad:
            log_event("event_unreadable", event_id=aside.event_id, reason=aside.reason[:500], level=30)
        for event in events:
            self.add(event)
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
                self.arm(event)

    def add(self, event: Event) -> None:
        """Keep an event in memory."""
        self.events[event.event_id] = event
        self.locks.setdefault(event.event_id, asyncio.Lock())
        self.followers.add(event.event_id)

    def live(self, event_id: str) -> Event:
        """An open or running event, or the typed refusal."""
        event = self.events.get(event_id)
        if event is None:
            raise UnknownEventError(f"no open or running event {event_id!r}: see events")
        return event

    def entered(self, name: str) -> Event | None:
        """An open or running event where `name` is an entrant still taking part, if any."""
        for event in self.events.values():
            entrant = event.entrants.get(name)
            if entrant is not None and entrant.active:
                return event
        return None

    # --- the change path ---------------------------------------------------------------------------

    async def apply(self, event: Event, change: Callable[[Event], list[Pairing]],
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
        self.arm(event)
        self.followers.publish(event)
        if event.status in (EventStatus.FINISHED, EventStatus.CANCELLED):
            log_event("event_ended", event_id=event.event_id, status=event.status.value)
            self._forget(event.event_id)
            for hook in self.end_hooks:
                hook(event)
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

    async def maybe_start(self, event: Event) -> None:
        """Start an event that is due (the caller holds its lock)."""
        if event.due(time.time()):
            await self.apply(event, lambda e: e.start(time.time(), self._ratings(e)), self._seeds)

    def _forget(self, event_id: str) -> None:
        """Drop a finished or cancelled event from memory (it stays in the database); its followers are told."""
        timer = self.timers.pop(event_id, None)
        if timer is not None:
            timer.cancel()
        self.events.pop(event_id, None)
        self.followers.forget(event_id)

    # --- the event's clock ---------------------------------------------------------------------------

    def arm(self, event: Event) -> None:
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
                    await self.apply(event, lambda e: e.start(time.time(), self._ratings(e)), self._seeds)
                return
            await self.apply(event, lambda e: e.tick(time.time()), lambda e: [])

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

        await self.apply(event, change, lambda e: [op_pairing_result(m, score) for m, score in fresh])

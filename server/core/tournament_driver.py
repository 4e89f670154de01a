"""Driving the events on a running server: the change path, pairing rounds, starting their games as matches,
recording their ends, and each event's clock (start times, an arena's end).

With `server.front.tournament_requests` the only tournament modules that do I/O, and the only one that
writes events (`apply`). Each change to an event runs under the event's lock: the state machine is
asked, the change is stored (a round's pairings in one write, before their matches exist, with the
event's new version and the deployment's guards), then its matches are created under the pairings'
ids, the deployment tells the other servers and the followers get the new `event_state`. A match
whose end the arena reports (`Arena.match_end_hooks`) is looked up by its id, `EVENT-rROUND-tTABLE`.

One server owns each event (`TournamentOwners`, from the deployment): only the owner pairs it, records its
games' results and runs its clock; any server stores joins and leaves (the owner pairs what they
allow when it reads them) and keeps a copy for its readers and followers. At start-up, and when this
server takes an event over, the event is read as stored: a pairing whose match was stored finished
gets its result, one whose match was never created gets it now (under the same id, so never twice),
a live one is followed to its end wherever it is played.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import EventStartedError, KalahError, MatchExistsError, TooManyError, UnknownEventError
from protocol.names import BOT_PREFIX
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.core.arena import Arena
from server.core.match import EndChange, Seat
from server.core.ratings import Rating
from server.core.rooms import Room
from server.core.tournament_followers import Followers
from server.logs import event as log_event
from server.storage import ConflictError, Op
from server.storage.moderation import player_id_named
from server.storage.tournaments import (
    load_tournament,
    load_unfinished,
    op_pairing_result,
    op_pairings,
    op_seeds,
    op_tournament_status,
    op_tournament_version,
)
from server.tournaments.records import Pairing
from server.tournaments.tournament import Tournament, TournamentStatus

LIVE = (TournamentStatus.OPEN, TournamentStatus.RUNNING)


@dataclass(frozen=True)
class Waiting:
    """A deferred game between hosted bots: its event, and the identity and address its exhibition place counts for."""

    event_id: str
    holder: str
    address: str | None


class TournamentDriver:
    """Every open and running event this server knows (its own and copies), with locks, timers and followers."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.now: Callable[[], float] = arena.options.wall_clock or time.time
        """The time of day of start times and an arena's end: the injected wall clock, or the machine's."""
        self.tournaments: dict[str, Tournament] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.followers = Followers(arena.loop)
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.ended: dict[str, list[tuple[str, float]]] = {}
        """Tournament id -> results of its games not recorded yet (match id, score for south)."""
        self.addresses: dict[str, str] = {}
        """Tournament id -> the address of the client that created it (events made here since the start): its bot
        games count against that address's and its network's exhibitions."""
        self.deferred: dict[str, Waiting] = {}
        """Match id -> the games between hosted bots that wait for an exhibition place, first deferred first (a new
        game waits behind them, so they are not starved by the games paired after them)."""
        self.reserved: set[str] = set()
        """Deferred games holding the place a game's end freed, until they start: the place is taken when it is freed,
        so a client's own exhibition asked for meanwhile does not take it from them."""
        self.end_hooks: list[Callable[[Tournament], None]] = []
        """Called with each event that finished or was cancelled (the KGP gateway frees its entrants)."""
        self.owners = arena.replication.tournaments()
        self.owners.bind(self)
        arena.match_end_hooks.append(self.match_ended)
        arena.disconnect_hooks.append(self.followers.drop)

    # --- start-up and takeover ---------------------------------------------------------------------

    async def load(self) -> None:
        """Load every open or running event and bring the ones this server owns up to date with their matches."""
        events, bad = await load_unfinished(self.arena.storage)
        for aside in bad:
            log_event("event_unreadable", event_id=aside.event_id, reason=aside.reason[:500], level=30)
        for event in events:
            self.add(event)
        for event in events:
            if self.owners.owns(event.event_id):
                await self.recover(event.event_id)

    async def recover(self, event_id: str) -> None:
        """Read what happened to the event's games: results of matches that ended, matches never created, the
        live ones followed (loaded here if another server holds them); then its timer."""
        async with self.locks[event_id]:
            event = self.tournaments.get(event_id)
            if event is None:
                return
            done: list[tuple[str, float]] = []
            for p in event.live():
                assert p.match_id is not None
                room = self.arena.rooms.get(p.match_id)
                if room is None:
                    stored = await self.arena.storage.stored_match(p.match_id)
                    if stored is None:
                        await self._start_matches(event, [p])
                        continue
                    if stored.end is not None:
                        done.append((p.match_id, seat_score(stored.end[1])))
                        continue
                    room = await self.arena.replication.find(p.match_id)  # a copy: its end calls `match_ended`
                if room is not None and room.match.end is not None:
                    done.append((p.match_id, seat_score(room.match.end.winner)))
            if done:
                await self._record(event_id, done)
            if event_id in self.tournaments:
                self.arm(self.tournaments[event_id])

    def add(self, event: Tournament) -> None:
        """Keep an event in memory (or its newer copy)."""
        self.tournaments[event.event_id] = event
        self.locks.setdefault(event.event_id, asyncio.Lock())
        self.followers.add(event.event_id)
        self.owners.seen(event)

    def live(self, event_id: str) -> Tournament:
        """An open or running event, or the typed refusal."""
        event = self.tournaments.get(event_id)
        if event is None:
            raise UnknownEventError(f"no open or running event {event_id!r}: see events")
        return event

    def entered(self, name: str) -> Tournament | None:
        """An open or running event where `name` is an entrant still taking part, if any."""
        for event in self.tournaments.values():
            entrant = event.entrants.get(name)
            if entrant is not None and entrant.active:
                return event
        return None

    async def held(self, event_id: str) -> Tournament | None:
        """An open or running event: this server's, or read from the database as a copy (another server created
        it and its notice has not come yet); None if there is none."""
        event = self.tournaments.get(event_id)
        if event is not None:
            return event
        stored = await self._read(event_id)
        if stored is None or stored.status not in LIVE:
            return None
        lock = self.locks.setdefault(event_id, asyncio.Lock())
        async with lock:
            if event_id not in self.tournaments:
                self.add(stored)
            return self.tournaments[event_id]

    async def adopt(self, event_id: str) -> None:
        """This server owns the event now (it created it elsewhere and died, or drained): read it as stored,
        resume its round, start it if it is due, and run its clock."""
        lock = self.locks.setdefault(event_id, asyncio.Lock())
        async with lock:
            event = await self._read(event_id)
            if event is None or event.status not in LIVE:
                return
            self.add(event)
        await self.recover(event_id)
        async with lock:
            if event_id in self.tournaments:
                await self._pair_waiting(event_id)
                self.followers.publish(self.tournaments[event_id])

    def release(self, event_id: str) -> None:
        """Another server owns the event now: stop its clock here, keep the copy."""
        timer = self.timers.pop(event_id, None)
        if timer is not None:
            timer.cancel()

    async def refresh(self, event_id: str, version: int) -> None:
        """Another server stored a change: read the event if this copy is older, tell the followers here, show
        new games to their players' connections here; the owner pairs what the change allows."""
        lock = self.locks.setdefault(event_id, asyncio.Lock())
        async with lock:
            have = self.tournaments.get(event_id)
            if have is not None and have.version >= version:
                return
            stored = await self._read(event_id)
            if stored is None or (have is None and stored.status not in LIVE):
                return
            if have is not None and stored.version <= have.version and stored.status in LIVE:
                return  # nothing newer stored (a notice or a heartbeat's check ahead of the database's answer)
            known = set() if have is None else {p.match_id for p in have.pairings}
            self.add(stored)
            self.followers.publish(stored)
            for p in stored.live():
                if p.match_id not in known:
                    await self._show_here(p)
            if stored.status not in LIVE:
                self._end_here(stored)
                return
            if self.owners.owns(event_id):
                await self._pair_waiting(event_id)

    async def _pair_waiting(self, event_id: str) -> None:
        """(The owner, lock held) start a due event, pair an arena's waiting entrants, set the clock."""
        await self.maybe_start(event_id)
        event = self.tournaments.get(event_id)
        if event is not None and event.status is TournamentStatus.RUNNING and event.pool is not None:
            await self.apply(event_id, lambda e: e.tick(self.now()), lambda e: [])
        if event_id in self.tournaments:
            self.arm(self.tournaments[event_id])

    async def _read(self, event_id: str) -> Tournament | None:
        """The event as stored (None: none, or it no longer loads: reported)."""
        try:
            return await load_tournament(self.arena.storage, event_id)
        except Exception as exc:
            log_event("event_unreadable", event_id=event_id, reason=str(exc)[:500], level=30)
            return None

    # --- the change path ---------------------------------------------------------------------------

    async def apply(self, event_id: str, change: Callable[[Tournament], list[Pairing]],
                    ops: Callable[[Tournament], list[Op]], created: bool = False) -> Tournament:
        """The one path of every change to an event (the caller holds its lock): run `change`, store what it did
        (with any new pairings, the new version and the deployment's guards, in one write), start the new
        pairings' matches, tell the other servers and the followers; returns the event as it is now.

        Only the owner pairs: elsewhere the pairings a change would bring are not stored, and the copy is read
        back as stored (the owner pairs when it reads the change). If another server stored a change first, the
        event is read again and the change prepared again (`TournamentOwners.retries` times); a write that fails
        otherwise leaves the event as stored."""
        for attempt in range(self.owners.retries):
            event = self.live(event_id)
            owner = created or self.owners.owns(event_id)
            before, status = event.version, event.status
            fresh = change(event)
            if not owner:
                fresh = []
            rows = ops(event) + ([op_tournament_status(event)] if event.status is not status else [])
            rows += op_pairings(event_id, fresh) if fresh else []
            if rows:
                event.version = before + 1
                try:
                    guards = self.owners.guards(event, before, created)
                    await self.arena.write(guards + rows + [op_tournament_version(event)])
                except ConflictError:
                    log_event("event_conflict", event_id=event_id, version=before, attempt=attempt + 1)
                    stored = await self._reload(event_id)
                    if stored is not None and stored.status not in LIVE:
                        raise EventStartedError(
                            f"event {event_id} has ended: look up its results with event {event_id}") from None
                    if attempt + 1 < self.owners.retries and event_id in self.tournaments:
                        continue
                    raise
                except BaseException:
                    await self._reload(event_id)
                    raise
                if not owner:
                    await self._reload(event_id)
                    event = self.tournaments.get(event_id, event)
            try:
                await self._start_matches(event, fresh)
            finally:
                if rows:
                    self.owners.stored(event)
            self.arm(event)
            self.followers.publish(event)
            if event.status not in LIVE:
                log_event("tournament_ended", event_id=event_id, status=event.status.value)
                self._end_here(event)
            return event
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _reload(self, event_id: str) -> Tournament | None:
        """Put the event back as stored after a failed write (or forget it until the next start, if that fails);
        returns it as stored."""
        stored = await self._read(event_id)
        if stored is None:
            self.tournaments.pop(event_id, None)
        elif stored.status not in LIVE:  # another server ended it meanwhile: end it here as its notice would
            self.add(stored)
            self.followers.publish(stored)
            self._end_here(stored)
        else:
            self.add(stored)
        return stored

    async def maybe_start(self, event_id: str) -> None:
        """Start an event that is due, if this server owns it (the caller holds its lock)."""
        event = self.tournaments.get(event_id)
        if event is not None and self.owners.owns(event_id) and event.due(self.now()):
            await self.apply(event_id, lambda e: e.start(self.now(), self._ratings(e)), self._seeds)

    def _end_here(self, event: Tournament) -> None:
        """The event ended (here or on another server): drop it from memory, tell its followers, run the end hooks."""
        self._forget(event.event_id)
        for hook in self.end_hooks:
            hook(event)

    def _forget(self, event_id: str) -> None:
        """Drop a finished or cancelled event from memory (it stays in the database); its followers are told."""
        self.release(event_id)
        self.tournaments.pop(event_id, None)
        self.followers.forget(event_id)
        for match_id in [m for m, w in self.deferred.items() if w.event_id == event_id]:
            self._unreserve(match_id)
            del self.deferred[match_id]
        self.addresses.pop(event_id, None)

    # --- the event's clock ---------------------------------------------------------------------------

    def _next_time(self, event: Tournament) -> float | None:
        """When the event's clock next acts: its start time or its expiry, or an arena's end (None: never)."""
        if event.status is TournamentStatus.OPEN:
            return event.settings.start_at if event.settings.start_at is not None else self.expires_at(event)
        if event.status is TournamentStatus.RUNNING and event.ends_at is not None:
            return event.ends_at
        return None

    def expires_at(self, event: Tournament) -> float | None:
        """When an open event without a start time is cancelled: `event_unjoined_ttl_s` after its creation while
        nobody joined it, else `event_open_ttl_s` (None: it has a start time, or it is not open)."""
        if event.status is not TournamentStatus.OPEN or event.settings.start_at is not None:
            return None
        o = self.arena.options
        return event.created_at + (o.event_open_ttl_s if event.joined() else o.event_unjoined_ttl_s)

    def arm(self, event: Tournament) -> None:
        """Set the event's next timer (its owner's): its start time, or an arena's end."""
        self.release(event.event_id)
        when = self._next_time(event)
        if when is not None and self.owners.owns(event.event_id):
            delay = max(0.0, when - self.now()) + 0.01
            self.timers[event.event_id] = self.arena.loop.call_later(
                delay, lambda: self.arena.spawn(self._timer(event.event_id)))

    async def check_clocks(self) -> None:
        """Run now the timers of the events whose time has come (after an injected wall clock moved on)."""
        for event_id in list(self.timers):
            event = self.tournaments.get(event_id)
            when = None if event is None else self._next_time(event)
            if when is not None and when <= self.now():
                self.release(event_id)
                await self._timer(event_id)

    async def _timer(self, event_id: str) -> None:
        """An event's start time or an arena's end came: start it, or stop pairing and maybe finish."""
        lock = self.locks.get(event_id)
        if lock is None or self.arena.closing:
            return
        async with lock:
            event = self.tournaments.get(event_id)
            if event is None or not self.owners.owns(event_id):
                return
            if event.status is TournamentStatus.OPEN:
                await self.maybe_start(event_id)
                event = self.tournaments.get(event_id)
                expiry = None if event is None else self.expires_at(event)
                if expiry is not None and self.now() >= expiry:
                    log_event("event_expired", event_id=event_id, joined=event is not None and event.joined())
                    await self.apply(event_id, lambda e: e.cancel(), lambda e: [])
                elif event is not None:
                    self.arm(event)
                return
            await self.apply(event_id, lambda e: e.tick(self.now()), lambda e: [])

    async def cancel(self, event_id: str) -> Tournament:
        """Cancel an open or running event (its creator's or the operator's act): stored, its followers told, its
        place free; returns it as cancelled."""
        await self.held(event_id)
        async with self.locks[self.live(event_id).event_id]:
            return await self.apply(event_id, lambda e: e.cancel(), lambda e: [])

    def _ratings(self, event: Tournament) -> dict[str, float]:
        """Each entrant's rating on this server (the seeding of a start)."""
        found: dict[str, float] = {}
        for name in event.entrants:
            seat = self._seat(name)
            if seat is not None:
                rating, _ = self.arena.ratings.get(seat.player_id, (Rating(), 0))
                found[name] = rating.rating
        return found

    @staticmethod
    def _seeds(event: Tournament) -> list[Op]:
        """The seeds to store with a start (none when the event was cancelled instead)."""
        return op_seeds(event) if event.status is TournamentStatus.RUNNING else []

    # --- matches ------------------------------------------------------------------------------------

    def _seat(self, name: str) -> Seat | None:
        """The seat of an entrant: a hosted bot's, or a known identity's (None: no such player now)."""
        a = self.arena
        if name.startswith(BOT_PREFIX):
            return a.bot_seat(name.removeprefix(BOT_PREFIX))
        pid = a.identities.owner(name)
        return None if pid is None else Seat(pid, name)

    async def _find_seat(self, name: str) -> Seat | None:
        """The seat of an entrant, reading the database for a player this server has not met (one who said
        hello on another node)."""
        seat = self._seat(name)
        if seat is None and not name.startswith(BOT_PREFIX):
            pid = await player_id_named(self.arena.storage, name)
            seat = None if pid is None else Seat(pid, name)
        return seat

    async def _start_matches(self, event: Tournament, pairings: list[Pairing]) -> None:
        """Create the matches of new pairings (stored already), together (their writes share commits)."""
        variant = Variant.parse(event.settings.variant)
        games = [p for p in pairings if p.north is not None and p.match_id is not None]
        await asyncio.gather(*(self._start_match(event, variant, p) for p in games))

    async def _start_match(self, event: Tournament, variant: Variant, p: Pairing) -> None:
        """Create one pairing's match and show it to its players' connections (a side unknown forfeits)."""
        a = self.arena
        assert p.north is not None and p.match_id is not None
        south, north = await self._find_seat(p.south), await self._find_seat(p.north)
        if south is None or north is None:  # an identity no longer stored: that side forfeits
            log_event("event_forfeit", event_id=event.event_id, match=p.match_id, south=p.south, north=p.north)
            self._unreserve(p.match_id)
            self.deferred.pop(p.match_id, None)
            self._ended(event.event_id, p.match_id, 0.0 if south is None else 1.0)
            return
        bots = south.bot is not None and north.bot is not None
        if bots and not await self._hold_bot_game(event, p):
            return
        try:
            room = await a.create(variant, event.settings.rated, 0, [(0, south), (1, north)], match_id=p.match_id)
        except BaseException as exc:
            if bots:
                a.quotas.release(p.match_id)
            if isinstance(exc, MatchExistsError):
                return
            raise
        self._show(room, (south, north))

    async def _hold_bot_game(self, event: Tournament, p: Pairing) -> bool:
        """Count a game between two hosted bots as an exhibition of the event's creator (its identity, address and
        network, and the server's cap in all); False, and the game waits for a place, past any of them or while
        games deferred before it wait."""
        assert p.match_id is not None
        if p.match_id in self.reserved:  # its place was taken for it when a game ended
            self.reserved.discard(p.match_id)
            self.deferred.pop(p.match_id, None)
            return True
        creator = await self._find_seat(event.creator)
        holder = event.creator if creator is None else creator.player_id
        address = self.addresses.get(event.event_id)
        try:
            if self.deferred and p.match_id not in self.deferred:
                self.arena.spawn(self._start_deferred())  # in turn: those before it may be at their creators' caps
                raise TooManyError("games deferred before it wait for a place")
            self.arena.quotas.check_exhibition(holder, address)
        except TooManyError as exc:
            if p.match_id not in self.deferred:
                self.deferred[p.match_id] = Waiting(event.event_id, holder, address)
                log_event("event_game_deferred", event_id=event.event_id, match=p.match_id, reason=str(exc))
            return False
        self.deferred.pop(p.match_id, None)
        self.arena.quotas.hold_exhibition(p.match_id, holder, address)
        return True

    def _reserve(self) -> None:
        """Take the exhibition places free now for the deferred games, first deferred first (one whose creator is
        at a cap lets the next go first), before anything else can ask for them."""
        for match_id, waiting in self.deferred.items():
            if match_id in self.reserved:
                continue
            try:
                self.arena.quotas.check_exhibition(waiting.holder, waiting.address)
            except TooManyError:
                continue
            self.arena.quotas.hold_exhibition(match_id, waiting.holder, waiting.address)
            self.reserved.add(match_id)

    def _unreserve(self, match_id: str) -> None:
        """Give back the place taken for a deferred game that will not start."""
        if match_id in self.reserved:
            self.reserved.discard(match_id)
            self.arena.quotas.release(match_id)

    async def _start_deferred(self) -> None:
        """Start the bot games that waited for an exhibition place, first deferred first, while places are free (one
        whose creator is at a cap lets the next go first)."""
        self._reserve()
        for match_id, waiting in list(self.deferred.items()):
            lock = self.locks.get(waiting.event_id)
            if lock is None:
                self._unreserve(match_id)
                self.deferred.pop(match_id, None)
                continue
            async with lock:
                event = self.tournaments.get(waiting.event_id)
                pairing = None if event is None else next((p for p in event.live() if p.match_id == match_id), None)
                if event is None or pairing is None or not self.owners.owns(waiting.event_id):
                    self._unreserve(match_id)
                    self.deferred.pop(match_id, None)
                    continue
                if match_id in self.deferred:
                    await self._start_matches(event, [pairing])

    def _show(self, room: Room, seats: tuple[Seat, Seat]) -> None:
        """Send a new game's snapshot to its players' connections on this server (they follow it)."""
        for seat_index, seat in enumerate(seats):
            for session in list(self.arena.presence.sessions_of.get(seat.player_id, ())):
                room.follow(session)
                session.send(room.match.snapshot(seat_index, room.spectators))

    async def _show_here(self, p: Pairing) -> None:
        """A game another server paired: show it to its players' connections on this server, if any."""
        seats = (await self._find_seat(p.south), None if p.north is None else await self._find_seat(p.north))
        if p.match_id is None or seats[0] is None or seats[1] is None:
            return
        if not any(self.arena.presence.sessions_of.get(s.player_id) for s in seats if s is not None):
            return
        try:
            room = await self.arena.find_room(p.match_id)
        except KalahError:  # not created yet, or gone: its players find it in the event's state
            return
        self._show(room, (seats[0], seats[1]))

    def match_ended(self, room: Room, end: EndChange) -> None:
        """The arena's hook: a match ended; if it is the game of an event this server owns, record its result."""
        match_id = room.match.match_id
        event_id = match_id.rsplit("-r", 1)[0]
        if self.owners.owns(event_id):
            self._ended(event_id, match_id, seat_score(end.winner))
        if self.deferred:  # an exhibition place may be free: waiting bot games take it now and start soon
            self._reserve()
            self.arena.spawn(self._start_deferred())

    def _ended(self, event_id: str, match_id: str, score: float) -> None:
        """Queue a game's result (score for south); the results queued meanwhile are recorded together."""
        if event_id in self.tournaments:
            self.ended.setdefault(event_id, []).append((match_id, score))
            self.arena.spawn(self._results(event_id))

    async def _results(self, event_id: str) -> None:
        """Record the results queued for an event in one write, pair what comes next and start it."""
        lock = self.locks.get(event_id)
        if lock is None:
            return
        async with lock:
            batch = self.ended.pop(event_id, [])
            if event_id not in self.tournaments or not batch or not self.owners.owns(event_id):
                return
            try:
                await self._record(event_id, batch)
            except Exception as exc:
                if self.arena.closing:  # the results are read back from the matches at the next start or takeover
                    log_event("event_result_deferred", event_id=event_id, matches=[m for m, _ in batch],
                              reason=str(exc)[:200])
                    return
                conflict = isinstance(exc, ConflictError)  # other nodes kept storing first: at once
                if not conflict:  # the database failed: in a second (a result is never dropped)
                    log_event("event_result_retry", event_id=event_id, reason=repr(exc)[:200], level=30)
                self.arena.loop.call_later(0.0 if conflict else 1.0, self._ended_again, event_id, batch)

    def _ended_again(self, event_id: str, batch: list[tuple[str, float]]) -> None:
        """Queue results whose write failed again (if the event is still this server's to pair)."""
        if self.owners.owns(event_id):
            for match_id, score in batch:
                self._ended(event_id, match_id, score)

    async def _record(self, event_id: str, results: list[tuple[str, float]]) -> None:
        """Store and apply games' results, each once (the caller holds the event's lock)."""
        fresh: list[tuple[str, float]] = []

        def change(e: Tournament) -> list[Pairing]:
            open_games = {p.match_id for p in e.pairings if not p.finished}
            fresh[:] = [(m, score) for m, score in dict(results).items() if m in open_games]
            now = self.now()
            return [p for m, score in fresh for p in e.result(m, score, now)]

        if any(p.match_id in dict(results) and not p.finished for p in self.live(event_id).pairings):
            await self.apply(event_id, change, lambda e: [op_pairing_result(m, score) for m, score in fresh])

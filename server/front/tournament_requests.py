"""The answers to the event requests: `events`, `event`, `event_create`, `event_join`, `event_leave` and
`event_cancel`.

Each checks the request against the event and the server's limits, then hands the change to the
driver's change path (`TournamentDriver.apply`), which stores it, pairs and tells the followers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from protocol.errors import (
    BadEventError,
    EventStartedError,
    NotEligibleError,
    TooManyError,
    UnknownEventError,
)
from protocol.event_messages import (
    CancelEvent,
    CreateEvent,
    EventList,
    FetchEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
)
from protocol.messages import Message
from protocol.names import ENGINE_PREFIX
from protocol.variant import Variant
from server.core.quotas import fair_order
from server.core.rates import RateLimiter
from server.core.tokens import new_id
from server.core.tournament_driver import TournamentDriver
from server.edge.session import Session
from server.front.router import too_many_rows
from server.front.tournament_places import TournamentPlaces
from server.logs import event as log_event
from server.storage import Op
from server.storage.tournaments import load_tournament, op_entrant, op_entrant_out, op_tournament, recent_tournaments
from server.tournaments.records import Pairing
from server.tournaments.tournament import EntrantKind, Tournament, TournamentStatus
from server.tournaments.view import summary

MAX_TOURNAMENTS_PER_PLAYER = 3
"""Open or running events one identity may have created."""
RANDOM_BOT = "bot:random"
SANITY_ROWS = 200
"""The latest stored games of an engine its sanity check reads."""


def _span(seconds: float) -> str:
    """A length of time in words: whole days, else hours, else seconds."""
    if seconds >= 86400 and seconds % 86400 == 0:
        days = int(seconds // 86400)
        return "1 day" if days == 1 else f"{days} days"
    if seconds >= 3600 and seconds % 3600 == 0:
        hours = int(seconds // 3600)
        return "1 hour" if hours == 1 else f"{hours} hours"
    return f"{seconds:g} s"


class TournamentRequests:
    """The router's handlers of the event requests, over the driver's events."""

    def __init__(self, driver: TournamentDriver, hidden: Callable[[str], bool] = lambda event_id: False) -> None:
        self.driver = driver
        self.arena = driver.arena
        self.hidden = hidden
        """Whether the operator hid an event (it is left out of every list, and `event` does not find it)."""
        self.places = TournamentPlaces(driver.arena.options)
        driver.end_hooks.append(self.places.free)

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handler of each event request."""
        return {ListEvents: self.list_tournaments, FetchEvent: self.fetch, CreateEvent: self.create,
                JoinEvent: self.join, LeaveEvent: self.leave, CancelEvent: self.cancel}

    async def list_tournaments(self, s: Session, msg: ListEvents) -> list[Message]:
        """The open and running events, newest first taking their creators' networks in turns (so that many
        events of one network cannot fill the list), then the latest others, newest first."""
        events = self.driver.tournaments
        live = fair_order(sorted((e for e in events.values() if not self.hidden(e.event_id)),
                                 key=lambda e: -e.created_at), self.places.owner)
        shown = [summary(e) for e in live if msg.status in (None, e.status.value)][: msg.limit]
        if len(shown) < msg.limit and msg.status not in ("open", "running"):
            rows = await recent_tournaments(self.arena.storage, msg.limit + len(live))
            s.peer.reads.charge(len(rows))
            for event_id, _, status, _ in rows:
                if len(shown) >= msg.limit:
                    break
                if event_id in events or msg.status not in (None, status) or self.hidden(event_id):
                    continue
                try:
                    stored = await load_tournament(self.arena.storage, event_id)
                except Exception as exc:  # an unreadable row is reported and skipped
                    log_event("event_unreadable", event_id=event_id, reason=str(exc)[:500], level=30)
                    continue
                if stored is not None:
                    shown.append(summary(stored))
        return [EventList(events=shown)]

    async def fetch(self, s: Session, msg: FetchEvent) -> list[Message]:
        """An event's state; `follow` adds the connection to its followers (false removes it)."""
        d = self.driver
        event = await self._find(s, msg.event_id)
        if msg.event_id in d.followers.of:
            d.followers.follow(s, msg.event_id, msg.follow)  # a connection that closes is dropped by the arena
            async with d.locks[msg.event_id]:  # not between a change and its write
                return [d.followers.state(event, msg.pairings_from)]
        return [d.followers.state(event, msg.pairings_from)]

    async def create(self, s: Session, msg: CreateEvent) -> list[Message]:
        """Open an event (its creator follows it), entering the hosted bots it names."""
        a, d = self.arena, self.driver
        a.refuse_if_closing()
        settings = msg.settings
        Variant.parse(settings.variant)
        if settings.start_at is not None and settings.start_at < d.now() - 60:
            raise BadEventError("event start_at is in the past: give a UNIX time to come, or none")
        ahead = a.options.event_start_ahead_s
        if settings.start_at is not None and settings.start_at > d.now() + ahead:
            raise BadEventError(f"event start_at is more than {_span(ahead)} ahead: give a nearer time, or none")
        if len(msg.bots) > settings.max_entrants:
            raise BadEventError(f"event: {len(msg.bots)} bots are more than max_entrants ({settings.max_entrants})")
        assert s.name is not None
        d.followers.check(s)  # the creator follows its new event: within its connection's cap
        mine = sum(e.creator == s.name for e in d.tournaments.values())
        if mine >= MAX_TOURNAMENTS_PER_PLAYER:
            raise TooManyError(f"you have {MAX_TOURNAMENTS_PER_PLAYER} open or running events: wait for one to end, "
                               "or cancel one (event_cancel)")
        bots = [a.bot_seat(bot).name for bot in msg.bots]  # unknown bots are refused before anything is stored
        shed = self.places.check(d.tournaments, s.peer.address)
        if shed is not None:  # the places are contested: the most crowded network's newest idle event gives way
            log_event("event_shed", event_id=shed.event_id, creator=shed.creator, network=self.places.owner(shed))
            await d.cancel(shed.event_id)
            self.places.check(d.tournaments, s.peer.address)  # taken meanwhile by another creator: too_many
        event = Tournament(new_id("e"), settings, s.name, d.now())
        for name in bots:
            event.join(name, EntrantKind.BOT)
        eid = event.event_id

        def entered(e: Tournament) -> list[Op]:
            return [op_tournament(e), *(op_entrant(eid, e.entrants[n]) for n in bots)]

        d.add(event)
        self.places.hold(eid, s.peer.address)
        d.addresses[eid] = s.peer.address  # its bot games count against the address's exhibitions
        async with d.locks[eid]:
            event = await d.apply(eid, lambda e: [], entered, created=True)
            d.followers.enlist(s, eid)
            log_event("event_created", event_id=eid, kind=settings.kind.value, creator=s.name)
            await d.maybe_start(eid)
            event = d.tournaments.get(eid, event)
            d.arm(event)
        return [d.followers.state(event)]

    async def join(self, s: Session, msg: JoinEvent) -> list[Message]:
        """Enter the sender (or, for the creator, a hosted bot); the sender follows the event."""
        event = await self.open_tournament(msg.event_id)
        name, kind = self._entrant(s, event, msg.bot)
        if msg.bot is None:
            self.driver.followers.check(s, event.event_id)  # the joiner follows it: within its connection's cap
        event = await self.enter(event, name, kind, s if msg.bot is None else None, s.peer.reads)
        return [self.driver.followers.state(event)]

    async def open_tournament(self, event_id: str) -> Tournament:
        """An open or running event; one that ended is `event_started`, one never seen `unknown_event`."""
        d = self.driver
        if await d.held(event_id) is None and await load_tournament(self.arena.storage, event_id) is not None:
            raise EventStartedError(f"event {event_id} has ended: look up its results with event")
        return d.live(event_id)

    async def enter(self, event: Tournament, name: str, kind: EntrantKind,
                    follower: Session | None = None, reads: RateLimiter | None = None) -> Tournament:
        """Enter `name` as `kind` (the path of every entry: `event_join`, the KGP gateway's `set arena:event`);
        `follower` follows the event from then on; `reads` pays for the stored games an engine's sanity check reads
        (the asker's public-read budget). The typed refusal when the event's rules say no."""
        d = self.driver
        sanity = kind is EntrantKind.ENGINE and event.settings.sanity_games > 0
        wins = await self.wins_against_random(name, reads) if sanity else 0
        async with d.locks[event.event_id]:
            event = d.live(event.event_id)
            event.check_entry(name, kind, wins)
            event = await d.apply(event.event_id, lambda e: e.join(name, kind, wins),
                                  lambda e: [op_entrant(e.event_id, e.entrants[name])])
            if follower is not None:
                d.followers.enlist(follower, event.event_id)
            await d.maybe_start(event.event_id)
            event = d.tournaments.get(event.event_id, event)
        return event

    async def leave(self, s: Session, msg: LeaveEvent) -> list[Message]:
        """Leave (or take a hosted bot out): off the list before the start, not paired again after it."""
        d = self.driver
        await d.held(msg.event_id)
        event = d.live(msg.event_id)
        name, _ = self._entrant(s, event, msg.bot)
        async with d.locks[event.event_id]:
            event = d.live(msg.event_id)
            if name not in event.entrants:
                raise NotEligibleError(f"{name} is not entered in event {event.event_id}")
            before = event.status is TournamentStatus.OPEN

            def change(e: Tournament) -> list[Pairing]:
                e.leave(name)
                return []

            def ops(e: Tournament) -> list[Op]:
                return [op_entrant_out(e.event_id, name) if before else op_entrant(e.event_id, e.entrants[name])]

            event = await d.apply(event.event_id, change, ops)
        return [d.followers.state(event)]

    async def cancel(self, s: Session, msg: CancelEvent) -> list[Message]:
        """Cancel an event the sender created, before it starts (the operator cancels any: `kalah admin`)."""
        d = self.driver
        event = await self.open_tournament(msg.event_id)
        if s.name != event.creator:
            raise NotEligibleError(f"only the creator of event {event.event_id} cancels it")
        if event.status is not TournamentStatus.OPEN:
            raise EventStartedError(f"event {event.event_id} has started: it plays to its end")
        event = await d.cancel(event.event_id)
        log_event("event_cancelled", event_id=event.event_id, by=s.name)
        return [d.followers.state(event)]

    async def cancel_any(self, event_id: str) -> str:
        """The operator's cancel of an open or running event (its games under way end as ordinary matches); what
        was done, in words. An event that ended already is left as it is."""
        try:
            event = await self.open_tournament(event_id)
        except EventStartedError:
            return f"event {event_id} had ended already"
        await self.driver.cancel(event.event_id)
        return f"cancelled event {event_id}"

    # --- lookups ------------------------------------------------------------------------------------

    async def _find(self, s: Session, event_id: str) -> Tournament:
        """An event of any status: in memory, or read from the database."""
        if self.hidden(event_id):
            raise UnknownEventError(f"no event {event_id!r}: see events")
        event = self.driver.tournaments.get(event_id)
        if event is not None:
            return event
        s.peer.reads.charge(1)
        event = await self.driver.held(event_id)  # another server's, not heard of here yet
        if event is not None:
            return event
        stored = await load_tournament(self.arena.storage, event_id)
        if stored is None:
            raise UnknownEventError(f"no event {event_id!r}: see events")
        return stored

    def _entrant(self, s: Session, event: Tournament, bot: str | None) -> tuple[str, EntrantKind]:
        """Who a join or leave is for: the sender, or a hosted bot of the event's creator."""
        assert s.name is not None
        if bot is None:
            return s.name, EntrantKind.ENGINE if s.name.startswith(ENGINE_PREFIX) else EntrantKind.PERSON
        if s.name != event.creator:
            raise NotEligibleError(f"only the creator of event {event.event_id} enters or takes out hosted bots")
        return self.arena.bot_seat(bot).name, EntrantKind.BOT

    async def wins_against_random(self, name: str, reads: RateLimiter | None = None) -> int:
        """How many stored games `name` won against the hosted bot `random` (the engines' sanity check); `reads`
        pays a row for each game read, and an empty budget is `rate_limited` before anything is read."""
        if reads is not None and (wait := reads.wait_s(1)) > 0:
            raise too_many_rows(SANITY_ROWS, wait)
        games = await self.arena.storage.list_games(SANITY_ROWS, 0, "finished", name)
        if reads is not None:
            reads.charge(max(1, len(games)))
        return sum(1 for g in games if RANDOM_BOT in (g.south, g.north) and g.winner == name)

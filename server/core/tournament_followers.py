"""Who follows each event, and the throttled sending of its state to them."""

from __future__ import annotations

import asyncio

from protocol.errors import TooManyError
from protocol.event_messages import EventState
from protocol.messages import encode
from server.core.follower import Follower, Outgoing
from server.tournaments.tournament import Tournament, TournamentStatus
from server.tournaments.view import state

MAX_FOLLOWED = 8
"""Events one connection may follow."""
PUSH_INTERVAL_S = 1.0
"""A follower gets an event's state at most once in this time (changes close together are sent once)."""


class Followers:
    """Each event's change count and followers; a change's state goes out at most once per `PUSH_INTERVAL_S`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.seq: dict[str, int] = {}
        self.of: dict[str, set[Follower]] = {}
        self.followed: dict[Follower, set[str]] = {}
        """Connection -> the events it follows (the other way round of `of`: a closed one is dropped from all)."""
        self.to_push: dict[str, tuple[EventState, set[Follower]]] = {}
        """Tournament id -> its latest state not sent yet (as published: a change under way is not in it), and to
        whom."""
        self.push_due: dict[str, asyncio.TimerHandle] = {}
        self.pushed_at: dict[str, float] = {}

    def add(self, event_id: str) -> None:
        """Start counting an event's changes (kept in memory)."""
        self.seq.setdefault(event_id, 0)
        self.of.setdefault(event_id, set())

    def state(self, event: Tournament, pairings_from: int | None = None) -> EventState:
        """The event's state as its followers see it, numbered by its changes (`pairings_from`: a page of its
        pairings, `view.state`)."""
        return state(event, self.seq.get(event.event_id, 0), pairings_from)

    def follow(self, s: Follower, event_id: str, on: bool) -> None:
        """Add a connection to a live event's followers (or, `on` false, remove it); at most `MAX_FOLLOWED` each."""
        if event_id not in self.of:
            return
        if on:
            self.check(s, event_id)
            self.enlist(s, event_id)
        else:
            self.discard(s, event_id)

    def check(self, s: Follower, event_id: str | None = None) -> None:
        """Refuse (`too_many`) a connection that would follow more than `MAX_FOLLOWED` events with this one (a
        join or a creation follows the event too: checked before it is stored)."""
        mine = self.followed.get(s, set())
        if event_id not in mine and len(mine) >= MAX_FOLLOWED:
            raise TooManyError(f"this connection follows {MAX_FOLLOWED} events already: unfollow one first")

    def enlist(self, s: Follower, event_id: str) -> None:
        """Make a connection a follower of a live event (checked already)."""
        followers = self.of.get(event_id)
        if followers is not None:
            followers.add(s)
            self.followed.setdefault(s, set()).add(event_id)

    def discard(self, s: Follower, event_id: str) -> None:
        """A connection no longer follows an event."""
        followers = self.of.get(event_id)
        if followers is not None:
            followers.discard(s)
        mine = self.followed.get(s)
        if mine is not None:
            mine.discard(event_id)
            if not mine:
                del self.followed[s]

    def drop(self, s: Follower) -> None:
        """A connection closed: it follows nothing any more (nothing of it is kept)."""
        for event_id in self.followed.pop(s, set()):
            followers = self.of.get(event_id)
            if followers is not None:
                followers.discard(s)

    def forget(self, event_id: str) -> None:
        """Drop an ended event's followers (a last state queued for them still goes out)."""
        for s in self.of.pop(event_id, set()):
            self.discard(s, event_id)

    def publish(self, event: Tournament) -> None:
        """Count a change and send the new state to the followers: at once if none was sent in the last
        `PUSH_INTERVAL_S`, else once at the end of it (the latest state published then, taken now: a change
        being stored meanwhile is sent once, when it is published; a follower may skip numbers)."""
        eid = event.event_id
        self.seq[eid] = self.seq.get(eid, 0) + 1
        followers = self.of.get(eid)
        if not followers:
            return
        self.to_push[eid] = (state(event, self.seq[eid]), followers)
        if eid in self.push_due:
            return
        wait = self.pushed_at.get(eid, -PUSH_INTERVAL_S) + PUSH_INTERVAL_S - self.loop.time()
        if wait <= 0:
            self._push(eid)
        else:
            self.push_due[eid] = self.loop.call_later(wait, self._push, eid)

    def _push(self, eid: str) -> None:
        """Send an event's latest state to its followers, encoded once; a follower that is gone is dropped."""
        self.push_due.pop(eid, None)
        item = self.to_push.pop(eid, None)
        if item is None:
            return
        snapshot, followers = item
        self.pushed_at[eid] = self.loop.time()
        if snapshot.status in (TournamentStatus.FINISHED.value, TournamentStatus.CANCELLED.value):
            del self.pushed_at[eid]
        text = encode(snapshot).encode()
        for session in list(followers):
            if not session.deliver(Outgoing([text])):
                self.discard(session, eid)

"""Presence: each player's open sessions, since when one has had none, and the notices that tell a room who is there.

One record of connection state: a player is connected while it has a session here, or (in a
cluster, `server.cluster.presence.ClusterPresence`) on another live node. Presence changes close
together are told to a room's followers once.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from server.core.follower import Follower
from server.core.match import Seat
from server.core.rooms import Room


@dataclass(frozen=True)
class Connected:
    """A player connected to a node, from these addresses (`node` None: a server on its own)."""

    player_id: str
    addresses: tuple[str, ...]
    node: str | None = None


class Presence:
    """Who is connected to this server (a server on its own: to the whole arena)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, now: Callable[[], float], delay_s: float,
                 rooms_of: Callable[[str], list[Room]], forget_after_s: float = float("inf")) -> None:
        self.loop = loop
        self.now = now
        self.delay_s = delay_s
        """Presence changes within this many seconds of each other are told once."""
        self.rooms_of = rooms_of
        """The rooms where a player holds a seat (the arena's index)."""
        self.started = now()
        self.sessions_of: defaultdict[str, set[Follower]] = defaultdict(set)
        """Player id -> its open connections here."""
        self.away_since: dict[str, float] = {}
        """Player id -> when its last connection here closed, while it has none, the longest away first; kept
        `forget_after_s` (the grace period: a claim counts the absence from the server's start once it is
        forgotten, and past the grace period either gives the same answer), so that every identity that ever
        connected and left does not stay here for good."""
        self.forget_after_s = forget_after_s

    # --- what a cluster adds (a server on its own has no other node) ----------------------------------

    def online(self, player_id: str) -> None:
        """`player_id`'s first connection here opened."""

    def offline(self, player_id: str) -> None:
        """`player_id`'s last connection here closed."""

    def elsewhere(self, player_id: str) -> bool:
        """Whether `player_id` has a connection on another live node."""
        return False

    async def away(self, seat: Seat | None) -> float | None:
        """Since when (arena time) the player in `seat` has had no connection anywhere; None: connected."""
        return self.away_of(seat)

    async def learn(self, room: Room) -> None:
        """A match was loaded here: find out where its players are connected."""

    async def everyone(self) -> list[Connected]:
        """Who is connected, with their addresses (here: to this server)."""
        return [Connected(pid, self.addresses_of(pid)) for pid in list(self.sessions_of)]

    def addresses_of(self, player_id: str) -> tuple[str, ...]:
        """The addresses of a player's connections here."""
        return tuple(sorted({s.remote_host for s in self.sessions_of.get(player_id, ())}))

    # --- the record --------------------------------------------------------------------------------

    def connected(self, room: Room) -> tuple[bool, bool]:
        """Whether each seat's player has a connection (hosted bots always do)."""
        out = [seat is not None and (seat.bot is not None or bool(self.sessions_of.get(seat.player_id))
                                     or self.elsewhere(seat.player_id)) for seat in room.match.seats]
        return out[0], out[1]

    def connect(self, session: Follower) -> list[str]:
        """A session said hello: note its connection; the ids of the unfinished matches where it holds a seat."""
        pid = session.player_id
        assert pid is not None
        first = not self.sessions_of[pid]
        self.sessions_of[pid].add(session)
        self.away_since.pop(pid, None)
        if first:
            self.online(pid)
        seats = []
        for room in self.rooms_of(pid):
            if room.match.status != "finished":
                seats.append(room.match.match_id)
                if first:
                    self.announce(room)
        return seats

    def disconnect(self, session: Follower) -> None:
        """A connection closed: its player's last one here starts its seats' grace periods."""
        pid = session.player_id
        if pid is None:
            return
        self.sessions_of[pid].discard(session)
        if self.sessions_of[pid]:
            return
        del self.sessions_of[pid]
        now = self.now()
        self.away_since[pid] = now
        away = self.away_since
        while (oldest := next(iter(away.items()), None)) is not None and oldest[1] < now - self.forget_after_s:
            del away[oldest[0]]
        self.offline(pid)
        for room in self.rooms_of(pid):
            if room.match.status == "live":
                self.announce(room)

    def away_of(self, seat: Seat | None) -> float | None:
        """Since when the player in `seat` has had no connection here (None: connected, or a hosted bot)."""
        if seat is None or seat.bot is not None or self.sessions_of.get(seat.player_id):
            return None
        return self.away_since.get(seat.player_id, self.started)

    def announce(self, room: Room) -> None:
        """Send the room's presence (spectators, connected seats) to its followers soon: changes that
        come within `delay_s` of each other are told once, so a crowd arriving costs one message per
        follower, not one per arrival."""
        if room.presence_due is None:
            room.presence_due = self.loop.call_later(self.delay_s, self._send, room)

    def _send(self, room: Room) -> None:
        """Send the room's presence now."""
        room.presence_due = None
        room.send_all([room.presence(self.connected(room))])

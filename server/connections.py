"""Who is connected: each player's open sessions, since when one has had none, and presence notices.

A mixin of `Arena`: the one record of connection state (a player is connected while it has a
session here, or in a cluster on another live node), and the coalesced presence messages that
tell a room's followers who is there.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.arena_options import ArenaOptions
from server.match import Seat
from server.rooms import Room
from server.session import Session

if TYPE_CHECKING:
    from server.cluster import Cluster


class Connections:
    """The connection state of the arena (mixed into `Arena`, which provides the rooms and the clock)."""

    loop: asyncio.AbstractEventLoop
    options: ArenaOptions
    cluster: Cluster | None
    started: float
    seeks: dict[str, Session]
    sessions_of: defaultdict[str, set[Session]]
    """Player id -> its open connections: the one record of who is connected."""
    away_since: dict[str, float]
    """Player id -> when its last connection closed (or the server started), while it has none."""
    rooms: dict[str, Room]
    now: Callable[[], float]
    rooms_of: Callable[[str], list[Room]]

    def connected(self, room: Room) -> tuple[bool, bool]:
        """Whether each seat's player has a connection (hosted bots always do)."""
        out = []
        cluster = self.cluster
        for seat in room.match.seats:
            out.append(seat is not None and (seat.bot is not None or bool(self.sessions_of.get(seat.player_id))
                                             or (cluster is not None and cluster.online_elsewhere(seat.player_id))))
        return out[0], out[1]

    def connect(self, session: Session) -> list[str]:
        """A session said hello: note its connection; the ids of the unfinished matches where it holds a seat."""
        pid = session.player_id
        assert pid is not None
        first = not self.sessions_of[pid]
        self.sessions_of[pid].add(session)
        self.away_since.pop(pid, None)
        if first and self.cluster is not None:
            self.cluster.online(pid)
        seats = []
        for room in self.rooms_of(pid):
            if room.match.status != "finished":
                seats.append(room.match.match_id)
                if first:
                    self.announce(room)
        return seats

    def disconnect(self, session: Session) -> None:
        """A connection closed: drop its seeks and follows; its seats' grace periods start."""
        for variant, waiting in list(self.seeks.items()):
            if waiting is session:
                del self.seeks[variant]
                if self.cluster is not None:
                    self.cluster.unseek(variant, session)
        for match_id in list(session.following):
            room = self.rooms.get(match_id)
            if room is not None and room.unfollow(session):
                self.announce(room)
        pid = session.player_id
        if pid is None:
            return
        self.sessions_of[pid].discard(session)
        if self.sessions_of[pid]:
            return
        del self.sessions_of[pid]
        self.away_since[pid] = self.now()
        if self.cluster is not None:
            self.cluster.offline(pid)
        for room in self.rooms_of(pid):
            if room.match.status == "live":
                self.announce(room)

    def away_of(self, seat: Seat | None) -> float | None:
        """Since when the player in `seat` has had no connection (None: connected, or a hosted bot)."""
        if seat is None or seat.bot is not None or self.sessions_of.get(seat.player_id):
            return None
        return self.away_since.get(seat.player_id, self.started)

    def announce(self, room: Room) -> None:
        """Send the room's presence (spectators, connected seats) to its followers soon: changes that
        come within `presence_delay_s` of each other are told once, so a crowd arriving costs one
        message per follower, not one per arrival."""
        if room.presence_due is None:
            room.presence_due = self.loop.call_later(self.options.presence_delay_s, self._send_presence, room)

    def _send_presence(self, room: Room) -> None:
        """Send the room's presence now."""
        room.presence_due = None
        room.send_all([room.presence(self.connected(room))])

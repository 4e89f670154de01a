"""A room: one match with its lock, its followers (players and spectators) and its flag timer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from protocol.messages import Message, Presence, encode
from protocol.position import Side
from server.core.follower import Follower, Outgoing
from server.core.match import Match


class Room:
    """A match and everyone following it; the lock keeps its changes strictly ordered."""

    def __init__(self, match: Match) -> None:
        self.match = match
        self.lock = asyncio.Lock()
        self.followers: dict[Follower, int | None] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.bot_busy = False
        self.finished_at: float | None = None
        self.spectators = 0
        """How many followers hold no seat (kept as followers come and go, not counted on each read)."""
        self.presence_due: asyncio.TimerHandle | None = None
        """A presence message scheduled for the followers (changes close together are sent once)."""

    def follow(self, follower: Follower) -> None:
        """Add a follower (as its seat, if it holds one here)."""
        seat = None if follower.player_id is None else self.match.seat_of(follower.player_id)
        if follower in self.followers:
            self.spectators -= self.followers[follower] is None
        self.followers[follower] = seat
        self.spectators += seat is None
        follower.following.add(self.match.match_id)

    def unfollow(self, follower: Follower) -> bool:
        """Remove a follower; whether it was one."""
        follower.following.discard(self.match.match_id)
        if follower not in self.followers:
            return False
        self.spectators -= self.followers.pop(follower) is None
        return True

    def presence(self, connected: tuple[bool, bool]) -> Presence:
        """Spectator count and which sides are connected (`connected` is by seat)."""
        m = self.match
        return Presence(match_id=m.match_id, spectators=self.spectators,
                        south_connected=connected[m.seat_of_side(Side.SOUTH)],
                        north_connected=connected[m.seat_of_side(Side.NORTH)])

    def send_all(self, messages: Iterable[Message]) -> None:
        """Send to every follower without waiting (encoded once, one write per follower).

        A follower that stopped reading (over its send limit) is dropped and unfollowed.
        """
        self.send_texts([encode(msg).encode() for msg in messages])

    def send_texts(self, texts: list[bytes], first: tuple[Follower, bytes] | None = None) -> None:
        """`send_all` for messages already encoded (each framed once, for every follower); `first` puts a text (an
        ack) ahead of them for one follower, in the same write."""
        out = Outgoing(texts)
        actor = None
        if first is not None:
            actor = first[0]
            if not actor.deliver(out, first[1]):
                self.unfollow(actor)
        for follower in list(self.followers):
            if follower is not actor and not follower.deliver(out):
                self.unfollow(follower)

    def cancel_timer(self) -> None:
        """Forget the pending flag check."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

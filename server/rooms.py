"""A room: one match with its lock, its followers (players and spectators) and its flag timer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from protocol.messages import Message, Presence, encode
from protocol.position import Side
from server.match import Match
from server.session import Session


class Room:
    """A match and everyone following it; the lock keeps its changes strictly ordered."""

    def __init__(self, match: Match) -> None:
        self.match = match
        self.lock = asyncio.Lock()
        self.followers: dict[Session, int | None] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.bot_busy = False
        self.finished_at: float | None = None

    @property
    def spectators(self) -> int:
        """How many followers hold no seat."""
        return sum(1 for seat in self.followers.values() if seat is None)

    def follow(self, session: Session) -> None:
        """Add a follower (as its seat, if it holds one here)."""
        seat = None if session.player_id is None else self.match.seat_of(session.player_id)
        self.followers[session] = seat
        session.following.add(self.match.match_id)

    def unfollow(self, session: Session) -> bool:
        """Remove a follower; whether it was one."""
        session.following.discard(self.match.match_id)
        return self.followers.pop(session, False) is not False

    def presence(self, connected: tuple[bool, bool]) -> Presence:
        """Spectator count and which sides are connected (`connected` is by seat)."""
        m = self.match
        return Presence(match_id=m.match_id, spectators=self.spectators,
                        south_connected=connected[m.seat_of_side(Side.SOUTH)],
                        north_connected=connected[m.seat_of_side(Side.NORTH)])

    def send_all(self, messages: Iterable[Message], first: tuple[Session, Message] | None = None) -> None:
        """Send to every follower without waiting (encoded once, one write per follower).

        `first` puts a message (an ack) ahead of the others for one session, in the same write.
        A follower that stopped reading (over its send limit) is dropped and unfollowed.
        """
        texts = [encode(msg).encode() for msg in messages]
        if first is not None and not first[0].push([encode(first[1]).encode(), *texts]):
            self.unfollow(first[0])
        for session in list(self.followers):
            if first is not None and session is first[0]:
                continue
            if not session.push(texts):
                self.unfollow(session)

    def cancel_timer(self) -> None:
        """Forget the pending flag check."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

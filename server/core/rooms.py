"""A room: one match with its lock, its followers (players and spectators) and its flag timer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from protocol.messages import Message, Presence, encode
from protocol.position import Side
from server.core.match import Match
from server.edge.session import Session, frame


class Room:
    """A match and everyone following it; the lock keeps its changes strictly ordered."""

    def __init__(self, match: Match) -> None:
        self.match = match
        self.lock = asyncio.Lock()
        self.followers: dict[Session, int | None] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.bot_busy = False
        self.finished_at: float | None = None
        self.spectators = 0
        """How many followers hold no seat (kept as followers come and go, not counted on each read)."""
        self.presence_due: asyncio.TimerHandle | None = None
        """A presence message scheduled for the followers (changes close together are sent once)."""

    def follow(self, session: Session) -> None:
        """Add a follower (as its seat, if it holds one here)."""
        seat = None if session.player_id is None else self.match.seat_of(session.player_id)
        if session in self.followers:
            self.spectators -= self.followers[session] is None
        self.followers[session] = seat
        self.spectators += seat is None
        session.following.add(self.match.match_id)

    def unfollow(self, session: Session) -> bool:
        """Remove a follower; whether it was one."""
        session.following.discard(self.match.match_id)
        if session not in self.followers:
            return False
        self.spectators -= self.followers.pop(session) is None
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

    def send_texts(self, texts: list[bytes], first: tuple[Session, bytes] | None = None) -> None:
        """`send_all` for messages already encoded (each framed once, for every follower); `first` puts a text (an
        ack) ahead of them for one session, in the same write."""
        frames = [frame(text) for text in texts]
        actor = None
        if first is not None:
            actor = first[0]
            if not actor.push_frames([frame(first[1]), *frames]):
                self.unfollow(actor)
        for session in list(self.followers):
            if session is not actor and not session.push_frames(frames):
                self.unfollow(session)

    def cancel_timer(self) -> None:
        """Forget the pending flag check."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

"""One client connection's state: its identity, what it follows, its rate limits and send buffer."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection
from websockets.protocol import State

from protocol.messages import ErrorMessage, Message, encode
from server.core.follower import Outgoing
from server.core.rates import NetworkLimiter, RateLimiter, SharedLimiter
from server.edge.connection import client_of, remote_of
from server.edge.writes import BatchedConnection

DEFAULT_SEND_BUFFER = 1 << 20
"""Bytes a connection may leave unread before it is dropped (a client that stopped reading)."""


def frame(text: bytes) -> bytes:
    """`text` as a server's websocket text frame: final, unmasked, no extension (the server offers none), so the
    same bytes go to every connection and an event is framed once for all its followers."""
    size = len(text)
    if size < 126:
        return bytes((0x81, size)) + text
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + text
    return struct.pack("!BBQ", 0x81, 127, size) + text


def push(ws: ServerConnection, texts: list[bytes], limit: int = DEFAULT_SEND_BUFFER) -> bool:
    """Queue text frames on an open connection in one write, without waiting (like `broadcast`).

    A connection whose unsent bytes pass `limit` has stopped reading: it is aborted (its
    handler then cleans up), so no client makes the server buffer without bound. Returns
    whether the connection is still open.
    """
    return push_frames(ws, [frame(text) for text in texts], limit)


def push_frames(ws: ServerConnection, frames: list[bytes], limit: int = DEFAULT_SEND_BUFFER,
                too_many: Callable[[int], bool] | None = None) -> bool:
    """`push` for texts already framed (`frame`): on a `BatchedConnection` written at once, or, when it already
    wrote in this turn of the loop, held and joined with the rest of the turn's; else written after whatever
    websockets itself has queued (a pong), in one write. `too_many(unsent)`, if given, says instead of `limit`
    whether the connection's unsent bytes are more than it may leave."""
    transport = ws.transport
    if isinstance(ws, BatchedConnection):
        if too_many is None:
            return ws.push(frames, limit)
        if ws.protocol.state is not State.OPEN or transport.is_closing():
            return False
        unsent = ws.send_frames(frames)
    else:
        if ws.protocol.state is not State.OPEN or transport is None or transport.is_closing():
            return False
        queued = ws.protocol.data_to_send()
        transport.write(b"".join(queued + frames) if queued or len(frames) != 1 else frames[0])
        unsent = transport.get_write_buffer_size()
    if unsent > limit if too_many is None else too_many(unsent):
        transport.abort()
        return False
    return True


@dataclass
class Peer:
    """What the connections from one network address share: their count and their quotas."""

    address: str
    reads: RateLimiter
    """Rows of public reads (listings, stored games, standings) the address may fetch."""
    messages: RateLimiter = field(default_factory=lambda: RateLimiter(1e9, 10**9))
    """Messages the connections of the address may send, in all."""
    connections: int = 0
    analyses: int = 0
    """Analyses queued or running for this address."""
    analysis_used: float = 0.0
    """Seconds of analysis the address used lately (fading; see `server.front.analysis`, which keeps its
    network's too)."""
    analysis_at: float = 0.0
    sessions: set[Session] = field(default_factory=set)
    lane: RateLimiter | None = None
    """The address's slow lane while the server is overloaded (made on first need)."""
    cooling_until: float = 0.0
    """Until when (monotonic seconds) new connections from the address are refused: one was closed for flooding."""
    network: str = ""
    """The address's network prefix (an IPv4 /24, an IPv6 /64): the unit the seatless gate takes in turns."""

    def full_at(self) -> float:
        """When every budget of the address (and its network's read budget) will have refilled and its cooling
        ended: it can be forgotten then, and its network's budget with its last address."""
        reads = self.reads
        network = reads.shared.full_at() if isinstance(reads, SharedLimiter) and \
            isinstance(reads.shared, NetworkLimiter) else 0.0
        return max(reads.full_at(), network, self.messages.full_at(), self.cooling_until)


class Session:
    """A connection: its websocket, the identity it said hello as, the matches it follows."""

    def __init__(self, ws: ServerConnection, limiter: RateLimiter, peer: Peer | None = None,
                 send_limit: int = DEFAULT_SEND_BUFFER, seatless_send_limit: int | None = None,
                 holds_seat: Callable[[Session], bool] = lambda session: False) -> None:
        self.ws = ws
        self.limiter = limiter
        self.peer = peer or Peer(self.remote_host, RateLimiter(1e9, 10**9))
        self.send_limit = send_limit
        self.seatless_send_limit = send_limit if seatless_send_limit is None else min(send_limit, seatless_send_limit)
        """The unsent bytes a connection without a seat in an unfinished match may leave (a spectator or lobby
        that stopped reading is dropped sooner than a player)."""
        self.holds_seat = holds_seat
        """Whether a connection's identity holds a seat in an unfinished match (asked only past the seatless
        limit, with this session: a function that refers to the session would make a reference cycle, and a
        closed connection in a cycle waits for a full garbage collection, see `server.edge.gc_tuning`)."""
        self.player_id: str | None = None
        self.name: str | None = None
        self.following: set[str] = set()
        self.opened = time.monotonic()
        self.lane: RateLimiter | None = None
        """The connection's slow lane while the server is overloaded (made on first need)."""
        self.evicted = False
        """Being closed to make room for a newcomer at the connection limit."""
        self.cookie_session: str | None = None
        """A browser's account session, from its handshake's cookie (a `hello` with `account` signs in with it)."""
        self.account_session: str | None = None
        """The id of the account session this connection said hello with (None: a guest, or no hello yet)."""

    def send(self, msg: Message) -> None:
        """Queue a message without waiting (a slow client never holds anyone up)."""
        self.push([encode(msg).encode()])

    def dismiss(self, error: ErrorMessage, reason: str) -> None:
        """Send a last error and close the connection (1008, `reason`)."""
        self.send(error)
        asyncio.get_running_loop().create_task(self.ws.close(1008, reason))

    def send_text(self, text: str) -> None:
        """Queue a message already encoded."""
        self.push([text.encode()])

    def push(self, texts: list[bytes]) -> bool:
        """Queue encoded messages; a connection over its send limit is dropped (returns False)."""
        return self.push_frames([frame(text) for text in texts])

    def deliver(self, out: Outgoing, first: bytes | None = None) -> bool:
        """Queue texts encoded for many, framed once for all (with `first`, a text of this session's, ahead)."""
        if out.wire is None:
            out.wire = [frame(text) for text in out.texts]
        return self.push_frames(out.wire if first is None else [frame(first), *out.wire])

    def push_frames(self, frames: list[bytes]) -> bool:
        """`push` for messages already framed (`frame`)."""
        return push_frames(self.ws, frames, self.send_limit, self.too_many)

    def too_many(self, unsent: int) -> bool:
        """Whether `unsent` bytes are more than this connection may leave unread (fewer without a seat)."""
        return unsent > self.send_limit or (unsent > self.seatless_send_limit and not self.holds_seat(self))

    @property
    def remote_host(self) -> str:
        """The client's network address alone (the unit of per-address quotas; behind a trusted proxy, the forwarded
        one)."""
        return client_of(self.ws)

    @property
    def remote(self) -> str:
        """The client's address, for logs."""
        return remote_of(self.ws)

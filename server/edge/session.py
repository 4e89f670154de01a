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


class RateLimiter:
    """A token bucket: `rate` messages a second on average, bursts up to `burst`."""

    __slots__ = ("burst", "now", "rate", "refused", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.now = now
        self.tokens = float(burst)
        self.stamp = now()
        self.refused = 0

    def allow(self, cost: float = 1.0) -> bool:
        """Take `cost` tokens if that many are left; count a refusal otherwise."""
        self.refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        self.refused += 1
        return False

    def refill(self) -> None:
        """Add the tokens earned since the last look."""
        now = self.now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def charge(self, cost: float) -> None:
        """Take `cost` tokens even if fewer are left (a debt later requests wait out)."""
        self.refill()
        self.tokens -= cost

    def wait_s(self, cost: float = 1.0) -> float:
        """Seconds until `cost` tokens will be there (0: now)."""
        self.refill()
        return max(0.0, (min(cost, self.burst) - self.tokens) / self.rate) if self.rate > 0 else float("inf")

    def full_at(self) -> float:
        """When the bucket will be full again (a bucket full by then is the same as a new one)."""
        return self.stamp + max(0.0, self.burst - self.tokens) / self.rate if self.rate > 0 else float("inf")


class SharedLimiter(RateLimiter):
    """An address's bucket that also draws on one bucket of the whole server: a request passes only if both
    have the tokens (many addresses together cannot take more than the server's share)."""

    __slots__ = ("shared",)

    def __init__(self, rate: float, burst: int, shared: RateLimiter) -> None:
        super().__init__(rate, burst, shared.now)
        self.shared = shared

    def allow(self, cost: float = 1.0) -> bool:
        """Take `cost` from this bucket and the shared one, or from neither."""
        if not super().allow(cost):
            return False
        if self.shared.allow(cost):
            return True
        self.tokens += cost  # refused by the server's bucket: this one keeps its tokens
        self.refused += 1
        return False

    def wait_s(self, cost: float = 1.0) -> float:
        """Seconds until both buckets will have `cost` tokens."""
        return max(super().wait_s(cost), self.shared.wait_s(cost))


class NetworkLimiter(SharedLimiter):
    """A network's bucket between its addresses' buckets and the server's (kept while an address of it is known)."""

    __slots__ = ("__weakref__",)


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

    def push_frames(self, frames: list[bytes]) -> bool:
        """`push` for messages already framed (`frame`)."""
        return push_frames(self.ws, frames, self.send_limit, self.too_many)

    def too_many(self, unsent: int) -> bool:
        """Whether `unsent` bytes are more than this connection may leave unread (fewer without a seat)."""
        return unsent > self.send_limit or (unsent > self.seatless_send_limit and not self.holds_seat(self))

    @property
    def remote_host(self) -> str:
        """The peer's network address alone (the unit of per-address quotas)."""
        addr = self.ws.remote_address
        return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)

    @property
    def remote(self) -> str:
        """The peer address, for logs."""
        addr = self.ws.remote_address
        return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) and len(addr) >= 2 else str(addr)

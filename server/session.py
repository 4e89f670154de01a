"""One client connection's state: its identity, what it watches, and its rate limit."""

from __future__ import annotations

import time
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection
from websockets.protocol import State

from protocol.messages import Message, encode


def push(ws: ServerConnection, texts: list[bytes]) -> None:
    """Queue text frames on an open connection in one write, without waiting (like `broadcast`)."""
    if ws.protocol.state is not State.OPEN or ws.transport is None:
        return
    for text in texts:
        ws.protocol.send_text(text)
    data = b"".join(ws.protocol.data_to_send())
    if data:
        ws.transport.write(data)


class RateLimiter:
    """A token bucket: `rate` messages a second on average, bursts up to `burst`."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.now = now
        self.tokens = float(burst)
        self.stamp = now()
        self.refused = 0

    def allow(self) -> bool:
        """Take a token if one is left; count a refusal otherwise."""
        now = self.now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False


class Session:
    """A connection: its websocket, the identity it said hello as, the matches it follows."""

    def __init__(self, ws: ServerConnection, limiter: RateLimiter) -> None:
        self.ws = ws
        self.limiter = limiter
        self.player_id: str | None = None
        self.name: str | None = None
        self.following: set[str] = set()

    def send(self, msg: Message) -> None:
        """Queue a message without waiting (a slow client never holds anyone up)."""
        push(self.ws, [encode(msg).encode()])

    @property
    def remote(self) -> str:
        """The peer address, for logs."""
        addr = self.ws.remote_address
        return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) and len(addr) >= 2 else str(addr)

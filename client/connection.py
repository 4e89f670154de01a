"""The client's websocket link: hello, messages both ways, and reconnection with the last seq.

`Connection.run` is meant to run in a Textual `@work` worker: it reports every server
message and every change of connection state through two callbacks (which post Textual
messages), and reconnects by itself. After a reconnect it asks, for every match it follows,
for the events after the last one it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidURI, WebSocketException

from protocol.messages import (
    CatchUp,
    ErrorMessage,
    Hello,
    LeaveMatch,
    MatchEvent,
    Message,
    MessageError,
    ServerMessage,
    Snapshot,
    SyncMatch,
    WatchMatch,
    Welcome,
    decode_server,
    encode,
)

RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 3.0, 5.0)
"""Seconds to wait before each reconnection attempt; the last one repeats."""

HELLO_TIMEOUT = 10.0


def unpacked(msg: ServerMessage) -> list[ServerMessage]:
    """A catch-up's events one by one, then the catch-up itself (the answer to watch or sync); else `msg`."""
    return [*msg.events, msg] if isinstance(msg, CatchUp) else [msg]


@dataclass
class Followed:
    """A match the client follows: as a player (`sync`) or a spectator (`watch`), and its last seq."""

    watching: bool
    seq: int | None = None


class Connection:
    """A reconnecting websocket client speaking the wire protocol of `protocol.messages`."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        on_message: Callable[[ServerMessage], object],
        on_status: Callable[[bool, str], object],
        token: str | None = None,
        retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        self.on_message = on_message
        self.on_status = on_status
        self.retry_delays = tuple(retry_delays)
        self.welcome: Welcome | None = None
        self.followed: dict[str, Followed] = {}
        self._ws: ClientConnection | None = None
        self._closing = False

    @property
    def connected(self) -> bool:
        """Whether a session with the server is up (hello answered)."""
        return self._ws is not None

    async def run(self) -> None:
        """Connect, and keep reconnecting until `close` is called or the URL is invalid."""
        attempt = 0
        while not self._closing:
            try:
                async with connect(self.url, open_timeout=HELLO_TIMEOUT) as ws:
                    await self._session(ws)
                    attempt = 0
            except InvalidURI as exc:
                self.on_status(False, f"Invalid server address {self.url}: {exc}")
                return
            except (OSError, WebSocketException, TimeoutError, MessageError) as exc:
                if self._closing:
                    return
                delay = self.retry_delays[min(attempt, len(self.retry_delays) - 1)]
                attempt += 1
                reason = str(exc) or type(exc).__name__
                self.on_status(False, f"Connection lost ({reason}). Reconnecting (attempt {attempt})…")
                await asyncio.sleep(delay)
            finally:
                self._ws = None
        self.on_status(False, "Disconnected.")

    async def _session(self, ws: ClientConnection) -> None:
        """One connection: hello, resume followed matches, then pass messages on until it closes."""
        await ws.send(encode(Hello(name=self.name, token=self.token)))
        first = decode_server(await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT))
        if isinstance(first, ErrorMessage) and self.token is not None:
            # The token was refused (e.g. a fresh database): start a new identity.
            self.token = None
            await ws.send(encode(Hello(name=self.name)))
            first = decode_server(await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT))
        if not isinstance(first, Welcome):
            detail = first.message if isinstance(first, ErrorMessage) else first.type
            raise MessageError(f"server refused hello: {detail}")
        self.welcome = first
        self.token = first.token
        self.name = first.name
        self._ws = ws
        self.on_message(first)
        self.on_status(True, f"Connected to {self.url} as {first.name}")
        for match_id, f in list(self.followed.items()):
            resume = WatchMatch if f.watching else SyncMatch
            await ws.send(encode(resume(match_id=match_id, since=f.seq)))
        async for raw in ws:
            try:
                msg = decode_server(raw)
            except MessageError:
                continue
            for part in unpacked(msg):
                self._track(part)
                self.on_message(part)
        raise WebSocketException("the server closed the connection")

    def _track(self, msg: ServerMessage) -> None:
        """Remember the last event number of every followed match."""
        if isinstance(msg, Snapshot):
            f = self.followed.setdefault(msg.match_id, Followed(watching=msg.you is None))
            f.seq = msg.seq
        elif isinstance(msg, MatchEvent) and msg.match_id in self.followed:
            f = self.followed[msg.match_id]
            if f.seq is None or msg.seq == f.seq + 1:
                f.seq = msg.seq

    async def send(self, msg: Message) -> bool:
        """Send a message now; False (and nothing sent) while disconnected."""
        ws = self._ws
        if ws is None:
            return False
        if isinstance(msg, LeaveMatch):
            self.followed.pop(msg.match_id, None)
        elif isinstance(msg, WatchMatch):
            self.followed.setdefault(msg.match_id, Followed(watching=True))
        try:
            await ws.send(encode(msg))
        except WebSocketException:
            return False
        return True

    async def close(self) -> None:
        """Stop reconnecting and close the socket."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(WebSocketException, OSError):
                await ws.close()

    async def drop(self) -> None:
        """Close the socket without stopping: the client reconnects (used to test recovery)."""
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(WebSocketException, OSError):
                await ws.close()

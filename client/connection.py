"""The client's websocket link: hello, messages both ways, and reconnection with the last seq.

`Connection.run` is meant to run in a Textual `@work` worker: it reports every server
message and every change of connection state through two callbacks (which post Textual
messages), and reconnects by itself. After a reconnect it asks, for every match it follows,
for the events after the last one it saw.

The first connection and a dropped one are treated differently. Until the server has
welcomed the client once, a failure that retrying cannot mend (an address that is not a Kalah
Arena server, a refused name) ends `run` at once, and an unreachable server is tried
`first_attempts` times; `run` then returns one sentence saying why it gave up. Once welcomed,
a dropped connection is retried without end (the game waits on the server), after each delay
of the schedule in turn, the last one repeating.

The server names its database in the handshake (`Kalah-Store`); with no token of its own the
client asks `find_token` for one remembered for that database, before it says hello. A
spectator's connection (`guest`) whose name is refused says hello as a guest instead, as the
web page does: watching needs no name of one's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI, WebSocketException

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

FIRST_ATTEMPTS = 6
"""Tries of the first connection before giving up: at once, then after 0.2, 0.5, 1, 2 and 3 s (about 7 s)."""

HELLO_TIMEOUT = 10.0

NAME_CODES = frozenset({"name_taken", "reserved_name"})
"""Refusals of a hello that another name would mend."""

STORE_HEADER = "Kalah-Store"
"""The handshake header in which the server names its database."""

TokenFinder = Callable[[str | None, str], str | None]
"""The remembered token for a name on a server, given the database the server named (None: it named none)."""


def guest_name() -> str:
    """A fresh guest name, as the web page makes them: `guest-` and 8 random letters or digits."""
    return "guest-" + "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))


class NotKalahError(Exception):
    """The address answered, but not as a Kalah Arena server (no websocket, or no welcome to the hello)."""


class HelloRefusedError(Exception):
    """The server answered the hello with an error (a taken or reserved name, an unknown protocol version)."""

    def __init__(self, refusal: ErrorMessage) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def unpacked(msg: ServerMessage) -> list[ServerMessage]:
    """A catch-up's events one by one, then the catch-up itself (the answer to watch or sync); else `msg`."""
    return [*msg.events, msg] if isinstance(msg, CatchUp) else [msg]


def failure_text(exc: BaseException) -> str:
    """A short human reason for a failed or lost connection (never a traceback or a validation dump)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    if isinstance(exc, TimeoutError):
        return "no answer"
    if isinstance(exc, ConnectionClosed):
        frame = exc.rcvd
        if frame is not None and frame.reason:
            return f"the server closed the connection: {frame.reason}"
        return "the server closed the connection"
    if isinstance(exc, InvalidStatus):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def is_lasting(exc: BaseException) -> bool:
    """Whether a failure of the first connection says the address is wrong, so trying again will not help."""
    if isinstance(exc, InvalidStatus):
        return exc.response.status_code < 500  # 5xx: a proxy in front of a server that is not up yet
    return isinstance(exc, InvalidHandshake | NotKalahError)


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
        session: str | None = None,
        retry_delays: Sequence[float] = RETRY_DELAYS,
        first_attempts: int = FIRST_ATTEMPTS,
        engine: bool = False,
        find_token: TokenFinder | None = None,
        guest: bool = False,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        self.session = session
        """A signed-in account's session: the hello says it (and no guest token is looked for)."""
        self.engine = engine
        """Whether a program plays under this identity (a new one is named `engine:NAME`)."""
        self.on_message = on_message
        self.on_status = on_status
        self.retry_delays = tuple(retry_delays)
        self.first_attempts = first_attempts
        self.welcome: Welcome | None = None
        """The last welcome: None until the server has accepted this client once."""
        self.followed: dict[str, Followed] = {}
        self.find_token = find_token
        self.guest = guest
        """Whether a refused name is replaced by a guest's (a spectator needs no name of its own)."""
        self.guest_instead: str | None = None
        """The name refused before this client came in as a guest."""
        self.store: str | None = None
        """The database the server named in its last handshake."""
        self._ws: ClientConnection | None = None
        self._closing = False
        self._failures = 0
        """Failed attempts since the last welcome."""

    @property
    def connected(self) -> bool:
        """Whether a session with the server is up (hello answered)."""
        return self._ws is not None

    async def run(self) -> str | None:
        """Connect and keep reconnecting until `close`; returns why it gave up instead (None: closed)."""
        while not self._closing:
            try:
                async with connect(self.url, open_timeout=HELLO_TIMEOUT) as ws:
                    await self._session(ws)
            except InvalidURI:
                return f"{self.url} is not a server address: expected ws://host:port or wss://host:port."
            except HelloRefusedError as exc:
                if not self._back_to_last_identity(exc.refusal):
                    refusal = exc.refusal
                    hint = " (--name NAME plays under another name)" if refusal.code in NAME_CODES else \
                        f" (kalah login {self.name} --server {self.url} signs in again)" \
                        if refusal.code == "bad_session" else ""
                    return f"{self.url} refused to let you in as {self.name!r}: {refusal.message}{hint}"
            except (OSError, WebSocketException, TimeoutError, MessageError, NotKalahError) as exc:
                if self._closing:
                    break
                gave_up = self._failed(exc)
                if gave_up is not None:
                    return gave_up
                await asyncio.sleep(self.retry_delays[min(self._failures - 1, len(self.retry_delays) - 1)])
            finally:
                self._ws = None
        self.on_status(False, "Disconnected.")
        return None

    def _failed(self, exc: BaseException) -> str | None:
        """Count a failed or lost connection and say so; the reason to give up, if this is the end."""
        self._failures += 1
        reason = failure_text(exc)
        if self.welcome is not None:
            self.on_status(False, f"Connection lost ({reason}). Reconnecting (attempt {self._failures})… "
                                  "Moves wait until it is back; q quits.")
            return None
        if is_lasting(exc):
            why = str(exc) if isinstance(exc, NotKalahError) else f"it answered {reason}"
            return (f"{self.url} is not a Kalah Arena server ({why}): name one with --server (`kalah serve` prints "
                    "its address).")
        if self._failures >= self.first_attempts:
            tries = "once" if self._failures == 1 else f"{self._failures} times"
            return (f"Could not reach a Kalah Arena server at {self.url} ({reason}; tried {tries}): start one there "
                    "with `kalah serve`, or name another with --server.")
        self.on_status(False, f"Cannot reach {self.url} ({reason}). "
                              f"Trying again ({self._failures + 1} of {self.first_attempts})…")
        return None

    def _back_to_last_identity(self, refusal: ErrorMessage) -> bool:
        """After a refused change of name, say why and go back to the name last welcomed; False if not a change."""
        last = self.welcome
        if last is None or self.name == last.name:
            return False
        self.on_message(refusal)
        self.name, self.token = last.name, last.token
        return True

    async def _hello(self, ws: ClientConnection) -> ServerMessage:
        """Say hello and read the answer; an answer that is not the wire protocol's is `NotKalahError`."""
        await ws.send(encode(Hello(name=self.name, token=None if self.session else self.token, session=self.session,
                                   engine=self.engine)))
        try:
            raw = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT)
        except TimeoutError:
            if self.welcome is None:
                raise NotKalahError(f"no answer to hello within {HELLO_TIMEOUT:.0f} s") from None
            raise
        try:
            return decode_server(raw)
        except MessageError:
            raise NotKalahError("its answer to hello is not a Kalah Arena message") from None

    async def _session(self, ws: ClientConnection) -> None:
        """One connection: hello, resume followed matches, then pass messages on until it closes."""
        response = ws.response
        self.store = response.headers.get(STORE_HEADER) if response is not None else None
        if self.token is None and self.session is None and self.find_token is not None:
            self.token = self.find_token(self.store, self.name)
        first = await self._hello(ws)
        if isinstance(first, ErrorMessage) and self.token is not None:
            # The token was refused (e.g. a fresh database): start a new identity.
            self.token = None
            first = await self._hello(ws)
        if (isinstance(first, ErrorMessage) and first.code in NAME_CODES and self.guest
                and self.welcome is None):
            self.guest_instead, self.name = self.name, guest_name()
            first = await self._hello(ws)
        if isinstance(first, ErrorMessage):
            raise HelloRefusedError(first)
        if not isinstance(first, Welcome):
            raise NotKalahError(f"it answered hello with {first.type!r}, not a welcome")
        self.welcome = first
        self.token = first.token
        self.name = first.name
        self._failures = 0
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

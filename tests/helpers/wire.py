"""Helpers for tests that talk to a real server: a scripted client, a live match, a fake clock, polling.

Tests wait for what they can await (a reply, an event) and poll with `eventually` only for what
has no message of its own; none sleeps for a fixed time to let the server catch up.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast, overload

from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Origin

from protocol import Action, Position, Sow, Swap, Transfer

Json = dict[str, Any]
T = TypeVar("T")

OPERATOR = "test-operator-secret"
"""The operator token every test server is started with (rated exhibitions need it)."""

HONEST = "127.0.0.2"
"""The loopback source address of honest clients in tests of attacks from many addresses."""


def attacker(i: int, network: int = 1) -> str:
    """The `i`-th attacking address of network 127.`network`.0.0/16 (256 to a /24)."""
    return f"127.{network}.{i // 250}.{1 + i % 250}"


class Client:
    """A scripted websocket client that keeps every message it receives."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[Json] = []
        self._pos = 0
        self.welcome: Json = {}

    @classmethod
    async def open(cls, url: str, name: str | None = "tester", token: str | None = None,
                   source: str | None = None, origin: str | None = None,
                   tls: ssl.SSLContext | None = None) -> Client:
        """Connect (from loopback address `source`, e.g. 127.0.0.2, if given; as a page of `origin`, if given; to a
        wss server trusted by `tls`), and say hello unless `name` is None."""
        extra: dict[str, Any] = {} if source is None else {"local_addr": (source, 0)}
        if tls is not None:
            extra["ssl"] = tls
        client = cls(await connect(url, max_size=2**22, origin=cast(Origin | None, origin), **extra))
        if name is not None:
            hello: Json = {"type": "hello", "name": name}
            if token:
                hello["token"] = token
            await client.send(**hello)
            client.welcome = await client.expect("welcome")
        return client

    async def send(self, **msg: Any) -> None:
        """Send one JSON message."""
        await self.ws.send(json.dumps(msg))

    async def next(self, timeout: float = 5.0) -> Json:
        """The next message not yet consumed."""
        if self._pos >= len(self.seen):
            raw = await asyncio.wait_for(self.ws.recv(), timeout)
            self.seen.append(json.loads(raw))
        self._pos += 1
        return self.seen[self._pos - 1]

    async def expect(self, type_: str, timeout: float = 5.0, where: Callable[[Json], bool] | None = None) -> Json:
        """Skip ahead to the next message of `type_` (and matching `where`)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"no {type_!r} message within {timeout} s; saw {self.seen[-5:]}")
            try:
                msg = await self.next(left)
            except TimeoutError:
                raise AssertionError(f"no {type_!r} message within {timeout} s; saw {self.seen[-5:]}") from None
            if msg["type"] == type_ and (where is None or where(msg)):
                return msg

    async def request(self, type_: str, timeout: float = 5.0, **msg: Any) -> Json:
        """Send `msg` and return the next reply of `type_` (one connection's requests are served in order)."""
        await self.send(**msg)
        return await self.expect(type_, timeout)

    async def error(self, timeout: float = 5.0) -> str:
        """The code of the next error message."""
        return str((await self.expect("error", timeout))["code"])

    def received(self, type_: str, where: Callable[[Json], bool] | None = None) -> list[Json]:
        """Every message of `type_` (and matching `where`) received so far, consumed or not."""
        return [m for m in self.seen if m["type"] == type_ and (where is None or where(m))]

    async def until_received(self, type_: str, count: int, where: Callable[[Json], bool] | None = None,
                             timeout: float = 5.0) -> list[Json]:
        """Read on until `count` messages of `type_` (matching `where`) have been received; returns them."""
        deadline = asyncio.get_running_loop().time() + timeout
        while len(found := self.received(type_, where)) < count:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"{len(found)} of {count} {type_!r} messages within {timeout} s")
            try:
                await self.next(left)
            except TimeoutError:
                raise AssertionError(f"{len(found)} of {count} {type_!r} messages within {timeout} s") from None
        return found

    def events(self, match_id: str) -> list[Json]:
        """Every event of `match_id` received so far."""
        return self.received("event", lambda m: m["match_id"] == match_id)

    async def close(self) -> None:
        """Close the connection."""
        await self.ws.close()


async def move_answer(client: Client, match_id: str, ply: int, house: int, timeout: float = 30.0) -> Json:
    """Send a move; its ack or its refusal (other messages on the way are skipped)."""
    await client.send(type="move", match_id=match_id, ply=ply, bin=house)
    while True:
        reply = await client.next(timeout=timeout)
        if reply["type"] in ("ack", "error"):
            return reply


def is_game_over(msg: Json) -> bool:
    """Whether an event message ends its match."""
    return bool(msg.get("kind") == "game_over")


async def live_match(url: str, variant: str = "kalah(6,4)",
                     names: tuple[str, str] = ("alice", "bob")) -> tuple[Client, Client, str]:
    """Two new players in a new live match: the first (South) created it, the second (North) joined."""
    south = await Client.open(url, names[0])
    match_id = str((await south.request("snapshot", type="create", variant=variant, seat="south"))["match_id"])
    north = await Client.open(url, names[1])
    await north.request("snapshot", type="join", match_id=match_id)
    return south, north, match_id


def action_msg(action: Action, match_id: str, ply: int) -> Json:
    """The wire message for an action at `ply`."""
    if isinstance(action, Sow):
        return {"type": "move", "match_id": match_id, "ply": ply, "bin": action.bin}
    if isinstance(action, Swap):
        return {"type": "swap", "match_id": match_id, "ply": ply}
    assert isinstance(action, Transfer)
    return {"type": "transfer", "match_id": match_id, "ply": ply, "src": action.src, "dst": action.dst}


class FakeClock:
    """A time source (seconds) that stands still until the test moves it on."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        """The time now."""
        return self.t

    def advance(self, seconds: float) -> None:
        """Move the time on by `seconds`."""
        self.t += seconds


class FirstLegal:
    """A stand-in hosted bot named `first`: plays the first legal action at once."""

    @classmethod
    def make(cls, name: str) -> FirstLegal:
        """The factory the server calls with a bot name; only `first` exists."""
        if name != "first":
            raise ValueError(f"no bot {name}")
        return cls()

    def decide(self, position: Position, budget_s: float) -> Action:
        """The first legal action."""
        return position.legal_actions()[0]

    async def choose(self, position: Position, budget_s: float) -> Action:
        """The first legal action (the asynchronous form of `decide`)."""
        return self.decide(position, budget_s)


@overload
async def eventually(cond: Callable[[], Awaitable[T]], timeout: float = ..., what: str = ...) -> T: ...
@overload
async def eventually(cond: Callable[[], T], timeout: float = ..., what: str = ...) -> T: ...
async def eventually(cond: Callable[[], Any], timeout: float = 5.0, what: str = "the condition") -> Any:
    """Poll `cond` (plain or async) until it returns something true, and return that; fail after `timeout` s.

    For states that no message announces; when a reply or an event tells, await that instead.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = cond()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"{what} did not hold within {timeout} s (last: {value!r})")
        await asyncio.sleep(0.01)


def assert_continuous(client: Client, match_id: str) -> list[int]:
    """Check that the client's messages for `match_id` start with a base (a snapshot or a catch-up) and that
    every event after it numbers one more than the last seen (a later snapshot or catch-up sets the base
    again); returns the event numbers in the order received."""
    last: int | None = None
    got: list[int] = []
    for msg in client.seen:
        if msg.get("match_id") != match_id or msg["type"] not in ("snapshot", "catch_up", "event"):
            continue
        if msg["type"] == "event":
            assert last is not None, f"event {msg['seq']} came before any snapshot of {match_id}"
            assert msg["seq"] == last + 1, f"event {msg['seq']} after {last} for {match_id}"
            got.append(msg["seq"])
            last = msg["seq"]
        else:
            events = msg.get("events", [])
            last = events[-1]["seq"] if events else msg["seq"]
    return got

"""Bad input over real sockets, the health check, limits and shutdown; plus the test client others use."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.app import RunningServer, start_server

Json = dict[str, Any]


class Client:
    """A scripted websocket client that keeps every message it receives."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[Json] = []
        self._pos = 0
        self.welcome: Json = {}

    @classmethod
    async def open(cls, url: str, name: str | None = "tester", token: str | None = None) -> Client:
        """Connect, and say hello unless `name` is None."""
        client = cls(await connect(url, max_size=2**22))
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
            msg = await self.next(left)
            if msg["type"] == type_ and (where is None or where(msg)):
                return msg

    async def error(self, timeout: float = 5.0) -> str:
        """The code of the next error message."""
        return str((await self.expect("error", timeout))["code"])

    def events(self, match_id: str) -> list[Json]:
        """Every event of `match_id` received so far."""
        return [m for m in self.seen if m["type"] == "event" and m["match_id"] == match_id]

    async def close(self) -> None:
        """Close the connection."""
        await self.ws.close()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server on a free loopback port with a fresh database and tight limits for abuse tests."""
    running = await start_server(tmp_path / "arena.sqlite3", rate=20, burst=20, max_refused=60,
                                 max_connections=8)
    try:
        yield running
    finally:
        await running.close()


async def live_match(url: str, variant: str = "kalah(6,4)") -> tuple[Client, Client, str]:
    """Alice (South) and Bob (North) in a new live match."""
    alice = await Client.open(url, "alice")
    await alice.send(type="create", variant=variant, seat="south")
    match_id = str((await alice.expect("snapshot"))["match_id"])
    bob = await Client.open(url, "bob")
    await bob.send(type="join", match_id=match_id)
    await bob.expect("snapshot")
    return alice, bob, match_id


async def test_oversized_frame_closes_cleanly(server: RunningServer) -> None:
    """A frame over the size limit closes that connection with 1009; others carry on."""
    other = await Client.open(server.url, "other")
    c = await Client.open(server.url, "big")
    await c.ws.send("x" * 100_000)
    with pytest.raises(ConnectionClosed) as info:
        await asyncio.wait_for(c.ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    await other.send(type="list")
    assert (await other.expect("matches"))["matches"] == []


async def test_malformed_messages_get_typed_errors(server: RunningServer) -> None:
    """Invalid JSON, unknown types and wrong fields each get their error code; the connection lives."""
    c = await Client.open(server.url, None)
    for text, code in [("{nope", "bad_json"), ("[]", "bad_json"), ('{"type": "fly"}', "unknown_type"),
                       ('{"type": "hello"}', "bad_field"), ('{"type": "hello", "name": "x", "y": 1}', "bad_field"),
                       ('{"type": "move", "match_id": "m", "ply": 1e30, "bin": 1}', "bad_field"),
                       ('{"type": "join", "match_id": "m1"}', "hello_first")]:
        await c.ws.send(text)
        assert await c.error() == code, text
    await c.send(type="hello", name="late")
    assert (await c.expect("welcome"))["name"] == "late"
    await c.send(type="hello", name="again")
    assert await c.error() == "already_hello"


async def test_bad_token_is_refused(server: RunningServer) -> None:
    """A hello with a token of no identity is refused; a real token restores the identity."""
    c = await Client.open(server.url, None)
    await c.send(type="hello", name="x", token="p00000000000" + "a" * 43)
    assert await c.error() == "bad_token"
    first = await Client.open(server.url, "carol")
    again = await Client.open(server.url, "ignored", token=first.welcome["token"])
    assert again.welcome["player_id"] == first.welcome["player_id"] and again.welcome["name"] == "carol"


async def test_wrong_actions_get_typed_errors(server: RunningServer) -> None:
    """Out of turn, illegal, stale, future, someone else's match, unknown match: each its code."""
    alice, bob, mid = await live_match(server.url, "kalah(6,4,pie=on)")
    stranger = await Client.open(server.url, "mallory")
    cases: list[tuple[Client, Json, str]] = [
        (bob, {"type": "move", "match_id": mid, "ply": 0, "bin": 9}, "out_of_turn"),
        (alice, {"type": "move", "match_id": mid, "ply": 0, "bin": 9}, "illegal_move"),
        (alice, {"type": "move", "match_id": mid, "ply": 5, "bin": 1}, "bad_ply"),
        (alice, {"type": "swap", "match_id": mid, "ply": 0}, "swap_not_offered"),
        (alice, {"type": "transfer", "match_id": mid, "ply": 0}, "bad_transfer"),
        (stranger, {"type": "move", "match_id": mid, "ply": 0, "bin": 1}, "not_your_match"),
        (stranger, {"type": "resign", "match_id": mid}, "not_your_match"),
        (stranger, {"type": "join", "match_id": mid}, "match_full"),
        (stranger, {"type": "watch", "match_id": "nosuch"}, "unknown_match"),
        (alice, {"type": "claim", "match_id": mid}, "claim_refused"),
        (alice, {"type": "create", "opponent": "no-such-bot"}, "unknown_bot"),
    ]
    for who, msg, code in cases:
        await who.send(**msg)
        assert await who.error() == code, msg
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await alice.send(type="move", match_id=mid, ply=0, bin=2)
    assert await alice.error() == "stale_ply"


async def test_flood_is_rate_limited_then_closed(server: RunningServer) -> None:
    """A flood gets rate_limited errors, then a 1008 close; another match is unaffected."""
    alice, bob, mid = await live_match(server.url)
    flooder = await Client.open(server.url, "flood")
    for _ in range(200):
        try:
            await flooder.send(type="list")
        except ConnectionClosed:
            break
    assert await flooder.error() == "rate_limited"
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await asyncio.wait_for(flooder.ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1008
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    assert (await bob.expect("event", where=lambda m: m["kind"] == "action"))["action"] == "1"


async def test_connection_limit_refuses_with_503(server: RunningServer) -> None:
    """Connections beyond the limit are refused at the handshake with HTTP 503."""
    clients = [await Client.open(server.url, f"c{i}") for i in range(8)]
    with pytest.raises(InvalidStatus) as info:
        await connect(server.url)
    assert info.value.response.status_code == 503
    await clients[0].close()
    for _ in range(50):
        await asyncio.sleep(0.05)
        try:
            extra = await Client.open(server.url, "later")
            break
        except InvalidStatus:
            continue
    else:
        raise AssertionError("a freed connection slot was never reusable")
    assert extra.welcome["name"] == "later"


async def test_health_check_over_plain_http(server: RunningServer) -> None:
    """GET /health on the websocket port answers 200 with JSON figures."""
    url = f"http://{server.host}:{server.port}/health"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    data = json.loads(body)
    assert data["status"] == "ok" and data["matches"] == 0


async def test_graceful_close_sends_going_away(tmp_path: Path) -> None:
    """Closing the server closes every connection with 1001 after finishing writes."""
    running = await start_server(tmp_path / "a.sqlite3")
    alice, bob, mid = await live_match(running.url)
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await running.close()
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await asyncio.wait_for(bob.ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1001

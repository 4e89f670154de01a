"""Bad input over real sockets, the health check, limits and shutdown."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.wire import Client, Json, eventually, live_match

__all__ = ["Client"]  # still imported from here by older test modules; the helpers live in tests.helpers.wire


@pytest.fixture
async def server(serve: Serve) -> RunningServer:
    """A server with a fresh database and tight limits for abuse tests."""
    return await serve(rate=20, burst=20, max_refused=60, max_connections=8)


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


async def test_an_event_that_cannot_exist_is_an_unknown_event(server: RunningServer) -> None:
    """An event named by an id of the `/event/ID` page's shape that no event can have (a dash, over 24 characters)
    is `unknown_event` on every request that names one, as an unknown id of an event's own shape is; only an id
    of no such shape is a `bad_field`."""
    c = await Client.open(server.url, "reader")
    for event_id in ("nosuchevent", "with-dash", "x" * 64):
        for request in ("event", "event_join", "event_leave"):
            await c.send(type=request, event_id=event_id)
            assert await c.error() == "unknown_event", (request, event_id)
    for event_id in ("with space", "x" * 65, ""):
        await c.send(type="event", event_id=event_id)
        assert await c.error() == "bad_field", event_id


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

    async def admitted() -> Client | None:
        """A new client, or None while the server still refuses one."""
        try:
            return await Client.open(server.url, "later")
        except InvalidStatus:
            return None

    extra = await eventually(admitted, what="a freed connection slot being reusable")
    assert extra is not None and extra.welcome["name"] == "later"


async def test_health_check_over_plain_http(server: RunningServer) -> None:
    """GET /health on the websocket port answers 200 with JSON figures."""
    url = f"http://{server.host}:{server.port}/health"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    data = json.loads(body)
    assert data["status"] == "ok" and data["matches"] == 0


async def test_graceful_close_sends_going_away(serve: Serve) -> None:
    """Closing the server closes every connection with 1001 after finishing writes."""
    running = await serve()
    alice, bob, mid = await live_match(running.url)
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await running.close()
    with pytest.raises(ConnectionClosed) as info:
        while True:
            await asyncio.wait_for(bob.ws.recv(), 5)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1001


async def test_a_program_says_hello_as_an_engine_and_is_named_so(arena: RunningServer) -> None:
    """`hello {name, engine: true}` makes the identity `engine:NAME`; a person cannot take such a name, and an
    engine name too long for the wire is refused as a bad field."""
    bot = await Client.open(arena.url, None)
    await bot.send(type="hello", name="mybot", engine=True)
    assert (await bot.expect("welcome"))["name"] == "engine:mybot"
    person = await Client.open(arena.url, None)
    await person.send(type="hello", name="engine:mybot")
    assert await person.error() == "reserved_name"
    await person.send(type="hello", name="x" * 30, engine=True)
    assert await person.error() == "bad_field"

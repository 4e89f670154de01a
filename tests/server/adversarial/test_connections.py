"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) holding
connections: slots per network and in all, silent connections, flooding and ignored retry hints leave others room."""

from __future__ import annotations

import asyncio
import contextlib

from websockets.exceptions import InvalidStatus

from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, attacker, eventually


async def refused_status(url: str, source: str) -> int | None:
    """The HTTP status a handshake from `source` is refused with; None if it was accepted (then closed)."""
    try:
        client = await Client.open(url, None, source=source)
    except InvalidStatus as exc:
        return exc.response.status_code
    await client.close()
    return None


async def test_a_full_server_sheds_the_crowded_network_for_a_newcomer(serve: Serve) -> None:
    """At the connection limit, a newcomer from another network is let in and the crowded network's cheapest
    connection is closed (1013, try again later); a seated player's never is. A newcomer of the crowded
    network itself is refused (503)."""
    server = await serve(max_connections=12)
    seated = await Client.open(server.url, "seated", source=attacker(0))
    match = await seated.request("snapshot", type="create", opponent="random", seat="south")
    flood = [await Client.open(server.url, f"idle{i}", source=attacker(1 + i % 4)) for i in range(11)]
    assert await refused_status(server.url, attacker(9)) == 503, "the crowded network got a twelfth connection"
    honest = await Client.open(server.url, "honest", source=HONEST)
    mine = await honest.request("snapshot", type="create", opponent="random", seat="south")
    await honest.request("ack", type="move", match_id=mine["match_id"], ply=0, bin=1)
    closed: list[int] = []
    for client in flood:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.ws.wait_closed(), 0.05 if closed else 5)
        if client.ws.close_code is not None:
            closed.append(client.ws.close_code)
    assert closed == [1013]
    await seated.request("ack", type="move", match_id=match["match_id"], ply=0, bin=1)
    for client in (seated, honest, *flood):
        await client.close()


async def test_one_network_cannot_take_every_slot(serve: Serve) -> None:
    """Connections from one /24 are capped (HTTP 429) however many of its addresses they come from."""
    server = await serve(max_per_prefix=6)
    held = [await Client.open(server.url, None, source=attacker(i)) for i in range(6)]
    assert await refused_status(server.url, attacker(6)) == 429, "a seventh connection from one /24 was accepted"
    honest = await Client.open(server.url, "honest", source=HONEST)
    for client in (*held, honest):
        await client.close()


async def test_connections_without_hello_are_capped_in_all(serve: Serve) -> None:
    """At the server's cap on connections that have not said hello, a newcomer from another network is let in
    (and can say hello and play) while the crowded network's oldest silent connection is closed (1013); a
    silent newcomer of that network itself is refused (503); a connection that said hello no longer counts."""
    server = await serve(max_anonymous=4)
    greeted = await Client.open(server.url, "greeted", source=attacker(9))
    silent = [await Client.open(server.url, None, source=attacker(i)) for i in range(4)]
    try:
        await Client.open(server.url, None, source=attacker(5))
    except InvalidStatus as exc:
        assert exc.response.status_code == 503 and exc.response.headers["Retry-After"] == "5"
    else:
        raise AssertionError("a fifth connection without hello was let in from the crowded network")
    honest = await Client.open(server.url, "honest", source=HONEST)
    match = await honest.request("snapshot", type="create", opponent="random", seat="south")
    await honest.request("ack", type="move", match_id=match["match_id"], ply=0, bin=1)
    await asyncio.wait_for(silent[0].ws.wait_closed(), 5)
    assert silent[0].ws.close_code == 1013
    assert all(client.ws.close_code is None for client in (greeted, *silent[1:]))
    for client in (greeted, honest, *silent):
        await client.close()


async def test_an_address_closed_for_flooding_waits_before_connecting_again(serve: Serve) -> None:
    """A connection closed for flooding (1008 past `max_refused`) makes its address wait `flood_cooling_s`: its
    new handshakes get HTTP 429 with `Retry-After`, while another address of the same network still connects."""
    server = await serve(rate=1, burst=2, max_refused=3, flood_cooling_s=60)
    flooder = await Client.open(server.url, None, source=attacker(0))
    for _ in range(10):
        await flooder.send(type="list")
    await asyncio.wait_for(flooder.ws.wait_closed(), 5)
    assert flooder.ws.close_code == 1008
    try:
        await Client.open(server.url, None, source=attacker(0))
    except InvalidStatus as exc:
        assert exc.response.status_code == 429 and 55 <= int(exc.response.headers["Retry-After"]) <= 60
    else:
        raise AssertionError("the flooding address connected again at once")
    neighbour = await Client.open(server.url, "neighbour", source=attacker(1))
    await neighbour.request("matches", type="list")
    await neighbour.close()


async def test_a_connection_that_ignores_retry_hints_is_read_slowly(serve: Serve) -> None:
    """Past `refusal_pause_after` load refusals in a row the server waits out each hint (at most 1 s) before it
    reads the connection's next message: every message is still answered, and the pause is counted."""
    server = await serve(rate=0.1, burst=2, refusal_pause_after=5, max_refused=1000)
    client = await Client.open(server.url, None, source=attacker(0))
    for _ in range(8):
        await client.send(type="list")
    replies = [await client.next() for _ in range(8)]
    assert [r["type"] for r in replies] == ["matches"] * 2 + ["error"] * 6
    assert {r["code"] for r in replies[2:]} == {"rate_limited"}
    await eventually(lambda: server.admission.paused == 1, what="the sixth refusal in a row to be waited out")
    await client.close()

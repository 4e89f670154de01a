"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) making the
server fall behind: while the event loop runs late, seated players come first, reads are shared, the seatless wait
their turn at the gate and the analysis thread is paced."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import urllib.request

from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, attacker, eventually, live_match
from tests.server.adversarial.test_analyses import ask
from tests.server.test_metrics import scrape


async def fall_behind(server: RunningServer) -> None:
    """Make the server's event loop fall behind until it marks itself overloaded (as under a flood)."""
    loop = asyncio.get_running_loop()
    while not server.admission.overloaded():
        loop.call_soon(time.sleep, 0.3)
        await asyncio.sleep(0.01)


async def test_an_overloaded_server_serves_seated_players_first(serve: Serve) -> None:
    """While the event loop falls behind, a connection without a seat gets a slow lane (past 10 messages
    `rate_limited` with a retry hint) and a seated player's moves are still acknowledged at once."""
    server = await serve(overload_hold_s=60, overload_rate=0.001)
    alice, bob, match_id = await live_match(server.url)
    lobby = await Client.open(server.url, "lobby", source=HONEST)
    loop = asyncio.get_running_loop()
    while not server.admission.busy_until:  # the loop falls behind, again and again, as under a flood
        loop.call_soon(time.sleep, 0.3)
        await asyncio.sleep(0.01)
    for _ in range(13):
        await lobby.send(type="list")
    replies = [await lobby.next() for _ in range(13)]
    assert [r["type"] for r in replies[:10]] == ["matches"] * 10
    assert all(r["code"] == "rate_limited" and r["retry_ms"] >= 1000 for r in replies[10:]), replies[10:]
    await alice.request("ack", type="move", match_id=match_id, ply=0, bin=1)
    for client in (alice, bob, lobby):
        await client.close()


async def test_an_overloaded_server_makes_a_public_read_once_for_many_askers(serve: Serve) -> None:
    """While the event loop falls behind, the lobby's list and a page of stored games are made once and that
    answer goes to every address asking alike (each charged its rows): reads from many addresses cost the
    server one read, not one per asker."""
    server = await serve(overload_hold_s=60, shared_reads_s=60, overload_rate=100, overload_address_rate=100)
    alice, bob, match_id = await live_match(server.url)
    await fall_behind(server)
    askers = [await Client.open(server.url, None, source=attacker(i)) for i in range(12)]
    made = server.router.answers.made
    lists = [await asker.request("matches", type="list") for asker in askers]
    pages = [await asker.request("game_list", type="games", limit=50) for asker in askers]
    assert server.router.answers.made - made == 2
    assert all(reply == lists[0] for reply in lists) and [m["match_id"] for m in lists[0]["matches"]] == [match_id]
    assert all(reply == pages[0] for reply in pages)
    for client in (alice, bob, *askers):
        await client.close()


async def test_an_overloaded_server_gives_each_address_one_slow_lane(serve: Serve) -> None:
    """While the event loop falls behind, the connections without a seat of one address share one slow lane:
    more connections do not buy more messages; another address keeps its own lane."""
    server = await serve(overload_hold_s=60, overload_rate=100, overload_address_rate=2)
    many = [await Client.open(server.url, None, source=attacker(0)) for _ in range(6)]
    other = await Client.open(server.url, None, source=attacker(1))
    await fall_behind(server)
    for conn in many:
        await conn.send(type="list")
    replies = [await conn.next() for conn in many]  # the address's burst of 4, then refused
    assert [r["type"] for r in replies[:4]] == ["matches"] * 4
    assert all(r["code"] == "rate_limited" and r["retry_ms"] >= 1000 for r in replies[4:]), replies[4:]
    assert (await other.request("matches", type="list"))["type"] == "matches"
    for client in (*many, other):
        await client.close()


async def fall_behind_a_little(server: RunningServer) -> None:
    """Make the server's event loop run late until connections without a seat wait at the gate."""
    loop = asyncio.get_running_loop()
    for _ in range(100):
        if server.admission.pressed():
            return
        # longer than the lag sampler's step and threshold together, so whatever the phase of its sleep, it wakes
        # late by more than the threshold (a block of 60 ms could lock to its phase and never be seen late)
        loop.call_soon(time.sleep, 0.15)
        await asyncio.sleep(0.01)
    raise AssertionError("the server's event loop was never seen late")


async def test_a_late_loop_serves_seated_players_while_the_seatless_wait_their_turn(serve: Serve) -> None:
    """While the event loop runs late, a message of a connection without a seat waits at the gate, unread, and
    the networks take turns however many messages one sends; a seated player's move is acknowledged while they
    wait, and every waiting message is answered once let through."""
    server = await serve(seatless_hold_s=60)
    alice, bob, match_id = await live_match(server.url)
    many = await Client.open(server.url, "many", source=attacker(0, network=1))
    other = await Client.open(server.url, "other", source=attacker(0, network=2))
    gate = server.admission.gate
    gate.close()  # a gate already at work (a loaded machine's late loop) stops
    gate.step = 60  # lets nothing through by itself: the test lets one message through at a time
    await fall_behind_a_little(server)
    held = gate.held  # on a loaded machine the clients' hellos may have waited here too
    for _ in range(3):
        await many.send(type="list")
    await eventually(lambda: gate.waiting == 1, what="the first message of the flooding network at the gate")
    await other.send(type="list")
    await eventually(lambda: gate.waiting == 2, what="the other network's message at the gate")
    await alice.request("ack", type="move", match_id=match_id, ply=0, bin=1)
    assert gate.waiting == 2
    assert gate.release(1) == 1
    assert (await many.next())["type"] == "matches"
    await eventually(lambda: gate.waiting == 2, what="the flooding network's second message at the gate")
    assert gate.release(1) == 1
    assert (await other.next())["type"] == "matches"  # its turn came before the flooding network's second
    assert gate.waiting == 1
    gate.release(1)
    await eventually(lambda: gate.waiting == 1, what="the flooding network's third message at the gate")
    gate.release(1)
    assert [(await many.next())["type"] for _ in range(2)] == ["matches"] * 2
    assert gate.held - held == 4
    for client in (alice, bob, many, other):
        await client.close()


async def test_a_late_loop_holds_exhibition_moves_at_the_gate(serve: Serve) -> None:
    """While the event loop runs late, an untimed exhibition's next bot move waits at the seatless gate (the
    exhibitions' own turn) and its game stands still while a seated player's move is acknowledged; let through,
    the exhibition plays on."""
    server = await serve(seatless_hold_s=60)
    alice, bob, match_id = await live_match(server.url)
    fan = await Client.open(server.url, "fan", source=attacker(0))
    show = await fan.request("snapshot", type="exhibition", variant="kalah(6,4)", south="random", north="random",
                             pace_ms=1000, rated=False)  # a move a second: live throughout the test
    gate = server.admission.gate
    gate.close()  # a gate already at work (a loaded machine's late loop) stops
    gate.step = 60  # lets nothing through by itself
    await fall_behind_a_little(server)
    await eventually(lambda: "exhibitions" in gate.queues, timeout=15, what="the exhibition's bot move at the gate")
    room = server.arena.rooms[show["match_id"]]
    ply = room.match.ply
    await alice.request("ack", type="move", match_id=match_id, ply=0, bin=1)
    assert room.match.ply == ply and room.match.status == "live"
    assert gate.release(1) == 1
    await eventually(lambda: room.match.ply > ply, timeout=15, what="the exhibition's move once let through")
    await eventually(lambda: "exhibitions" in gate.queues, timeout=15, what="its next move at the gate again")
    for client in (alice, bob, fan):
        await client.close()


async def test_a_late_loop_paces_the_analysis_thread(serve: Serve) -> None:
    """While the event loop runs late, the analysis thread starts fresh identities' analyses only within its busy
    share (`analysis_busy`: after one that used `c` CPU seconds the next waits `c * (1 / busy - 1)`), each thinking
    at most 250 ms of its 1 s budget; the waiting ones keep their places (every one is answered, none refused), and
    a person's move against a hosted bot is answered while they wait. /health and /metrics count the paced ones and
    show the thread's share."""
    server = await serve(seatless_hold_s=60)
    analyst = server.router.analyst
    person = await Client.open(server.url, "person", source=HONEST)
    match = await person.request("snapshot", type="create", opponent="random", seat="south")
    room = server.arena.rooms[match["match_id"]]
    fresh = [await Client.open(server.url, f"fresh{i}", source=attacker(0, network=10 + i)) for i in range(3)]
    assert (await scrape(server))[("kalah_analyses_paced_total", ())] == 0
    await fall_behind_a_little(server)
    asked = [asyncio.create_task(ask(client, 1000)) for client in fresh]
    await eventually(lambda: analyst.paced > 0, what="an analysis to wait for the pace")
    await person.request("ack", type="move", match_id=match["match_id"], ply=0, bin=1)
    await eventually(lambda: room.match.ply >= 2, what="the bot's answer")
    assert analyst.pending > 0  # the bot moved while analyses waited their pace
    replies = await asyncio.gather(*asked)
    assert [r["type"] for r in replies] == ["analysis"] * 3, replies
    runs = list(analyst.runs)
    assert len(runs) == 3 and analyst.paced == 2
    assert all(run.cpu < 0.6 for run in runs), runs  # 250 ms of thinking, not the 1 s asked for
    for before, after in itertools.pairwise(runs):
        assert after.started >= before.ended + 3 * min(before.cpu, 0.25) - 1e-6, runs
    used = sum(min(run.cpu, 0.25) for run in runs[:-1])
    assert used <= analyst.busy * (runs[-1].started - runs[0].started) + 1e-6, runs
    health = json.loads(await asyncio.to_thread(read_url, f"http://127.0.0.1:{server.port}/health"))
    assert health["analyses_paced"] == 2 and health["analysis_share"] > 0
    samples = await scrape(server)
    assert samples[("kalah_analyses_paced_total", ())] == 2 and samples[("kalah_analysis_share", ())] > 0
    for client in (person, *fresh):
        await client.close()


def read_url(url: str) -> bytes:
    """The body of a plain HTTP GET (run off the loop: the server answers on it)."""
    with urllib.request.urlopen(url, timeout=5) as response:
        body: bytes = response.read()
    return body


async def test_a_connection_that_closes_while_waiting_at_the_gate_is_let_go_at_once(serve: Serve) -> None:
    """A connection without a seat that closes while its message waits at the gate is released at once, not when
    its network's turn comes (under a flood, closed connections waiting their turn held their memory and their
    slots, and under the many-address flood half the connections, 1,144 of 2,118 at one look, waited there)."""
    server = await serve(seatless_hold_s=60)
    client = await Client.open(server.url, "leaving", source=attacker(0, network=1))
    gate = server.admission.gate
    gate.close()
    gate.step = 60  # lets nothing through by itself
    await fall_behind_a_little(server)
    await client.send(type="list")
    await eventually(lambda: gate.waiting == 1, what="the message at the gate")
    assert server.admission.connections == 1
    assert client.ws.transport is not None
    client.ws.transport.abort()
    await eventually(lambda: server.admission.connections == 0, timeout=3, what="the closed connection let go")
    assert gate.release(1) == 0  # its turn is passed by

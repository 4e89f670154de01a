"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2): new
identities, connection slots, the lobby and the analysis queue stay available to others."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from protocol import Game, Variant
from server.app import RunningServer
from tests.conftest import Serve
from tests.pg import query
from tests.wire import OPERATOR, Client, Json, action_msg, eventually, live_match

HONEST = "127.0.0.2"
POSITION = "6,6,6,6,6,6,0,6,6,6,6,6,6,0 S 0 -"
"""Kalah(6,6)'s start: no book holds it and no proof fits in a short budget, so an analysis of it takes its time."""


def attacker(i: int, network: int = 1) -> str:
    """The `i`-th attacking address of network 127.`network`.0.0/16 (256 to a /24)."""
    return f"127.{network}.{i // 250}.{1 + i % 250}"


async def test_new_identities_are_budgeted_per_address_and_in_all(serve: Serve, tmp_path: Path) -> None:
    """Past its budget of new identities an address gets `too_many` with a retry hint; a token still says hello,
    and another address still makes one; the server's own budget caps many addresses together."""
    server = await serve(identities_per_address=3)
    made = [await Client.open(server.url, f"flood{i}", source=attacker(0)) for i in range(3)]
    extra = await Client.open(server.url, None, source=attacker(0))
    refusal = await extra.request("error", type="hello", name="flood3")
    assert refusal["code"] == "too_many" and refusal["retry_ms"] > 60_000
    back = await Client.open(server.url, "ignored", token=made[0].welcome["token"], source=attacker(0))
    assert back.welcome["name"] == "flood0"
    honest = await Client.open(server.url, "honest", source=HONEST)
    for client in (*made, extra, back, honest):
        await client.close()
    everyone = await serve(tmp_path / "other.sqlite3", identities_per_hour=40)
    codes = []
    for i in range(6):  # a burst of 4 for the whole server
        client = await Client.open(everyone.url, None, source=attacker(i, network=2))
        codes.append((await client.request("error" if i >= 4 else "welcome", type="hello", name=f"n{i}"))["type"])
        await client.close()
    assert codes == ["welcome"] * 4 + ["error"] * 2


async def test_new_identities_are_budgeted_per_network(serve: Serve) -> None:
    """The addresses of one /24 share a budget of new identities: past it the next is `too_many` with a retry hint,
    whichever of its addresses asks, while a client of another network still makes one."""
    server = await serve(identities_per_address=3, identities_per_network=4)
    codes = []
    for i in range(5):
        client = await Client.open(server.url, None, source=attacker(i // 3))
        reply = await client.request("error" if i == 4 else "welcome", type="hello", name=f"n{i}")
        codes.append(reply["type"])
        await client.close()
    assert codes == ["welcome"] * 4 + ["error"]
    assert reply["code"] == "too_many" and "network" in reply["message"] and reply["retry_ms"] > 60_000
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.close()


async def test_a_full_server_sheds_the_crowded_network_for_a_newcomer(serve: Serve) -> None:
    """At the connection limit, a newcomer from another network is let in and the crowded network's cheapest
    connection is closed (1013, try again later); a seated player's never is. A newcomer of the crowded
    network itself is refused (503)."""
    server = await serve(max_connections=12)
    seated = await Client.open(server.url, "seated", source=attacker(0))
    match = await seated.request("snapshot", type="create", opponent="random", seat="south")
    flood = [await Client.open(server.url, f"idle{i}", source=attacker(1 + i % 4)) for i in range(11)]
    try:
        await Client.open(server.url, None, source=attacker(9))
    except InvalidStatus as exc:
        assert exc.response.status_code == 503
    else:
        raise AssertionError("the crowded network got a twelfth connection")
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
    try:
        await Client.open(server.url, None, source=attacker(6))
    except InvalidStatus as exc:
        assert exc.response.status_code == 429
    else:
        raise AssertionError("a seventh connection from one /24 was accepted")
    honest = await Client.open(server.url, "honest", source=HONEST)
    for client in (*held, honest):
        await client.close()


async def test_many_identities_of_few_addresses_cannot_fill_the_lobby(serve: Serve) -> None:
    """Open matches are capped per address (`too_many`), and the listing takes creators' addresses in turns, so an
    honest player's new match is listed among a flood of older ones."""
    server = await serve(open_per_address=4, max_list=6)
    flood = [await Client.open(server.url, f"f{i}", source=attacker(i % 3)) for i in range(9)]
    codes = []
    for client in flood:
        for _ in range(2):
            await client.send(type="create")
            reply = await client.next()
            codes.append(reply.get("code", reply["type"]))
    assert codes.count("snapshot") == 12 and codes.count("too_many") == 6
    honest = await Client.open(server.url, "honest", source=HONEST)
    mine = (await honest.request("snapshot", type="create"))["match_id"]
    listed = [m["match_id"] for m in (await honest.request("matches", type="list"))["matches"]]
    assert len(listed) == 6 and mine in listed
    for client in (*flood, honest):
        await client.close()


async def test_many_addresses_of_one_network_cannot_fill_the_lobby(serve: Serve) -> None:
    """The listing takes creators' networks in turns before their addresses, so an honest player's match is listed
    among newer ones of more addresses of one /24 than the list holds."""
    server = await serve(max_list=6)
    honest = await Client.open(server.url, "honest", source=HONEST)
    mine = (await honest.request("snapshot", type="create"))["match_id"]
    flood = [await Client.open(server.url, f"f{i}", source=attacker(i)) for i in range(7)]
    for client in flood:
        await client.request("snapshot", type="create")
    listed = [m["match_id"] for m in (await honest.request("matches", type="list"))["matches"]]
    assert len(listed) == 6 and mine in listed
    for client in (*flood, honest):
        await client.close()


async def test_many_addresses_of_one_network_cannot_fill_a_clusters_lobby(serve: Serve, pg_url: str,
                                                                          bus_url: str) -> None:
    """A cluster's listing takes the stored open matches' creator networks in turns too (the same order as a single
    node's), so the newer open matches of more addresses of one /24 than the list holds, made on another node,
    cannot push an honest player's match out of either node's list."""
    a, b = [await serve(pg_url, bus=bus_url, max_list=6) for _ in range(2)]
    honest = await Client.open(a.url, "honest", source=HONEST)
    mine = (await honest.request("snapshot", type="create"))["match_id"]
    flood = [await Client.open(b.url, f"f{i}", source=attacker(i)) for i in range(7)]
    for client in flood:
        await client.request("snapshot", type="create")
    for node in (a, b):
        viewer = await Client.open(node.url, None, source=HONEST)
        listed = [m["match_id"] for m in (await viewer.request("matches", type="list"))["matches"]]
        assert len(listed) == 6 and mine in listed
        await viewer.close()
    await flood[0].request("snapshot", type="join", match_id=mine)  # a live match keeps no creator's address
    rows = await query(pg_url, "SELECT creator_network, creator_address FROM matches WHERE id = $1", mine)
    assert [tuple(r) for r in rows] == [(None, None)]
    for client in (*flood, honest):
        await client.close()


async def ask(client: Client, budget_ms: int = 150) -> Json:
    """One analysis request of Kalah(6,6)'s start and its answer (an analysis or an error)."""
    await client.send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=budget_ms)
    while True:
        reply = await client.next(30)
        if reply["type"] in ("analysis", "error"):
            return reply


async def test_analyses_are_shared_fairly_across_the_addresses_of_a_network(serve: Serve) -> None:
    """Addresses of one /24 that keep the analysis queue full do not starve a newcomer of that /24 (so the networks'
    turns do not help it): it takes the place of the address that used the most analysis time lately (refused
    `too_many` with a retry hint) and is served next."""
    server = await serve()
    server.router.analyst.max_queued = 4
    stop = asyncio.Event()
    served: dict[int, int] = {}
    refused: list[Json] = []

    async def hog(i: int) -> None:
        """Keep one short analysis in flight from the `i`-th address, asking again at once."""
        client = await Client.open(server.url, f"hog{i}", source=attacker(i))
        with contextlib.suppress(ConnectionClosed):
            while not stop.is_set():
                reply = await ask(client)
                if reply["type"] == "analysis":
                    served[i] = served.get(i, 0) + 1
                else:
                    refused.append(reply)
                    await asyncio.sleep(0.02)
        await client.close()

    hogs = [asyncio.create_task(hog(i)) for i in range(6)]
    try:
        await eventually(lambda: len(served) == 6, timeout=30, what="every hog to have used some analysis time")
        newcomer = await Client.open(server.url, "newcomer", source=attacker(6))
        answer = await ask(newcomer)
        assert answer["type"] == "analysis", answer
        await newcomer.close()
    finally:
        stop.set()
        await asyncio.gather(*hogs)
    assert refused and all(r["code"] == "too_many" and isinstance(r["retry_ms"], int) for r in refused)


@pytest.mark.parametrize("networks", [1, 6])
async def test_analyses_are_shared_by_network_before_address(serve: Serve, networks: int) -> None:
    """12 addresses that fill the analysis queue and used more analysis time in all than an honest client's network
    (but each less than it) make room for it when they share one /24 (its newcomer's request takes the place of one
    of theirs, refused `too_many` with a retry hint); spread over 6 networks, each of which used less than the
    honest one, they keep their places and the honest request is refused `too_many` with a retry hint."""
    server = await serve()
    analyst = server.router.analyst
    analyst.max_queued = 4
    honest = await Client.open(server.url, "honest", source=HONEST)
    assert (await ask(honest, 300))["type"] == "analysis"
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(i // networks, network=10 + i % networks))
            for i in range(12)]
    for hog in hogs:  # 12 x 60 ms: more than the honest network's 300 ms in all, less on each network of 2
        assert (await ask(hog, 60))["type"] == "analysis"
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1500)  # alone: all of it
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    waiting = [asyncio.create_task(ask(hog, 60)) for hog in hogs[1:4]]
    await eventually(lambda: analyst.pending == 4, what="the queue to be full")
    answer = await ask(honest, 60)
    replies = await asyncio.gather(*waiting)
    refusals = [r for r in (answer, *replies) if r["type"] == "error"]
    assert len(refusals) == 1 and refusals[0]["code"] == "too_many" and isinstance(refusals[0]["retry_ms"], int)
    assert (answer["type"] == "analysis") == (networks == 1), answer
    assert (await hogs[0].next(30))["type"] == "analysis"
    for client in (honest, *hogs):
        await client.close()


@pytest.mark.parametrize("restart", [False, True])
async def test_a_player_who_played_here_is_served_before_fresh_identities(serve: Serve, tmp_path: Path,
                                                                        restart: bool) -> None:
    """An identity that played a game of 10 plies here (in memory, or stored and finished before a restart) is
    served before fresh identities: its analysis takes the place of one of theirs in a full queue (refused
    `too_many` with a retry hint) although each of their 6 networks used less analysis time than its own, while a
    fresh identity of its network is refused; the hogs would need games of their own to weigh as much."""
    db = tmp_path / "arena.sqlite3"
    server = await serve(db)
    alice, bob, match_id = await live_match(server.url)
    await play_plies(alice, bob, match_id, 10)
    if restart:
        await alice.request("event", type="resign", match_id=match_id)
        await server.close()
        server = await serve(db)
    for client in (alice, bob):
        await client.close()
    analyst = server.router.analyst
    analyst.max_queued = 4
    player = await Client.open(server.url, "alice", token=alice.welcome["token"], source=HONEST)
    assert (await ask(player, 300))["type"] == "analysis"
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(i // 6, network=10 + i % 6)) for i in range(12)]
    for hog in hogs:  # 2 x 60 ms on each of 6 networks: each used less than the player's
        assert (await ask(hog, 60))["type"] == "analysis"
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1500)
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    waiting = [asyncio.create_task(ask(hog, 60)) for hog in hogs[1:4]]
    await eventually(lambda: analyst.pending == 4, what="the queue to be full")
    fresh = await Client.open(server.url, "fresh", source="127.0.0.3")
    assert (await ask(fresh, 60))["code"] == "too_many"
    answer = await ask(player, 60)
    replies = await asyncio.gather(*waiting)
    assert answer["type"] == "analysis", answer
    refusals = [r for r in replies if r["type"] == "error"]
    assert len(refusals) == 1 and refusals[0]["code"] == "too_many" and isinstance(refusals[0]["retry_ms"], int)
    assert (await hogs[0].next(30))["type"] == "analysis"
    for client in (player, fresh, *hogs):
        await client.close()


async def play_plies(south: Client, north: Client, match_id: str, plies: int) -> None:
    """Play the first legal action of each position until the match has `plies` plies."""
    game = Game(Variant.parse("kalah(6,4)"))
    while game.ply < plies:
        action = game.position.legal_actions()[0]
        await (south if game.position.to_move.name == "SOUTH" else north).request(
            "ack", **action_msg(action, match_id, game.ply))
        game.play(action)


async def test_a_waiting_analysis_is_served_as_a_players_once_its_game_has_begun(serve: Serve) -> None:
    """A request queued while its asker's game had fewer than 10 plies behind fresh identities' (of networks that
    used less) is served before theirs once the game reaches its tenth ply while it waits."""
    server = await serve()
    analyst = server.router.analyst
    alice, bob, match_id = await live_match(server.url)
    player = await Client.open(server.url, "alice", token=alice.welcome["token"], source=HONEST)
    assert (await ask(player, 100))["type"] == "analysis"  # its network used more than the hogs'
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(0, network=10 + i)) for i in range(3)]
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1000)
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    order: list[str] = []

    async def asked(client: Client, name: str) -> None:
        """Ask an analysis (the hogs' long enough that the order of the answers is the order they ran in)."""
        assert (await ask(client, 60 if client is player else 400))["type"] == "analysis"
        order.append(name)

    waiting = [asyncio.create_task(asked(hog, f"hog{i}")) for i, hog in enumerate(hogs[1:], 1)]
    await eventually(lambda: analyst.pending == 3, what="two hogs to wait")
    waiting.append(asyncio.create_task(asked(player, "player")))
    await eventually(lambda: analyst.pending == 4, what="the player to wait")
    await play_plies(alice, bob, match_id, 10)
    await asyncio.gather(*waiting)
    assert order[0] == "player", order
    for client in (alice, bob, player, *hogs):
        await client.close()


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


async def test_exhibitions_are_capped_for_the_whole_server(serve: Serve) -> None:
    """Past the server's cap on unfinished exhibitions a client's request is `too_many` with a retry hint, from
    any address; the operator's rated exhibitions are not held back by it."""
    server = await serve(exhibitions_in_all=3)
    ask: Json = {"type": "exhibition", "variant": "kalah(6,4)", "south": "random", "north": "random",
                              "pace_ms": 5000, "rated": False}
    clients = [await Client.open(server.url, f"fan{i}", source=attacker(i)) for i in range(4)]
    for client in clients[:3]:
        await client.request("snapshot", **ask)
    refusal = await clients[3].request("error", **ask)
    assert refusal["code"] == "too_many" and refusal["retry_ms"] >= 1000
    operator = await Client.open(server.url, "ladder", source=HONEST)
    await operator.request("snapshot", **{**ask, "rated": True, "operator_token": OPERATOR})
    for client in (*clients, operator):
        await client.close()


async def test_one_network_cannot_take_every_exhibition(serve: Serve) -> None:
    """Unfinished exhibitions are capped per network too: addresses of one /24 cannot take every place the server
    has (the next of them is refused `too_many`), and a client of another network still starts one."""
    server = await serve(exhibitions_in_all=3, exhibitions_per_network=2)
    ask: Json = {"type": "exhibition", "variant": "kalah(6,4)", "south": "random", "north": "random",
                 "pace_ms": 5000, "rated": False}
    clients = [await Client.open(server.url, f"fan{i}", source=attacker(i)) for i in range(3)]
    for client in clients[:2]:
        await client.request("snapshot", **ask)
    refusal = await clients[2].request("error", **ask)
    assert refusal["code"] == "too_many" and "network" in refusal["message"]
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.request("snapshot", **ask)
    for client in (*clients, honest):
        await client.close()


async def test_public_reads_of_many_addresses_share_one_budget(serve: Serve) -> None:
    """Each address's read budget also draws on the server's: once many addresses have taken it, another
    address's read (of another network) is `rate_limited` with a retry hint though its own budgets are full."""
    server = await serve(all_read_rows_rate=100)
    readers = [await Client.open(server.url, None, source=attacker(0, network)) for network in (1, 2)]
    assert (await readers[0].request("game_list", type="games", limit=200))["type"] == "game_list"
    refusal = await readers[1].request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and refusal["retry_ms"] >= 1000
    for reader in readers:
        await reader.close()


async def test_the_addresses_of_one_network_share_a_read_budget(serve: Serve) -> None:
    """The addresses of one /24 draw on one network budget between their own and the server's: once they have
    taken it, another of its addresses is `rate_limited` though its own budget is full, while an address of
    another network still reads (the network cannot take the whole server's budget)."""
    server = await serve(network_read_rows_rate=100)
    crowd = [await Client.open(server.url, None, source=attacker(i)) for i in range(2)]
    other = await Client.open(server.url, None, source=attacker(0, 2))
    assert (await crowd[0].request("game_list", type="games", limit=200))["type"] == "game_list"
    refusal = await crowd[1].request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and refusal["retry_ms"] >= 1000 and "network" in refusal["message"]
    assert (await other.request("game_list", type="games", limit=200))["type"] == "game_list"
    for client in (*crowd, other):
        await client.close()


async def test_a_networks_read_debt_outlives_its_addresses_connections(serve: Serve) -> None:
    """An address that drained its network's read budget and disconnected is kept (with the network's budget) until
    that budget refills, though its own refilled long before: a fresh address of the network is still refused."""
    server = await serve(network_read_rows_rate=100, address_rate=1e6, address_burst=10**6)
    first = await Client.open(server.url, None, source=attacker(0))
    assert (await first.request("game_list", type="games", limit=200))["type"] == "game_list"
    await first.close()
    await eventually(lambda: server.admission.connections == 0, what="the first address to disconnect")
    await asyncio.sleep(0.2)  # its own budget (2,000 rows a second) has refilled by now; the network's has not
    passer = await Client.open(server.url, None, source=attacker(0, 2))  # a release elsewhere prunes idle addresses
    await passer.close()
    await eventually(lambda: server.admission.connections == 0, what="the passer to disconnect")
    gc.collect()  # what was forgotten is gone (a session and its address refer to each other)
    fresh = await Client.open(server.url, None, source=attacker(1))
    refusal = await fresh.request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and "network" in refusal["message"]
    await fresh.close()


async def fall_behind(server: RunningServer) -> None:
    """Make the server's event loop fall behind until it marks itself overloaded (as under a flood)."""
    loop = asyncio.get_running_loop()
    while not server.admission.overloaded():
        loop.call_soon(time.sleep, 0.3)
        await asyncio.sleep(0.01)


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


async def test_a_read_many_ask_at_once_is_made_once_for_them(serve: Serve) -> None:
    """Even on a quiet server, once the lobby's list is asked more than 50 times within `shared_reads_s` the
    answer made last goes to the next askers (each charged its rows): many addresses asking cost one listing."""
    server = await serve(shared_reads_s=60)
    askers = [await Client.open(server.url, None, source=attacker(i)) for i in range(12)]
    made = server.router.answers.made
    for _ in range(5):
        for asker in askers:
            assert (await asker.request("matches", type="list"))["type"] == "matches"
    assert server.router.answers.made - made == 51
    for client in askers:
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
    a person's move against a hosted bot is answered while they wait."""
    server = await serve(seatless_hold_s=60)
    analyst = server.router.analyst
    person = await Client.open(server.url, "person", source=HONEST)
    match = await person.request("snapshot", type="create", opponent="random", seat="south")
    room = server.arena.rooms[match["match_id"]]
    fresh = [await Client.open(server.url, f"fresh{i}", source=attacker(0, network=10 + i)) for i in range(3)]
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
    for client in (person, *fresh):
        await client.close()


def read_url(url: str) -> bytes:
    """The body of a plain HTTP GET (run off the loop: the server answers on it)."""
    with urllib.request.urlopen(url, timeout=5) as response:
        body: bytes = response.read()
    return body

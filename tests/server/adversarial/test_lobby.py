"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) filling the
lobby: open matches and exhibitions are capped and listed by network and address in turns, so others still show."""

from __future__ import annotations

from tests.conftest import Serve
from tests.helpers.pg import query
from tests.helpers.wire import HONEST, OPERATOR, Client, Json, attacker

EXHIBITION: Json = {"type": "exhibition", "variant": "kalah(6,4)", "south": "random", "north": "random",
                    "pace_ms": 5000, "rated": False}
"""An unrated exhibition between two hosted bots, slow enough to stay unfinished through a test."""


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


async def test_exhibitions_are_capped_for_the_whole_server(serve: Serve) -> None:
    """Past the server's cap on unfinished exhibitions a client's request is `too_many` with a retry hint, from
    any address; the operator's rated exhibitions are not held back by it."""
    server = await serve(exhibitions_in_all=3)
    ask = EXHIBITION
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
    ask = EXHIBITION
    clients = [await Client.open(server.url, f"fan{i}", source=attacker(i)) for i in range(3)]
    for client in clients[:2]:
        await client.request("snapshot", **ask)
    refusal = await clients[2].request("error", **ask)
    assert refusal["code"] == "too_many" and "network" in refusal["message"]
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.request("snapshot", **ask)
    for client in (*clients, honest):
        await client.close()

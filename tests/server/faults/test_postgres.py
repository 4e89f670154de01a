"""PostgreSQL stops under a game and comes back: moves are refused `unavailable` while it is down (nothing that was
not committed is acknowledged), and play resumes by itself when it is back. The test runs its own PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import cast
from urllib.parse import urlsplit

import pytest

from protocol import Position, Sow, Variant
from server.assembly import RunningServer
from server.cluster import Cluster, ClusterOptions
from tests.conftest import Serve
from tests.helpers.pg import PostgresServer, find_bindir, query
from tests.helpers.tcp_proxy import TcpProxy
from tests.helpers.wire import Client, Json, eventually, live_match, move_answer

LEASE_S = ClusterOptions("").lease_s
OUTAGE_S = LEASE_S + 2.0
"""Longer than a lease and a heartbeat: every node's last beat is stale when the database is back."""


def cluster(node: RunningServer) -> Cluster:
    """A node's part in the cluster."""
    return cast(Cluster, node.arena.replication)


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test alone (it is stopped and started again), removed at the end."""
    pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install -e '.[test]')")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()



async def test_moves_are_refused_while_postgres_is_down_and_play_resumes(serve: Serve,
                                                                         own_postgres: PostgresServer) -> None:
    """With PostgreSQL stopped mid-game a move is refused `unavailable` (retry hint) and not stored, `list` is
    still answered and `games` is refused `unavailable`; started again, the same move is acknowledged and the
    game goes on; the database holds exactly the acknowledged moves."""
    url = own_postgres.new_database()
    server = await serve(url)
    alice, bob, match_id = await live_match(server.url)
    position = Position.initial(Variant())
    acked: list[str] = []

    async def play(ply: int) -> Json:
        """The side to move plays its first legal house."""
        mover = alice if position.to_move.name == "SOUTH" else bob
        return await move_answer(mover, match_id, ply, position.legal_bins()[0], timeout=60)

    for ply in range(4):
        assert (await play(ply))["type"] == "ack"
        acked.append(str(position.legal_bins()[0]))
        position = position.apply(Sow(position.legal_bins()[0]))
    own_postgres.halt()
    try:
        for _ in range(2):  # the lost session, then a database that refuses connections
            refused = await play(4)
            assert refused["code"] == "unavailable" and refused["retry_ms"] >= 1, refused
        await alice.request("matches", type="list")
        assert (await alice.request("error", type="games"))["code"] == "unavailable"
    finally:
        own_postgres.resume()
    reply = await play(4)
    assert reply["type"] == "ack", reply
    acked.append(str(position.legal_bins()[0]))
    position = position.apply(Sow(position.legal_bins()[0]))
    assert (await play(5))["type"] == "ack"
    acked.append(str(position.legal_bins()[0]))
    rows = await query(url, "SELECT action FROM actions WHERE match_id = $1 ORDER BY ply", match_id)
    assert [row["action"] for row in rows] == acked
    for client in (alice, bob):
        await client.close()


async def test_a_postgres_outage_under_two_nodes_refuses_moves_and_moves_no_owner(
        own_postgres: PostgresServer, serve: Serve, bus_url: str) -> None:
    """Two nodes, a game owned by each (its players on both nodes); PostgreSQL stops for longer than a lease while
    both games keep trying to move: every move is refused `unavailable` on both nodes, no node takes the other's
    match (never two owners at once, no takeover) when it is back, and both games go on, the database holding
    exactly the acknowledged moves."""
    url = own_postgres.new_database()
    nodes = [await serve(url, bus=bus_url) for _ in range(2)]
    games: list[tuple[Client, Client, str, Position, list[str]]] = []
    for i, (home, away) in enumerate([(nodes[0], nodes[1]), (nodes[1], nodes[0])]):
        south = await Client.open(home.url, f"south{i}")
        match_id = (await south.request("snapshot", type="create", seat="south"))["match_id"]
        north = await Client.open(away.url, f"north{i}")
        await north.request("snapshot", type="join", match_id=match_id)
        games.append((south, north, match_id, Position.initial(Variant()), []))
    owners = [set(cluster(node).owned) for node in nodes]
    assert len(owners[0]) == len(owners[1]) == 1 and not owners[0] & owners[1]

    async def play(i: int) -> Json:
        """The side to move in game `i` plays its first legal house; acknowledged moves are noted."""
        south, north, match_id, position, acked = games[i]
        house = position.legal_bins()[0]
        mover = south if position.to_move.name == "SOUTH" else north
        reply = await move_answer(mover, match_id, len(acked), house, timeout=60)
        if reply["type"] == "ack":
            acked.append(str(house))
            games[i] = (south, north, match_id, position.apply(Sow(house)), acked)
        return reply

    doubled: list[set[str]] = []

    async def sample() -> None:
        """Note every moment two nodes own one match."""
        while True:
            both = cluster(nodes[0]).owned & cluster(nodes[1]).owned
            if both:
                doubled.append(set(both))
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    try:
        for _ in range(2):
            for i in range(2):
                assert (await play(i))["type"] == "ack"
        own_postgres.halt()
        down = asyncio.get_running_loop().time()
        try:
            while asyncio.get_running_loop().time() < down + OUTAGE_S:  # under load: both games keep trying
                for i in range(2):
                    refused = await play(i)
                    assert refused["code"] == "unavailable" and refused["retry_ms"] >= 1, refused
                await asyncio.sleep(0.2)
        finally:
            own_postgres.resume()
        for i in range(2):
            reply = await play(i)
            assert reply["type"] == "ack", reply
        await asyncio.sleep(2 * LEASE_S)  # the nodes beat again, and would take over here
        for _ in range(4):
            for i in range(2):
                assert (await play(i))["type"] == "ack"
    finally:
        sampler.cancel()
    assert not doubled, f"two owners at once: {doubled[:3]}"
    assert [set(cluster(node).owned) for node in nodes] == owners
    assert [cluster(node).taken for node in nodes] == [0, 0]
    for south, north, match_id, _, acked in games:
        rows = await query(url, "SELECT action FROM actions WHERE match_id = $1 ORDER BY ply", match_id)
        assert [row["action"] for row in rows] == acked
        await south.close()
        await north.close()


async def test_a_node_cut_off_from_postgres_lets_its_game_go_before_another_takes_it(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Node B loses its way to PostgreSQL (the database and node A are fine) under a game B owns, whose players are
    on A: B stops running the game before its lease runs out, A takes it over, so it never has two owners; the
    moves on A are acknowledged; once B reaches the database again it owns nothing and the game stays A's."""
    parts = urlsplit(pg_url)
    assert parts.hostname is not None and parts.port is not None
    proxy = TcpProxy(parts.hostname, parts.port)
    await proxy.start()
    a = await serve(pg_url, bus=bus_url)
    b = await serve(pg_url.replace(f":{parts.port}/", f":{proxy.port}/"), bus=bus_url)
    doubled: list[set[str]] = []

    async def sample() -> None:
        """Note every moment two nodes own one match."""
        while True:
            if both := cluster(a).owned & cluster(b).owned:
                doubled.append(set(both))
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    try:
        creator = await Client.open(b.url, "south")
        match_id = (await creator.request("snapshot", type="create", seat="south"))["match_id"]
        north = await Client.open(a.url, "north")
        await north.request("snapshot", type="join", match_id=match_id)
        south = await Client.open(a.url, "south", token=creator.welcome["token"])
        assert cluster(b).owned == {match_id}
        position = Position.initial(Variant())

        async def play() -> None:
            """The side to move plays its first legal house on node A: acknowledged."""
            nonlocal position
            house = position.legal_bins()[0]
            mover = south if position.to_move.name == "SOUTH" else north
            reply = await move_answer(mover, match_id, position.ply, house, timeout=60)
            assert reply["type"] == "ack", reply
            position = position.apply(Sow(house))

        await play()
        proxy.cut()
        await eventually(lambda: match_id in cluster(a).owned, timeout=20, what="A to take the game over")
        await play()
        proxy.restore()
        await eventually(lambda: cluster(b).lease.database == "ok" and not cluster(b).owned, timeout=20,
                         what="B to beat again and find the game gone")
        await play()
        assert not doubled, f"two owners at once: {doubled[:3]}"
        assert (cluster(a).owned, cluster(b).owned) == ({match_id}, set())
        for client in (creator, north, south):
            await client.close()
    finally:
        sampler.cancel()
        await b.close()
        await proxy.close()

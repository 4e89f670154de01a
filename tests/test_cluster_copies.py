"""A node's copy of a match that another node owns (one PostgreSQL, one Redis, two nodes in this process): what it
answers from memory, and when it reads the match from the database first."""

from __future__ import annotations

from typing import cast

from server.cluster import Cluster
from tests.conftest import Serve
from tests.wire import Client


async def test_a_move_from_a_connection_without_a_seat_is_refused_from_memory(serve: Serve, pg_url: str,
                                                                               bus_url: str) -> None:
    """Once a node's copy knows both players of a match, a move sent to it by a connection that holds neither seat
    is refused (`not_your_match`) without reading the match from the database: no seat can change hands any more. It
    used to read the match again before each refusal."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"])
    bob = await Client.open(b.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)  # B's copy now holds both seats
    mallory = await Client.open(b.url, "mallory")
    await mallory.request("snapshot", type="watch", match_id=mid)
    node = cast(Cluster, b.arena.replication)
    before = node.conflicts
    for _ in range(3):
        await mallory.send(type="move", match_id=mid, ply=0, bin=1)
        assert await mallory.error() == "not_your_match"
    assert node.conflicts == before  # each re-read of a copy is counted here
    ack = await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)  # the match itself goes on
    assert ack["ply"] == 0
    for client in (alice, bob, mallory):
        await client.close()

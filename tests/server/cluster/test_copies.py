"""A node's copy of a match that another node owns (one PostgreSQL, one Redis, two nodes in this process): what it
answers from memory, and when it reads the match from the database first."""

from __future__ import annotations

import time
from typing import cast

import redis.asyncio as redis

from protocol import Game, Variant
from protocol.actions import parse_action
from server.cluster import Cluster
from server.cluster.bus import MATCH_CHANNEL
from tests.conftest import Serve
from tests.helpers.wire import Client, action_msg, assert_continuous, eventually


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


async def test_a_copy_applies_an_action_notice_in_the_previous_versions_format(serve: Serve, pg_url: str,
                                                                               bus_url: str) -> None:
    """During a rolling upgrade a node of the previous version announces an action without its age (six fields):
    a current node's copy applies it as it comes (no `bus_unreadable`, no read of the database), and the same
    change announced again in the current format is not applied twice; play goes on from that copy."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"])
    bob = await Client.open(b.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)
    node = cast(Cluster, b.arena.replication)
    await eventually(lambda: not node.wanted, what="node B's copy to be read")
    refreshes, applied = node.refreshes, node.applied
    publisher = redis.from_url(bus_url)
    try:  # version 3 from 2 (two seats taken): South sows house 1 of an untimed game, as the previous version wrote it
        await publisher.publish(f"{MATCH_CHANNEL}{mid}", f'3 {{"b":2,"a":[0,0,"1",0,0,{time.time()}],"e":null}}')
    finally:
        await publisher.aclose()
    event = await bob.expect("event", where=lambda e: e.get("kind") == "action")
    assert (event["ply"], event["action"]) == (0, "1")
    assert (node.applied, node.refreshes) == (applied + 1, refreshes)
    assert (await alice.request("ack", type="move", match_id=mid, ply=0, bin=1))["ply"] == 0  # stored, announced
    game = Game(Variant.parse("kalah(4,3)"))
    game.play(parse_action("1"))
    reply = await bob.request("ack", **action_msg(game.position.legal_actions()[0], mid, 1))
    assert reply["ply"] == 1
    for client in (alice, bob):
        await client.until_received("event", 2, where=lambda e: e["match_id"] == mid and e["kind"] == "action")
    assert assert_continuous(bob, mid) == [3, 4]
    for client in (alice, bob):
        await client.close()

"""Players waiting for an opponent across the nodes of a cluster (one PostgreSQL, one Redis, two nodes in this
process): the shared queue in Redis keeps every player who waits on a live node until it is paired or leaves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import redis.asyncio as redis

from server.assembly import RunningServer
from server.cluster.bus import seeks_key
from server.cluster.messages import Waiting
from tests.conftest import Serve
from tests.helpers.wire import Client, eventually

VARIANT = "kalah(5,3)"
"""A variant no other test seeks in (the session's Redis is shared by the tests)."""


async def queued(bus_url: str, variant: str) -> list[tuple[str, str]]:
    """(node, player id) of each entry of the variant's queue in Redis, the longest waiting first."""
    r = redis.from_url(bus_url, decode_responses=True)
    try:
        entries = [Waiting.parse(str(text)) for text in await r.lrange(seeks_key(variant), 0, -1)]
        return [(w.node, w.player_id) for w in entries]
    finally:
        await r.aclose()


async def holds(bus_url: str, entries: list[tuple[str, str]]) -> bool:
    """Whether the queue of `VARIANT` is exactly `entries`."""
    return await queued(bus_url, VARIANT) == entries


def node_of(server: RunningServer) -> str:
    """A node's id in the cluster."""
    node = server.arena.replication.node_id
    assert node is not None
    return node


async def test_a_player_waiting_on_one_node_who_seeks_on_another_stays_queued_on_both(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Pat waits on node B, then seeks the same variant on node A from a second connection: A does not pair Pat
    with itself and keeps B's queue entry (it used to drop it). Once Pat's connection to A closes, only B's entry
    is left, and Kim seeking on A is paired with Pat waiting on B: both get the new match."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    pat_b = await Client.open(b.url, "pat")
    pat = str(pat_b.welcome["player_id"])
    assert (await pat_b.request("seeking", type="seek", variant=VARIANT))["variant"] == VARIANT
    await eventually(lambda: queued(bus_url, VARIANT), what="Pat queued by B")
    pat_a = await Client.open(a.url, "pat", token=str(pat_b.welcome["token"]))
    assert (await pat_a.request("seeking", type="seek", variant=VARIANT))["variant"] == VARIANT
    await eventually(lambda: holds(bus_url, [(node_of(b), pat), (node_of(a), pat)]), what="Pat queued by both")
    await pat_a.close()
    await eventually(lambda: holds(bus_url, [(node_of(b), pat)]), what="only B's entry left")
    kim = await Client.open(a.url, "kim")
    kim_view = await kim.request("snapshot", type="seek", variant=VARIANT)
    pat_view = await pat_b.expect("snapshot")
    assert pat_view["match_id"] == kim_view["match_id"]
    assert (pat_view["you"], kim_view["you"]) == ("south", "north")
    assert await queued(bus_url, VARIANT) == []
    for client in (pat_b, kim):
        await client.close()



async def test_the_listing_on_one_node_shows_who_waits_on_another(serve: Serve, pg_url: str, bus_url: str) -> None:
    """Pat seeks on node B: a listing on node A shows Pat's seek beside A's own seekers (before: only the seeks of
    the node asked); once Pat leaves, the listing on A no longer shows it."""
    variant = "kalah(7,2)"  # a variant no other test seeks in
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    pat = await Client.open(b.url, "pat")
    assert (await pat.request("seeking", type="seek", variant=variant))["variant"] == variant
    kim = await Client.open(a.url, "kim")
    assert (await kim.request("seeking", type="seek", variant="kalah(7,3)"))["variant"] == "kalah(7,3)"
    lee = await Client.open(a.url, "lee")

    async def seeks() -> list[object]:
        """The seeks in a listing asked of node A."""
        return list((await lee.request("matches", type="list"))["seeks"])

    await eventually(lambda: _shows(seeks, {"variant": variant, "name": "pat"}), what="B's seeker listed on A")
    assert {"variant": "kalah(7,3)", "name": "kim"} in await seeks()
    await pat.close()
    await eventually(lambda: _hides(seeks, "pat"), what="the seek leaving the listing once Pat left")
    for client in (kim, lee):
        await client.close()


async def _shows(seeks: Callable[[], Awaitable[list[object]]], seek: dict[str, str]) -> bool:
    """Whether the listing holds `seek`."""
    return seek in await seeks()


async def _hides(seeks: Callable[[], Awaitable[list[object]]], name: str) -> bool:
    """Whether the listing holds no seek of `name`."""
    return all(not isinstance(s, dict) or s.get("name") != name for s in await seeks())

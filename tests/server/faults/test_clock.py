"""The wall clock steps (an NTP correction of ±30 s) under timed games: no flag falls that should not, and none is
held up. On one server match clocks run on the event loop's monotonic clock; in a cluster (node processes, one of
them with a stepped clock: `tests.helpers.stepped_clock`)
a node starts a clock from what the database's clock says of the
last action, or from a notice's age by the storing node's monotonic clock, and leases run by the database's clock."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import urllib.request

import pytest
from redis.asyncio import Redis

from protocol import Position, Sow, Variant
from tests.conftest import Serve
from tests.helpers.cluster_play import start_node, stop_nodes
from tests.helpers.redis_server import RedisServer
from tests.helpers.wire import Client, Json, eventually, live_match, move_answer

VARIANT = "kalah(6,4,clock=20+0)"
BASE_MS = 20_000



@pytest.mark.parametrize("step", [30.0, -30.0])
async def test_a_wall_clock_step_moves_no_flag(serve: Serve, monkeypatch: pytest.MonkeyPatch, step: float) -> None:
    """With a minute each, the wall clock steps by `step` seconds mid-game: the side to move is still on time (its
    move is acknowledged), and its clock lost the seconds really spent (well under 10 s), not the step."""
    server = await serve()
    alice, bob, match_id = await live_match(server.url, variant="kalah(6,4,clock=60+0)")
    assert (await move_answer(alice, match_id, 0, 1))["type"] == "ack"
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + step)
    reply = await move_answer(bob, match_id, 1, 8)
    assert reply["type"] == "ack", reply
    event = await alice.expect("event", where=lambda e: e.get("ply") == 1)
    clocks = event["clocks"]
    assert 50_000 < clocks["north_ms"] <= 60_000 and clocks["running"] == "south", clocks
    assert (await move_answer(alice, match_id, 2, 2))["type"] == "ack"
    assert server.arena.rooms[match_id].match.status == "live"
    for client in (alice, bob):
        await client.close()


def health(url: str) -> Json:
    """The `/health` answer of the node at websocket `url`."""
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=10) as response:
        data: Json = json.loads(response.read())
    return data


async def play_first(client: Client, match_id: str, position: Position) -> tuple[Json, Position]:
    """The side to move plays its first legal house: the reply, and the position after it."""
    house = position.legal_bins()[0]
    return await move_answer(client, match_id, position.ply, house), position.apply(Sow(house))


@pytest.mark.parametrize("step", [30.0, -30.0])
async def test_a_node_clock_step_moves_no_flag_in_a_cluster(pg_url: str, bus_url: str, redis_server: RedisServer,
                                                           step: float) -> None:
    """Node B's wall clock steps by `step` seconds under two timed games node A owns: one North plays on B (B keeps a
    copy from A's notices), one whose players are all on A until A is killed and B takes it over from the
    database. Each North's move on B is acknowledged with its clock charged what really passed (never the step,
    never a gift); when B's North leaves, South's claim on A past the grace period (3 s) since the game began is
    refused, North may still come back (when it left is Redis's time, not B's); B's lease holds (A sees it live,
    takes nothing), and B takes over exactly A's two games."""
    a_proc, a_url = await start_node(pg_url, bus_url, "a", "--grace", "3")
    b_proc, b_url = await start_node(pg_url, bus_url, "b", "--grace", "3",
                                     kalah=(sys.executable, "-m", "tests.helpers.stepped_clock", str(step)))
    south1, north1, held = await live_match(a_url, VARIANT, ("south1", "north1"))
    south2 = await Client.open(a_url, "south2")
    copied = (await south2.request("snapshot", type="create", variant=VARIANT, seat="south"))["match_id"]
    north2 = await Client.open(b_url, "north2")
    await north2.request("snapshot", type="join", match_id=copied)
    live = time.monotonic()
    os.kill(b_proc.pid, signal.SIGUSR1)
    await eventually(lambda: abs(health(b_url)["cluster"]["at"] - time.time() - step) < 5, what="B's clock to step")
    start = Position.initial(Variant.parse(VARIANT))

    began = time.monotonic()
    reply, position = await play_first(south2, copied, start)
    assert reply["type"] == "ack", reply
    await north2.expect("event", where=lambda e: e.get("ply") == 0)
    reply, _ = await play_first(north2, copied, position)
    assert reply["type"] == "ack", reply
    clocks = (await north2.expect("event", where=lambda e: e.get("ply") == 1))["clocks"]
    assert BASE_MS - (time.monotonic() - began) * 1000 <= clocks["north_ms"] <= BASE_MS, clocks
    await asyncio.sleep(max(0.0, live + 3.5 - time.monotonic()))  # the grace since the game began has passed
    await north2.close()
    redis = Redis.from_url(redis_server.url)
    try:
        away = f"kalah:away:{north2.welcome['player_id']}"
        await eventually(lambda: redis.exists(away), what="B to note that North left")
    finally:
        await redis.aclose()
    refused = await south2.request("error", type="claim", match_id=copied)
    assert refused["code"] == "claim_refused" and "may still come back" in refused["message"], refused

    began = time.monotonic()
    reply, position = await play_first(south1, held, start)
    assert reply["type"] == "ack", reply
    seen = health(a_url)["cluster"]
    assert seen["nodes"] == ["a", "b"] and seen["taken_over"] == 0, seen
    token = north1.welcome["token"]
    for client in (south1, north1, south2):
        await client.close()
    a_proc.kill()
    await a_proc.wait()
    await eventually(lambda: health(b_url)["cluster"]["taken_over"] == 2, timeout=20, what="B to take A's games")
    north1 = await Client.open(b_url, "north1", token=token)
    await north1.request("snapshot", type="sync", match_id=held)
    reply, _ = await play_first(north1, held, position)
    assert reply["type"] == "ack", reply
    clocks = (await north1.expect("event", where=lambda e: e.get("ply") == 1))["clocks"]
    assert BASE_MS - (time.monotonic() - began) * 1000 <= clocks["north_ms"] <= BASE_MS, clocks
    assert health(b_url)["cluster"]["nodes"] == ["b"]
    await north1.close()
    await stop_nodes([(b_proc, b_url)])


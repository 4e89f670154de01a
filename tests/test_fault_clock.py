"""The wall clock steps (an NTP correction of ±30 s) under a timed game on one server: no flag falls that should
not, and none is held up, because match clocks run on the event loop's monotonic clock."""

from __future__ import annotations

import time

import pytest

from tests.conftest import Serve
from tests.wire import Client, Json, live_match


async def move(client: Client, match_id: str, ply: int, house: int) -> Json:
    """Send a move; its ack or its refusal."""
    await client.send(type="move", match_id=match_id, ply=ply, bin=house)
    while True:
        reply = await client.next(timeout=30)
        if reply["type"] in ("ack", "error"):
            return reply


@pytest.mark.parametrize("step", [30.0, -30.0])
async def test_a_wall_clock_step_moves_no_flag(serve: Serve, monkeypatch: pytest.MonkeyPatch, step: float) -> None:
    """With a minute each, the wall clock steps by `step` seconds mid-game: the side to move is still on time (its
    move is acknowledged), and its clock lost the seconds really spent (well under 10 s), not the step."""
    server = await serve()
    alice, bob, match_id = await live_match(server.url, variant="kalah(6,4,clock=60+0)")
    assert (await move(alice, match_id, 0, 1))["type"] == "ack"
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + step)
    reply = await move(bob, match_id, 1, 8)
    assert reply["type"] == "ack", reply
    event = await alice.expect("event", where=lambda e: e.get("ply") == 1)
    clocks = event["clocks"]
    assert 50_000 < clocks["north_ms"] <= 60_000 and clocks["running"] == "south", clocks
    assert (await move(alice, match_id, 2, 2))["type"] == "ack"
    assert server.arena.rooms[match_id].match.status == "live"
    for client in (alice, bob):
        await client.close()

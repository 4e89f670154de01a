"""A server on its own (`server.core.replication.SingleNode`): the lobby's list."""

from __future__ import annotations

import asyncio

import pytest

from server.assembly import RunningServer
from server.core import replication
from tests.helpers.wire import Client


async def test_the_lobby_list_is_made_in_steps_letting_the_loop_serve_others(arena: RunningServer,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Made `LISTING_STEP` rooms at a time, the lobby's list lets other tasks run between its steps (made at once,
    under a flood of open matches, it held the loop for tens of ms) and lists the same matches in the same order."""
    openers = [await Client.open(arena.url, f"opener{i}") for i in range(2)]
    for opener in openers:
        for _ in range(4):
            await opener.request("snapshot", type="create", seat="south")
    listing = arena.arena.replication.listing
    at_once = await listing(500, lambda rows: None)
    monkeypatch.setattr(replication, "LISTING_STEP", 2)
    turns, done = 0, False

    async def other() -> None:
        """Another task of the loop, counting the turns it got."""
        nonlocal turns
        while not done:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    before = turns
    stepped = await listing(500, lambda rows: None)
    during = turns - before
    done = True
    await task
    assert [m.match_id for m in at_once] == [m.match_id for m in stepped] and len(at_once) == 8
    assert during >= 3  # 8 rooms walked, then 8 lines made, 2 at a time
    for opener in openers:
        await opener.close()

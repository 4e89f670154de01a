"""Redis restarts under three nodes while games are played across them: no client misses an event or sees one
twice (a node that lost the bus re-reads its copies from the database), and a seek made before the restart
is still paired after it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio.client import PubSub

from protocol import Game, Variant
from server.cluster.bus import Bus
from tests.conftest import Serve
from tests.helpers.pg import query
from tests.helpers.redis_server import RedisServer
from tests.helpers.wire import Client, Json, action_msg, assert_continuous, is_game_over

VARIANT = "kalah(4,3)"


async def seek_until_answered(client: Client, answers: tuple[str, ...] = ("snapshot",), tries: int = 20) -> Json:
    """A seek's answer (of a type in `answers`), the seek sent again after each `unavailable` answer as a client
    does (a node whose Redis connections broke in the restart may answer so until it has reconnected); any other
    error fails."""
    for _ in range(tries):
        await client.send(type="seek", variant=VARIANT)
        answer = await client.next(timeout=30)
        while answer.get("type") not in (*answers, "error"):
            answer = await client.next(timeout=30)
        if answer["type"] != "error":
            return answer
        assert answer["code"] == "unavailable", answer
        await asyncio.sleep((answer.get("retry_ms") or 500) / 1000)
    raise AssertionError(f"the seek was answered unavailable {tries} times")


async def test_a_redis_restart_under_three_nodes_loses_and_repeats_no_event(serve: Serve, pg_url: str,
                                                                             bus_url: str,
                                                                             redis_server: RedisServer) -> None:
    """Three matches, South on node A, North on node B and a spectator on node C; Redis is killed after two moves
    of each and started again two moves later; every game is played to its end and every client's events of
    it run one by one from its first answer to the game's end. A seek waiting on node A across the restart
    is paired with a seek made on node C after it."""
    a, b, c = [await serve(pg_url, bus=bus_url) for _ in range(3)]
    seeker = await Client.open(a.url, "seeker")
    await seeker.request("seeking", type="seek", variant=VARIANT)
    games: list[tuple[Client, Client, Client, str, Game]] = []
    for i in range(3):
        south = await Client.open(a.url, f"south{i}")
        match_id = (await south.request("snapshot", type="create", variant=VARIANT, seat="south"))["match_id"]
        north = await Client.open(b.url, f"north{i}")
        await north.request("snapshot", type="join", match_id=match_id)
        watcher = await Client.open(c.url, f"watcher{i}")
        await watcher.request("snapshot", type="watch", match_id=match_id)
        games.append((south, north, watcher, match_id, Game(Variant.parse(VARIANT))))
    rng = random.Random(5)

    async def moves(count: int) -> None:
        """Up to `count` random legal actions in each unfinished game, each acknowledged."""
        for south, north, _, match_id, game in games:
            for _ in range(count):
                if game.over:
                    break
                action = rng.choice(game.position.legal_actions())
                mover = south if game.position.to_move.name == "SOUTH" else north
                ack = await mover.request("ack", timeout=30, **action_msg(action, match_id, game.ply))
                assert ack["ply"] == game.ply
                game.play(action)

    await moves(2)
    redis_server.stop()
    try:
        await moves(2)
    finally:
        redis_server.start()
    await moves(200)
    for south, north, watcher, match_id, game in games:
        assert game.over
        def its_end(msg: Json, match_id: str = match_id) -> bool:
            """The game-over event of this match."""
            return msg.get("match_id") == match_id and is_game_over(msg)

        for client in (south, north, watcher):
            end = await client.expect("event", timeout=30, where=its_end)
            assert assert_continuous(client, match_id)[-1] == end["seq"]
        stored = await query(pg_url, "SELECT count(*) FROM actions WHERE match_id = $1", match_id)
        assert stored[0][0] == game.ply
    late = await Client.open(c.url, "late")
    paired = await seek_until_answered(late)
    assert (await seeker.expect("snapshot", timeout=30))["match_id"] == paired["match_id"]
    for south, north, watcher, _, _ in games:
        for client in (south, north, watcher):
            await client.close()
    await seeker.close()
    await late.close()


async def test_a_seek_while_redis_is_down_is_answered_unavailable(serve: Serve, pg_url: str, bus_url: str,
                                                                   redis_server: RedisServer) -> None:
    """A seek on a node that cannot read who waits on the others (Redis down) gets `unavailable`, to try again,
    not `internal_error`; once Redis is back the same request is served."""
    node = await serve(pg_url, bus=bus_url)
    client = await Client.open(node.url, "seeker")
    redis_server.stop()
    try:
        await client.send(type="seek", variant=VARIANT)
        answer = await client.expect("error", timeout=30)
        assert answer["code"] == "unavailable" and "try again" in answer["message"], answer
        assert answer["retry_ms"] is not None
    finally:
        redis_server.start()
    assert (await seek_until_answered(client, ("seeking",)))["variant"] == VARIANT
    await client.close()


async def test_a_bus_closes_when_a_redis_read_swallowed_its_cancellation(bus_url: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A node's bus closes even when the Redis read its listener waits on takes the first cancellation for
    something else and waits on (seen on Python 3.11 after a Redis restart: the node's shutdown hung, and with
    it the process); the listener is cancelled again until it ends."""
    real_listen = PubSub.listen
    swallowed: list[bool] = []

    async def listen_swallowing_once(self: PubSub) -> AsyncIterator[Any]:
        """PubSub.listen, but the first cancellation is caught and the read waits on."""
        try:
            async for message in real_listen(self):
                yield message
        except asyncio.CancelledError:
            if swallowed:
                raise
            swallowed.append(True)
            await asyncio.Event().wait()

    monkeypatch.setattr(PubSub, "listen", listen_swallowing_once)
    bus = Bus(bus_url, on_match=lambda *_: None, on_node=lambda _: None, on_gap=lambda: None,
              on_watching=lambda _: None)
    await bus.start()
    await asyncio.wait_for(bus.close(), 10)
    assert swallowed == [True]
    assert all(task.done() for task in bus._tasks)

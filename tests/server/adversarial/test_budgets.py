"""Budgets an attacker cannot reset or dodge: kept across reconnects, checked before work, every refusal answered."""

from __future__ import annotations

import time
from functools import partial

import pytest
from websockets.exceptions import ConnectionClosed

from protocol import Variant
from server.assembly import RunningServer
from server.core.match import Seat
from tests.conftest import Serve
from tests.helpers.paths import ROOT_DIR
from tests.helpers.wire import HONEST, Client, eventually

LIMITS_DOC = ROOT_DIR / "docs" / "operations.md"
FLOODER = "127.0.0.5"


async def finished_games(server: RunningServer, count: int) -> list[str]:
    """`count` finished games in the database and none in memory (as after their linger time)."""
    a = server.arena
    ids = []
    for i in range(count):
        room = await a.create(Variant(), False, 0, [(0, Seat(f"p{i}", f"p{i}")), (1, Seat(f"q{i}", f"q{i}"))],
                              match_id=f"done{i}")
        async with room.lock:
            await a.retry(room, partial(room.match.prepare_resign, 0))
        a.evict(room.match.match_id)
        ids.append(room.match.match_id)
    return ids


async def test_an_address_budget_survives_reconnecting(serve: Serve) -> None:
    """Closing every connection and opening new ones does not refill an address's message budget."""
    server = await serve(rate=1000, burst=1000, address_rate=1, address_burst=20)
    started = time.monotonic()
    served = 0
    for _ in range(3):
        conns = [await Client.open(server.url, None, source=FLOODER) for _ in range(4)]
        for conn in conns:
            for _ in range(10):
                await conn.send(type="list")
        for conn in conns:
            for _ in range(10):
                reply = await conn.next()
                served += reply["type"] == "matches"
        for conn in conns:
            await conn.close()
        await eventually(lambda: server.admission.connections == 0, what="the address's last connection to close")
    assert served <= 20 + (time.monotonic() - started) * 1 + 1, served
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.request("matches", type="list")
    await honest.close()


async def test_every_refused_message_is_answered_with_a_retry_hint(serve: Serve) -> None:
    """Each message over the rate gets `rate_limited` naming its request and when to retry; none is dropped unsaid."""
    server = await serve(rate=0.5, burst=5)
    client = await Client.open(server.url, None)
    for _ in range(30):
        await client.send(type="list")
    await client.send(type="watch", match_id="m-some")
    await client.ws.send("not json")
    replies = [await client.next() for _ in range(32)]
    assert [r["type"] for r in replies[:5]] == ["matches"] * 5
    refusals = replies[5:]
    assert {r["code"] for r in refusals} == {"rate_limited"}
    assert [r["request"] for r in refusals] == ["list"] * 25 + ["watch", None]
    assert refusals[-2]["match_id"] == "m-some"
    assert all(1 <= r["retry_ms"] <= 2_000 for r in refusals)
    await client.close()


async def test_a_public_read_over_budget_says_when_to_retry(serve: Serve) -> None:
    """A read refused for rows carries a retry hint long enough for the rows asked."""
    server = await serve(read_rows_rate=100, read_rows_burst=200)
    client = await Client.open(server.url, None)
    await client.request("game_list", type="games", limit=200)
    refusal = await client.request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and 1_000 <= refusal["retry_ms"] <= 2_100
    await client.close()


async def test_watching_a_stored_game_is_answered_without_keeping_it(serve: Serve) -> None:
    """Watching finished games read back from storage answers each with its snapshot and keeps none in memory."""
    server = await serve(max_follow=2, max_follow_per_address=2)
    ids = await finished_games(server, 12)
    watcher = await Client.open(server.url, "watcher")
    for match_id in ids:
        snap = await watcher.request("snapshot", type="watch", match_id=match_id)
        assert (snap["match_id"], snap["status"], snap["reason"]) == (match_id, "finished", "resign")
    assert not server.arena.rooms
    await watcher.close()


async def test_watch_checks_the_follow_limit_before_loading(serve: Serve) -> None:
    """A connection at its follow limit is refused (`too_many`) before a stored game is read into memory."""
    server = await serve(max_follow=2)
    [stored] = await finished_games(server, 1)
    a = server.arena
    for i in range(2):
        await a.create(Variant(), False, 0, [(0, Seat(f"s{i}", f"s{i}")), (1, Seat(f"n{i}", f"n{i}"))],
                       match_id=f"live{i}")
    watcher = await Client.open(server.url, "watcher")
    for i in range(2):
        await watcher.request("snapshot", type="watch", match_id=f"live{i}")
    loaded = set(a.rooms)
    await watcher.send(type="watch", match_id=stored)
    assert await watcher.error() == "too_many"
    assert set(a.rooms) == loaded
    await watcher.close()


async def test_an_over_long_time_control_is_refused_as_the_limits_table_says(serve: Serve) -> None:
    """docs/operations.md's time-control row names the code the server answers an over-long clock with."""
    row = next(line for line in LIMITS_DOC.read_text().splitlines() if line.startswith("| time controls |"))
    documented = row.rsplit("|", 2)[1].split("`")[1]
    server = await serve()
    client = await Client.open(server.url, "creator")
    for clock in ("10801+0", "300+181", "3601/move"):
        await client.send(type="create", variant=f"kalah(6,4,clock={clock})")
        assert await client.error() == documented
    await client.close()


async def test_a_client_that_asks_again_and_again_past_a_full_quota_is_closed(serve: Serve) -> None:
    """`too_many` refusals count like rate refusals: a connection that keeps asking past them is closed (1008)."""
    server = await serve(max_refused=10)
    client = await Client.open(server.url, "insistent")
    with pytest.raises(ConnectionClosed):
        for _ in range(40):  # an open match each, past the quota of 5 open matches
            await client.send(type="create")
            await client.next(timeout=10)
    assert client.ws.close_code == 1008

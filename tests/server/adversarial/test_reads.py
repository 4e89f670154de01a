"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) reading
public data: read budgets per address, per network and in all, and a read many ask at once made once."""

from __future__ import annotations

import asyncio
import gc
import time

import pytest

from tests.conftest import Serve
from tests.helpers.wire import Client, attacker, eventually


async def test_public_reads_of_many_addresses_share_one_budget(serve: Serve) -> None:
    """Each address's read budget also draws on the server's: once many addresses have taken it, another
    address's read (of another network) is `rate_limited` with a retry hint though its own budgets are full."""
    server = await serve(all_read_rows_rate=100)
    readers = [await Client.open(server.url, None, source=attacker(0, network)) for network in (1, 2)]
    assert (await readers[0].request("game_list", type="games", limit=200))["type"] == "game_list"
    refusal = await readers[1].request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and refusal["retry_ms"] >= 1000
    for reader in readers:
        await reader.close()


async def test_the_addresses_of_one_network_share_a_read_budget(serve: Serve) -> None:
    """The addresses of one /24 draw on one network budget between their own and the server's: once they have
    taken it, another of its addresses is `rate_limited` though its own budget is full, while an address of
    another network still reads (the network cannot take the whole server's budget)."""
    server = await serve(network_read_rows_rate=100)
    crowd = [await Client.open(server.url, None, source=attacker(i)) for i in range(2)]
    other = await Client.open(server.url, None, source=attacker(0, 2))
    assert (await crowd[0].request("game_list", type="games", limit=200))["type"] == "game_list"
    refusal = await crowd[1].request("error", type="games", limit=200)
    assert refusal["code"] == "rate_limited" and refusal["retry_ms"] >= 1000 and "network" in refusal["message"]
    assert (await other.request("game_list", type="games", limit=200))["type"] == "game_list"
    for client in (*crowd, other):
        await client.close()


async def test_a_networks_read_debt_outlives_its_addresses_connections(serve: Serve) -> None:
    """An address that drained its network's read budget and disconnected is kept (with the network's budget) until
    that budget refills, though its own refilled long before: a fresh address of the network is still refused."""
    server = await serve(network_read_rows_rate=100, address_rate=1e6, address_burst=10**6)
    for network in range(3):  # the network's 200 rows refill in 2 s: a machine too busy to ask within 1.5 s retries
        started = time.monotonic()
        first = await Client.open(server.url, None, source=attacker(250 * network))
        assert (await first.request("game_list", type="games", limit=200))["type"] == "game_list"
        await first.close()
        await eventually(lambda: server.admission.connections == 0, what="the first address to disconnect")
        await asyncio.sleep(0.2)  # its own budget (2,000 rows a second) has refilled by now; the network's has not
        passer = await Client.open(server.url, None, source=attacker(network, 2))  # a release elsewhere prunes idle
        await passer.close()
        await eventually(lambda: server.admission.connections == 0, what="the passer to disconnect")
        gc.collect()  # what was forgotten is gone (a session and its address refer to each other)
        fresh = await Client.open(server.url, None, source=attacker(250 * network + 1))
        if time.monotonic() - started < 1.5:
            refusal = await fresh.request("error", type="games", limit=200)
            await fresh.close()
            assert refusal["code"] == "rate_limited" and "network" in refusal["message"]
            return
        await fresh.close()
    pytest.fail("three tries took over 1.5 s each to reach the fresh address: the machine is too busy for this test")


async def test_a_read_many_ask_at_once_is_made_once_for_them(serve: Serve) -> None:
    """Even on a quiet server, once the lobby's list is asked more than 50 times within `shared_reads_s` the
    answer made last goes to the next askers (each charged its rows): many addresses asking cost one listing."""
    server = await serve(shared_reads_s=60)
    askers = [await Client.open(server.url, None, source=attacker(i)) for i in range(12)]
    made = server.router.answers.made
    for _ in range(5):
        for asker in askers:
            assert (await asker.request("matches", type="list"))["type"] == "matches"
    assert server.router.answers.made - made == 51
    for client in askers:
        await client.close()

"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) making new
identities: the budgets of new identities per address, per network and in all keep room for others."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, attacker


async def test_new_identities_are_budgeted_per_address_and_in_all(serve: Serve, tmp_path: Path) -> None:
    """Past its budget of new identities an address gets `too_many` with a retry hint; a token still says hello,
    and another address still makes one; the server's own budget caps many addresses together."""
    server = await serve(identities_per_address=3)
    made = [await Client.open(server.url, f"flood{i}", source=attacker(0)) for i in range(3)]
    extra = await Client.open(server.url, None, source=attacker(0))
    refusal = await extra.request("error", type="hello", name="flood3")
    assert refusal["code"] == "too_many" and refusal["retry_ms"] > 60_000
    back = await Client.open(server.url, "ignored", token=made[0].welcome["token"], source=attacker(0))
    assert back.welcome["name"] == "flood0"
    honest = await Client.open(server.url, "honest", source=HONEST)
    for client in (*made, extra, back, honest):
        await client.close()
    everyone = await serve(tmp_path / "other.sqlite3", identities_per_hour=40)
    codes = []
    for i in range(6):  # a burst of 4 for the whole server
        client = await Client.open(everyone.url, None, source=attacker(i, network=2))
        codes.append((await client.request("error" if i >= 4 else "welcome", type="hello", name=f"n{i}"))["type"])
        await client.close()
    assert codes == ["welcome"] * 4 + ["error"] * 2


async def test_new_identities_are_budgeted_per_network(serve: Serve) -> None:
    """The addresses of one /24 share a budget of new identities: past it the next is `too_many` with a retry hint,
    whichever of its addresses asks, while a client of another network still makes one."""
    server = await serve(identities_per_address=3, identities_per_network=4)
    codes = []
    for i in range(5):
        client = await Client.open(server.url, None, source=attacker(i // 3))
        reply = await client.request("error" if i == 4 else "welcome", type="hello", name=f"n{i}")
        codes.append(reply["type"])
        await client.close()
    assert codes == ["welcome"] * 4 + ["error"]
    assert reply["code"] == "too_many" and "network" in reply["message"] and reply["retry_ms"] > 60_000
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.close()

"""The client's address behind a trusted reverse proxy: read from `X-Forwarded-For` / `Forwarded` only when the
peer is a trusted proxy (the right-most hop that is not one), the peer's own otherwise; budgets, bans, logs and
the KGP websocket all count by it."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus

from server.assembly import RunningServer
from server.edge.client_address import TrustedProxies, forwarded_chain
from server.edge.handshakes import Handshakes
from tests.conftest import Serve
from tests.helpers.wire import OPERATOR, Client, eventually

PROXY = "127.0.0.1"
"""The loopback address the tests' proxy connects from (trusted as 127.0.0.1/32)."""
LOOPBACK_PROXY = TrustedProxies.parse(["127.0.0.1/32", "10.0.0.0/8"])


def headers(*pairs: tuple[str, str]) -> Headers:
    """Request headers holding `pairs`, in order."""
    result = Headers()
    for name, value in pairs:
        result[name] = value
    return result


@pytest.mark.parametrize(("peer", "pairs", "client"), [
    ("127.0.0.1", [("X-Forwarded-For", "203.0.113.5")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "6.6.6.6, 203.0.113.5")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "6.6.6.6, 203.0.113.5, 10.1.2.3")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "203.0.113.5")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "203.0.113.5:4711")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "[2001:db8::17]:4711")], "2001:db8::17"),
    ("127.0.0.1", [("X-Forwarded-For", "::ffff:203.0.113.5")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "10.0.0.1, 10.0.0.2")], "10.0.0.1"),
    ("::ffff:127.0.0.1", [("X-Forwarded-For", "203.0.113.5")], "203.0.113.5"),
    ("127.0.0.1", [("Forwarded", 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https')], "2001:db8:cafe::17"),
    ("127.0.0.1", [("Forwarded", "For=203.0.113.5;Proto=https;By=127.0.0.1")], "203.0.113.5"),
    ("127.0.0.1", [("X-Forwarded-For", "203.0.113.5"), ("Forwarded", "for=6.6.6.6")], "203.0.113.5"),
    # malformed from a trusted proxy: the proxy's own address
    ("127.0.0.1", [("X-Forwarded-For", "garbage")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "6.6.6.6, unknown")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "203.0.113.5,")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "fe80::1%eth0")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "[::1")], "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", ", ".join(["203.0.113.5"] * 33))], "127.0.0.1"),
    ("127.0.0.1", [("Forwarded", "for=_hidden")], "127.0.0.1"),
    ("127.0.0.1", [("Forwarded", "proto=https")], "127.0.0.1"),
    ("127.0.0.1", [("Forwarded", "for")], "127.0.0.1"),
    ("127.0.0.1", [], "127.0.0.1"),
    # an untrusted peer: whatever it says
    ("127.1.0.1", [("X-Forwarded-For", "203.0.113.5")], "127.1.0.1"),
    ("127.1.0.1", [("Forwarded", "for=203.0.113.5")], "127.1.0.1"),
    ("2001:db8::1", [("X-Forwarded-For", "203.0.113.5")], "2001:db8::1"),
])
def test_the_client_is_the_right_most_untrusted_hop_of_a_trusted_peer(peer: str, pairs: list[tuple[str, str]],
                                                                       client: str) -> None:
    """Only a trusted peer's header is read; its right-most hop that is not a trusted proxy is the client; a hop
    that cannot be read leaves the peer's address."""
    assert LOOPBACK_PROXY.client(peer, headers(*pairs)) == client


def test_no_trusted_proxy_reads_no_header() -> None:
    """Without `--trusted-proxy` every connection is its peer, headers or not (and before its request is read)."""
    assert TrustedProxies().client("127.0.0.1", headers(("X-Forwarded-For", "203.0.113.5"))) == "127.0.0.1"
    assert LOOPBACK_PROXY.client("127.0.0.1", None) == "127.0.0.1"


def test_a_proxy_on_a_dual_stack_socket_is_still_trusted() -> None:
    """A server listening on `::` sees an IPv4 proxy as `::ffff:127.0.0.1`: still the trusted proxy, for the client
    address and for the half-open handshakes' bounds alike (before, the handshakes counted it as a client)."""
    assert LOOPBACK_PROXY.is_proxy("::ffff:127.0.0.1") and LOOPBACK_PROXY.is_proxy("127.0.0.1")
    assert not LOOPBACK_PROXY.is_proxy("::ffff:127.1.0.1") and not LOOPBACK_PROXY.is_proxy("not-an-address")
    table = Handshakes(per_address=1, per_prefix=1, in_all=10, proxies=LOOPBACK_PROXY)
    assert all(table.arrive(i, "::ffff:127.0.0.1", lambda: None) for i in range(3))


def test_forwarded_chain_lists_hops_client_first() -> None:
    """`X-Forwarded-For` lines are joined in order; `Forwarded` gives its `for=` nodes; neither: no hops."""
    assert forwarded_chain(headers(("X-Forwarded-For", "1.1.1.1, 2.2.2.2"), ("X-Forwarded-For", "3.3.3.3"))) == [
        "1.1.1.1", "2.2.2.2", "3.3.3.3"]
    assert forwarded_chain(headers(("Forwarded", 'for=1.1.1.1;proto=http, for="[::1]:80"'))) == ["1.1.1.1", "[::1]:80"]
    assert forwarded_chain(headers()) == []


def test_a_network_that_cannot_be_read_is_refused_in_one_line() -> None:
    """A trusted proxy that is not a network says so, naming it."""
    with pytest.raises(ValueError, match=r"'10\.0\.0\.0/33' is not a network"):
        TrustedProxies.parse(["10.0.0.0/33"])


async def open_from(url: str, source: str, forwarded: str | None, name: str | None = None) -> Client:
    """A client connecting from loopback `source`, sending `X-Forwarded-For: forwarded` if given."""
    extra: dict[str, Any] = {} if forwarded is None else {"additional_headers": {"X-Forwarded-For": forwarded}}
    ws: ClientConnection = await connect(url, local_addr=(source, 0), **extra)
    client = Client(ws)
    if name is not None:
        await client.send(type="hello", name=name)
        client.welcome = await client.expect("welcome")
    return client


async def refused(url: str, source: str, forwarded: str | None) -> int | None:
    """The HTTP status a handshake is refused with; None if it was accepted (then closed)."""
    try:
        client = await open_from(url, source, forwarded)
    except InvalidStatus as exc:
        return exc.response.status_code
    await client.close()
    return None


def held(server: RunningServer, address: str) -> int:
    """Connections the server counts under `address`."""
    peer = server.admission.peers.known(address)
    return 0 if peer is None else peer.connections


async def test_clients_behind_a_trusted_proxy_are_counted_apart(serve: Serve) -> None:
    """Through the trusted proxy each forwarded client has its own per-address limit; a client's own forged hop
    at the left of the chain is ignored; a malformed chain counts as the proxy."""
    server = await serve(trusted_proxies=("127.0.0.1/32",), max_per_address=2)
    first = [await open_from(server.url, PROXY, "203.0.113.5") for _ in range(2)]
    assert await refused(server.url, PROXY, "203.0.113.5") == 429
    assert await refused(server.url, PROXY, "198.51.100.1, 203.0.113.5") == 429, "a forged left hop was believed"
    other = await open_from(server.url, PROXY, "203.0.113.6")
    odd = await open_from(server.url, PROXY, "not-an-address")
    assert (held(server, "203.0.113.5"), held(server, "203.0.113.6"), held(server, PROXY)) == (2, 1, 1)
    for client in (*first, other, odd):
        await client.close()


async def test_a_forged_header_from_an_untrusted_peer_changes_nothing(serve: Serve) -> None:
    """From 127.1.x.y (not a trusted proxy) a forwarded address is ignored: the peer is counted and limited."""
    server = await serve(trusted_proxies=("127.0.0.1/32",), max_per_address=2)
    first = [await open_from(server.url, "127.1.0.1", f"203.0.113.{i}") for i in (1, 2)]
    assert await refused(server.url, "127.1.0.1", "203.0.113.3") == 429
    assert (held(server, "127.1.0.1"), held(server, "203.0.113.1")) == (2, 0)
    plain = await serve(max_per_address=2)  # no trusted proxy at all: the same from the loopback itself
    mine = [await open_from(plain.url, PROXY, f"203.0.113.{i}") for i in (1, 2)]
    assert await refused(plain.url, PROXY, "203.0.113.3") == 429
    for client in (*first, *mine):
        await client.close()


async def test_bans_logs_and_online_use_the_forwarded_address(serve: Serve,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """An address ban hits the forwarded client and not the proxy's other clients; `online` and the hello log line
    show the forwarded address."""
    server = await serve(trusted_proxies=("127.0.0.1/32",))
    operator = await Client.open(server.url, "op", source="127.0.0.2")
    caplog.set_level(logging.INFO)
    mallory = await open_from(server.url, PROXY, "203.0.113.66", name="mallory")
    alice = await open_from(server.url, PROXY, "203.0.113.7", name="alice")
    remotes = [getattr(r, "fields", {}).get("remote", "") for r in caplog.records if r.getMessage() == "hello"]
    assert any(remote.startswith("203.0.113.66 via 127.0.0.1:") for remote in remotes), remotes
    await operator.send(type="moderate", operator_token=OPERATOR, act="online")
    online = await operator.expect("moderated")
    assert {("mallory", "203.0.113.66"), ("alice", "203.0.113.7")} <= {(r["name"], r["address"])
                                                                        for r in online["rows"]}
    await operator.send(type="moderate", operator_token=OPERATOR, act="ban", kind="address", target="203.0.113.66",
                        reason="spam")
    await operator.expect("moderated")
    await eventually(lambda: mallory.ws.close_code == 1008)
    assert (await alice.request("matches", type="list"))["type"] == "matches"
    for client in (operator, alice):
        await client.close()


async def test_a_kgp_agent_on_the_websocket_is_its_forwarded_address(serve: Serve) -> None:
    """An outside engine reaching `/kgp` through the trusted proxy is known by the address the proxy forwarded."""
    server = await serve(trusted_proxies=("127.0.0.1/32",), kgp_port=0)
    ws = await connect(server.url + "/kgp", additional_headers={"X-Forwarded-For": "203.0.113.9"})
    assert server.kgp is not None
    gateway = server.kgp
    await eventually(lambda: bool(gateway.agents))
    assert {agent.host for agent in gateway.agents} == {"203.0.113.9"}
    await ws.close()

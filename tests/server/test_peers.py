"""The per-address table: budgets kept across reconnects until they refill, a bound on idle addresses, prefixes."""

from __future__ import annotations

from server.core.networks import prefix_of
from server.core.rates import RateLimiter
from server.edge.peers import PeerTable
from server.edge.session import Peer
from tests.helpers.wire import FakeClock


def table(clock: FakeClock, max_idle: int = 100) -> PeerTable:
    """A table whose addresses get 10 messages a second, bursts of 10, on `clock`."""
    return PeerTable(lambda host: Peer(host, RateLimiter(10, 10, clock), RateLimiter(10, 10, clock)), max_idle,
                     clock)


def test_an_address_finds_its_spent_budget_after_reconnecting() -> None:
    """The last connection's close keeps the address's state; a new connection gets it back, spent as it was."""
    clock = FakeClock()
    peers = table(clock)
    peer = peers.acquire("10.0.0.1")
    assert all(peer.messages.allow() for _ in range(10)) and not peer.messages.allow()
    peers.release(peer)
    again = peers.acquire("10.0.0.1")
    assert again is peer and not again.messages.allow()


def test_an_idle_address_is_forgotten_once_its_budgets_refilled() -> None:
    """An idle address whose buckets are full again is dropped at the next release (it is as good as new)."""
    clock = FakeClock()
    peers = table(clock)
    spent = peers.acquire("10.0.0.1")
    spent.reads.allow(10)
    peers.release(spent)
    clock.t += 2.0
    peers.release(peers.acquire("10.0.0.2"))
    assert "10.0.0.1" not in peers.idle and len(peers) == 0


def test_idle_addresses_are_bounded() -> None:
    """Past `max_idle` idle addresses the longest idle ones are forgotten, spent or not."""
    clock = FakeClock()
    peers = table(clock, max_idle=3)
    for i in range(10):
        peer = peers.acquire(f"10.0.1.{i}")
        peer.messages.allow(10)
        peers.release(peer)
    assert list(peers.idle) == ["10.0.1.7", "10.0.1.8", "10.0.1.9"]


def test_prefixes_group_a_network() -> None:
    """IPv4 addresses count by /24, IPv6 by /64 (a mapped IPv4 as its IPv4), and the table counts per prefix."""
    assert prefix_of("192.0.2.77") == "192.0.2.0/24"
    assert prefix_of("2001:db8:1:2:aaaa::1") == prefix_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert prefix_of("::ffff:192.0.2.1") == "192.0.2.0/24"
    assert prefix_of("some-socket") == "some-socket"
    peers = table(FakeClock())
    a, b = peers.acquire("192.0.2.1"), peers.acquire("192.0.2.2")
    assert peers.connections_of_prefix("192.0.2.200") == 2
    peers.release(a)
    peers.release(b)
    assert peers.connections_of_prefix("192.0.2.200") == 0

"""What the server keeps per network address and per network prefix, across reconnects and within a bound.

An address's budgets (messages, public-read rows, new identities) outlive its connections: a
client that closes and reconnects finds them as it left them. An address with no connection is
kept until its budgets have refilled (then it is the same as a new one) or until more than
`max_idle` addresses wait so, the longest-idle first. Connections are also counted per prefix
(an IPv4 /24, an IPv6 /64: what one customer of a provider usually holds), so that one network
cannot fill the server's slots by spreading over its addresses.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable

from server.core.networks import prefix_of
from server.edge.session import Peer

MAX_IDLE = 20_000
"""Addresses without a connection whose unspent budgets are kept (about 1 KiB each)."""



class PeerTable:
    """Every address's `Peer`: the connected ones, and the idle ones kept until their budgets refill."""

    def __init__(self, make: Callable[[str], Peer], max_idle: int = MAX_IDLE,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.make = make
        self.max_idle = max_idle
        self.now = now
        self.live: dict[str, Peer] = {}
        self.idle: OrderedDict[str, Peer] = OrderedDict()
        self.prefixes: Counter[str] = Counter()
        """Connections per network prefix."""
        self.members: dict[str, set[str]] = {}
        """Network prefix -> its connected addresses."""

    def get(self, host: str) -> Peer | None:
        """The connected address `host`'s state, or None."""
        return self.live.get(host)

    def known(self, host: str) -> Peer | None:
        """The address `host`'s state, connected or idle (kept until its budgets refill), or None."""
        return self.live.get(host) or self.idle.get(host)

    def values(self) -> list[Peer]:
        """The connected addresses' states."""
        return list(self.live.values())

    def connections_of_prefix(self, host: str) -> int:
        """Connections open from `host`'s network prefix."""
        return self.prefixes.get(prefix_of(host), 0)

    def acquire(self, host: str) -> Peer:
        """A new connection from `host`: its address's state (kept from before, or new), counted."""
        peer = self.live.get(host)
        if peer is None:
            peer = self.idle.pop(host, None) or self.make(host)
            self.live[host] = peer
        peer.connections += 1
        prefix = prefix_of(host)
        self.prefixes[prefix] += 1
        self.members.setdefault(prefix, set()).add(host)
        return peer

    def release(self, peer: Peer) -> None:
        """One of `peer`'s connections closed; after its last one the state waits, idle, until it refills."""
        peer.connections -= 1
        prefix = prefix_of(peer.address)
        self.prefixes[prefix] -= 1
        if self.prefixes[prefix] <= 0:
            del self.prefixes[prefix]
        if peer.connections > 0:
            return
        members = self.members.get(prefix)
        if members is not None:
            members.discard(peer.address)
            if not members:
                del self.members[prefix]
        self.live.pop(peer.address, None)
        self.idle[peer.address] = peer
        self.prune()

    def prune(self) -> None:
        """Forget idle addresses whose budgets refilled (oldest first), and any beyond `max_idle`."""
        now = self.now()
        while self.idle:
            address, oldest = next(iter(self.idle.items()))
            if len(self.idle) <= self.max_idle and oldest.full_at() > now:
                break
            del self.idle[address]

    def crowded(self) -> tuple[str, int]:
        """The prefix with the most connections, and how many (("", 0) with none)."""
        found = self.prefixes.most_common(1)
        return found[0] if found else ("", 0)

    def of_prefix(self, prefix: str) -> list[Peer]:
        """The connected addresses of a network prefix."""
        return [self.live[address] for address in self.members.get(prefix, ()) if address in self.live]

    def __len__(self) -> int:
        """Addresses known: connected and idle."""
        return len(self.live) + len(self.idle)

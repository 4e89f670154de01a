"""Connections still in their opening handshake: their HTTP request has not fully arrived.

Such a connection holds a socket (an open file) before any other limit sees it (the caps on
connections count a connection once its request is read), so one address sending requests a
byte at a time could otherwise hold thousands of sockets and, at the open-files limit, make every
handshake and `/health` fail. `Handshakes` bounds them per address, per network (IPv4 /24, IPv6
/64) and in all; a connection past a bound is dropped as soon as it is accepted. At the bound in
all, a newcomer from a network other than the one holding the most half-open connections drops
that network's oldest one instead, so many addresses of a few networks cannot keep everyone out.
A trusted reverse proxy's connections count only in all (it sends whole requests, for many
clients). websockets' `open_timeout` (`handshake_timeout`) closes any that stays unfinished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

from server.core.networks import address_of, prefix_of
from server.edge.client_address import NO_PROXIES, TrustedProxies
from server.logs import event as log_event

LOG_EVERY_S = 10.0
"""Refused or dropped handshakes are logged at most this often (with their count since), so a flood of them
does not flood the log."""


class Handshakes:
    """Connections whose request has not arrived, by address and network, within their bounds."""

    def __init__(self, per_address: int, per_prefix: int, in_all: int, proxies: TrustedProxies = NO_PROXIES) -> None:
        self.per_address = per_address
        self.per_prefix = per_prefix
        self.in_all = in_all
        self.proxies = proxies
        """The trusted proxies (their half-open connections count only in all)."""
        self.of_address: dict[str, int] = {}
        self.of_prefix: dict[str, dict[Hashable, Callable[[], None]]] = {}
        """Network -> its half-open connections, oldest first, each with the function that drops it."""
        self.where: dict[Hashable, tuple[str, str]] = {}
        """A half-open connection -> its address and network as counted."""
        self.refused = 0
        """Handshakes dropped at accept, or shed for a newcomer, since the start."""
        self._unlogged = 0
        self._logged_at = 0.0

    @property
    def count(self) -> int:
        """Connections in their handshake now."""
        return len(self.where)

    def arrive(self, conn: Hashable, peer: str, drop: Callable[[], None]) -> bool:
        """Count a connection just accepted from `peer` (`drop` closes it); whether it may stay (if not, the caller
        drops it)."""
        exempt = self.is_proxy(peer)
        address, prefix = (f"proxy {peer}", f"proxy {peer}") if exempt else (address_of(peer), prefix_of(peer))
        if not exempt and (self.of_address.get(address, 0) >= self.per_address
                           or len(self.of_prefix.get(prefix, ())) >= self.per_prefix):
            self._refuse(peer, "per_address" if self.of_address.get(address, 0) >= self.per_address else "per_prefix")
            return False
        if self.count >= self.in_all and not self._shed_for(prefix):
            self._refuse(peer, "in_all")
            return False
        self.where[conn] = (address, prefix)
        self.of_address[address] = self.of_address.get(address, 0) + 1
        self.of_prefix.setdefault(prefix, {})[conn] = drop
        return True

    def is_proxy(self, peer: str) -> bool:
        """Whether `peer` is a trusted reverse proxy (an IPv4-mapped IPv6 address as its IPv4)."""
        return self.proxies.is_proxy(peer)

    def done(self, conn: Hashable) -> None:
        """A connection's request arrived, or it closed: it no longer counts."""
        counted = self.where.pop(conn, None)
        if counted is None:
            return
        address, prefix = counted
        left = self.of_address[address] - 1
        if left:
            self.of_address[address] = left
        else:
            del self.of_address[address]
        waiting = self.of_prefix[prefix]
        del waiting[conn]
        if not waiting:
            del self.of_prefix[prefix]

    def _shed_for(self, prefix: str) -> bool:
        """At the bound in all: drop the oldest half-open connection of the network holding the most, if that holds
        more than `prefix` would; whether one was dropped."""
        crowded = max(self.of_prefix, key=lambda p: len(self.of_prefix[p]), default=None)
        if crowded is None or len(self.of_prefix[crowded]) <= len(self.of_prefix.get(prefix, ())) + 1:
            return False
        oldest, drop = next(iter(self.of_prefix[crowded].items()))
        self.done(oldest)
        drop()
        self._refuse(crowded, "shed")
        return True

    def _refuse(self, peer: str, reason: str) -> None:
        """Count a dropped handshake; log it unless one was logged in the last `LOG_EVERY_S` (then later, with the
        count)."""
        self.refused += 1
        self._unlogged += 1
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_S:
            log_event("handshake_refused", remote=peer, reason=reason, count=self._unlogged, half_open=self.count)
            self._logged_at, self._unlogged = now, 0

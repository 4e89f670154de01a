"""Failed operator authentications, throttled and logged per address and per network.

The operator token opens `/metrics`, moderation (the `moderate` request, which `kalah admin` sends)
and rated exhibitions. Each place asks `OperatorAuth.check` rather than comparing the token itself:
a wrong token from an address counts against that address and its network (IPv4 /24, IPv6 /64);
past a few free failures each further one locks the address (or the whole network) out of operator
requests for a time that doubles with every failure, up to a cap, and a request there while locked
is refused (`rate_limited` with its `retry_ms`; HTTP 429 with `Retry-After` for `/metrics`) without
its token being looked at, so an attacker cannot learn whether a guess was right. The right token
from an address that is not locked works at once, whatever others guess; it clears its address's
count. Each failure is logged (`operator_auth_failed`), and each lock (`operator_auth_locked`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from server.core.errors import RateLimitedError
from server.core.networks import prefix_of
from server.logs import event as log_event


@dataclass
class Failures:
    """The failed operator authentications of one address or network."""

    count: int = 0
    locked_until: float = 0.0
    last: float = 0.0


@dataclass(frozen=True)
class AuthLimits:
    """How many wrong tokens an address or a network may send freely, and the locks after them."""

    free_per_address: int = 5
    free_per_network: int = 20
    first_lock_s: float = 1.0
    """The lock after the first failure past the free ones; each later failure doubles it."""
    max_lock_s: float = 600.0
    forget_s: float = 3600.0
    """Failures of an address or network that sent none for this long (and is not locked) are forgotten."""
    remembered: int = 10_000
    """Addresses (and networks) remembered at most; past it the longest quiet is forgotten first."""


class OperatorAuth:
    """Checks operator tokens for every place that takes one, throttling and logging the wrong ones."""

    def __init__(self, is_operator: Callable[[str | None], bool], limits: AuthLimits = AuthLimits(),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.is_operator = is_operator
        """Whether a token is the operator's secret (compared in constant time)."""
        self.limits = limits
        self.clock = clock
        self.addresses: OrderedDict[str, Failures] = OrderedDict()
        self.networks: OrderedDict[str, Failures] = OrderedDict()
        self.failed = 0
        """Wrong tokens since the start."""
        self.throttled = 0
        """Operator requests refused unread because their address or network was locked."""

    def check(self, address: str, token: str | None, where: str) -> bool:
        """Whether `token`, sent from `address` to `where` (`metrics`, `moderation`, `exhibition`), is the operator's;
        `RateLimitedError` (with the wait) while the address or its network is locked out after wrong tokens. A
        missing token (None or empty) is no guess: False, not counted."""
        now = self.clock()
        network = prefix_of(address)
        wait = max(self._locked(self.addresses, address, now), self._locked(self.networks, network, now))
        if wait > 0:
            self.throttled += 1
            raise RateLimitedError("too many wrong operator tokens from your address or network: wait before trying "
                                   "again", wait)
        if not token:
            return False
        if self.is_operator(token):
            self.addresses.pop(address, None)
            return True
        self.failed += 1
        limits = self.limits
        by_address = self._fail(self.addresses, address, limits.free_per_address, now)
        by_network = self._fail(self.networks, network, limits.free_per_network, now)
        log_event("operator_auth_failed", level=30, remote=address, where=where, failures=by_address.count,
                  network_failures=by_network.count)
        for kind, key, record in (("address", address, by_address), ("network", network, by_network)):
            if record.locked_until > now:
                log_event("operator_auth_locked", level=30, kind=kind, target=key, where=where,
                          failures=record.count, lock_s=round(record.locked_until - now, 3))
        return False

    @staticmethod
    def _locked(table: OrderedDict[str, Failures], key: str, now: float) -> float:
        """Seconds `key` stays locked out (0: not locked)."""
        record = table.get(key)
        return 0.0 if record is None else max(0.0, record.locked_until - now)

    def _fail(self, table: OrderedDict[str, Failures], key: str, free: int, now: float) -> Failures:
        """Count one failure of `key`; past `free` of them, lock it for a time that doubles with each."""
        limits = self.limits
        record = table.get(key)
        if record is None or (now - record.last > limits.forget_s and record.locked_until <= now):
            record = Failures()
        table[key] = record
        table.move_to_end(key)
        record.count += 1
        record.last = now
        past = record.count - free
        if past > 0:
            record.locked_until = now + min(limits.max_lock_s, limits.first_lock_s * 2 ** min(past - 1, 40))
        while len(table) > limits.remembered:
            table.popitem(last=False)
        return record

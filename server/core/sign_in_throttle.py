"""Failed sign-ins, throttled per account name and per network with growing delays.

Each key (an account's name in canonical form, a network prefix) counts its recent failures. The
first `free` failures cost nothing; after them each failure makes the key wait `base_s`, doubling
with every further failure up to `max_s`, before its next try is even checked (refused with
`SignInThrottledError`, no password hashed). Failures are forgotten `forget_s` after the last one,
and a success clears its account's count. A name that is no account counts exactly as one that is,
so the throttle tells nothing either. The keys held are bounded (`max_keys`, the oldest leave first).
Recovery codes are throttled apart (their own keys), so failed passwords never lock the owner out of
a code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import SignInThrottledError


@dataclass
class Failures:
    """One key's recent failures and when it may try again (monotonic seconds)."""

    count: int
    last: float
    until: float


@dataclass(frozen=True)
class ThrottleLimits:
    """Free failures per account and per network, the first delay, its cap, and when failures are forgotten."""

    account_free: int = 5
    network_free: int = 20
    base_s: float = 1.0
    max_s: float = 900.0
    forget_s: float = 3600.0
    max_keys: int = 100_000


class SignInThrottle:
    """The failures of sign-ins by key, and the waits they impose."""

    def __init__(self, clock: Callable[[], float], limits: ThrottleLimits | None = None) -> None:
        self.clock = clock
        self.limits = limits or ThrottleLimits()
        self._keys: dict[str, Failures] = {}

    def check(self, account: str, network: str) -> None:
        """Refuse a try while the account or the network must wait (`SignInThrottledError` with the wait)."""
        now = self.clock()
        wait = max(self._wait(f"a:{account}", now), self._wait(f"n:{network}", now))
        if wait > 0:
            raise SignInThrottledError(f"too many failed sign-ins for this account or from your network: try again "
                                       f"in {max(1, round(wait))} s (or sign in with a recovery code)", wait)

    def failed(self, account: str, network: str) -> None:
        """Count a failed try against the account and the network."""
        now = self.clock()
        self._fail(f"a:{account}", now, self.limits.account_free)
        self._fail(f"n:{network}", now, self.limits.network_free)

    def succeeded(self, account: str) -> None:
        """The account's owner signed in: its failures are forgotten (the network's are not)."""
        self._keys.pop(f"a:{account}", None)

    def _wait(self, key: str, now: float) -> float:
        """Seconds `key` must still wait (0: none); a key idle for `forget_s` is forgotten."""
        failures = self._keys.get(key)
        if failures is None:
            return 0.0
        if now - failures.last > self.limits.forget_s:
            del self._keys[key]
            return 0.0
        return max(0.0, failures.until - now)

    def _fail(self, key: str, now: float, free: int) -> None:
        """One more failure of `key`: past `free`, a delay doubling with each one."""
        failures = self._keys.pop(key, None)
        if failures is None or now - failures.last > self.limits.forget_s:
            failures = Failures(0, now, now)
        failures.count += 1
        failures.last = now
        over = failures.count - free
        if over > 0:
            failures.until = now + min(self.limits.max_s, self.limits.base_s * 2 ** min(over - 1, 30))
        self._keys[key] = failures  # the most recent last, so the oldest leave first
        while len(self._keys) > self.limits.max_keys:
            del self._keys[next(iter(self._keys))]

"""Failed sign-ins, throttled per account name and per network with growing delays.

Each key (an account's name in canonical form, a network prefix) counts its recent failures. The
first `free` failures cost nothing; after them each failure makes the key wait `base_s`, doubling
with every further failure up to `max_s`, before its next try is even checked (refused with
`SignInThrottledError`, no password hashed). Failures are forgotten `forget_s` after the last one,
and a success clears its account's count. A name that is no account counts exactly as one that is,
so the throttle tells nothing either. The keys held are bounded (`max_keys`, the oldest leave first).
Recovery codes are throttled apart (their own keys), so failed passwords never lock the owner out of
a code.

A cluster node's throttle is given the counts every node shares (`server.core.failure_counts`, in the cluster's
Redis): its `admit`, `count_failure` and `count_success` read and write those, so guesses at one account spread over
several nodes meet its delays exactly as on one server. It still counts each failure in its own memory too: while the
shared counts cannot be read (Redis down or unreachable), a try is checked against this node's own counts, so an
outage never lets guesses through unthrottled (each node then throttles what it sees), and a right password still
signs in; the fallback is logged once (`sign_in_counts_unshared`), and its end too (`sign_in_counts_shared`). A
server on its own has no shared counts: those methods use its memory alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import SignInThrottledError
from server.core.failure_counts import FailureCounts, FailureCountsError
from server.logs import event as log_event

REFUSALS = {
    "password": ("too many failed sign-ins for this account or from your network",
                 " (or sign in with a recovery code)"),
    "code": ("too many wrong recovery codes from your network", ""),
    "passkey": ("too many failed passkey sign-ins from your network", " (or sign in with your password)"),
}
"""By the throttle's scope: what failed too often, and the other way in a refusal names (none for codes: their
throttle is the one that never locks the owner out)."""


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

    def __init__(self, clock: Callable[[], float], limits: ThrottleLimits | None = None,
                 shared: FailureCounts | None = None, scope: str = "password") -> None:
        self.clock = clock
        self.limits = limits or ThrottleLimits()
        self.shared = shared
        """The counts every node of a cluster shares (None: a server on its own, its memory is all)."""
        if scope not in REFUSALS:
            raise ValueError(f"a sign-in throttle counts one of {', '.join(REFUSALS)}, not {scope!r}")
        self.scope = scope
        """What this throttle counts (`password`, `code`, `passkey`): its keys in the shared counts begin with it."""
        self._keys: dict[str, Failures] = {}
        self._unshared = False
        """Whether the shared counts failed at the last try (this node's own are used until they answer again)."""

    async def admit(self, account: str, network: str) -> None:
        """Refuse a try while the account or the network must wait as every node counts (this node's own counts
        while the shared ones cannot be read): `SignInThrottledError` with the wait."""
        if self.shared is None:
            self.check(account, network)
            return
        try:
            wait = await self.shared.wait([self._shared_key("a", account), self._shared_key("n", network)])
        except FailureCountsError as exc:
            self._lost(exc)
            self.check(account, network)
            return
        self._back()
        if wait > 0:
            raise self._refusal(wait)

    async def count_failure(self, account: str, network: str) -> None:
        """Count a failed try against the account and the network, here and in the shared counts."""
        self.failed(account, network)
        if self.shared is None:
            return
        limits = self.limits
        try:
            for kind, key, free in (("a", account, limits.account_free), ("n", network, limits.network_free)):
                await self.shared.fail(self._shared_key(kind, key), free, limits.base_s, limits.max_s,
                                       limits.forget_s)
        except FailureCountsError as exc:
            self._lost(exc)
            return
        self._back()

    async def count_success(self, account: str) -> None:
        """The account's owner signed in: its failures are forgotten here and in the shared counts."""
        self.succeeded(account)
        if self.shared is None:
            return
        try:
            await self.shared.clear(self._shared_key("a", account))
        except FailureCountsError as exc:
            self._lost(exc)
            return
        self._back()

    def check(self, account: str, network: str) -> None:
        """Refuse a try while the account or the network must wait by this node's own counts
        (`SignInThrottledError` with the wait)."""
        now = self.clock()
        wait = max(self._wait(f"a:{account}", now), self._wait(f"n:{network}", now))
        if wait > 0:
            raise self._refusal(wait)

    def failed(self, account: str, network: str) -> None:
        """Count a failed try against the account and the network."""
        now = self.clock()
        self._fail(f"a:{account}", now, self.limits.account_free)
        self._fail(f"n:{network}", now, self.limits.network_free)

    def succeeded(self, account: str) -> None:
        """The account's owner signed in: its failures are forgotten (the network's are not)."""
        self._keys.pop(f"a:{account}", None)

    def _shared_key(self, kind: str, key: str) -> str:
        """The name of an account's (`a`) or a network's (`n`) count in the shared counts."""
        return f"{self.scope}:{kind}:{key}"

    def _lost(self, exc: FailureCountsError) -> None:
        """The shared counts failed: say so once, until they answer again."""
        if not self._unshared:
            self._unshared = True
            log_event("sign_in_counts_unshared", scope=self.scope, error=str(exc), level=30)

    def _back(self) -> None:
        """The shared counts answered: say so once after they had failed."""
        if self._unshared:
            self._unshared = False
            log_event("sign_in_counts_shared", scope=self.scope)

    def _refusal(self, wait: float) -> SignInThrottledError:
        """The refusal of a try that must wait `wait` seconds more, naming what failed and what else signs in."""
        what, other = REFUSALS[self.scope]
        return SignInThrottledError(f"{what}: try again in {max(1, round(wait))} s{other}", wait)

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

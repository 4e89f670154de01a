"""Token buckets: a rate on average with bursts, alone, drawing on a shared bucket too, or a network's."""

from __future__ import annotations

import time
from collections.abc import Callable


class RateLimiter:
    """A token bucket: `rate` messages a second on average, bursts up to `burst`."""

    __slots__ = ("burst", "now", "rate", "refused", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.now = now
        self.tokens = float(burst)
        self.stamp = now()
        self.refused = 0

    def allow(self, cost: float = 1.0) -> bool:
        """Take `cost` tokens if that many are left; count a refusal otherwise."""
        self.refill()
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        self.refused += 1
        return False

    def refill(self) -> None:
        """Add the tokens earned since the last look."""
        now = self.now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def charge(self, cost: float) -> None:
        """Take `cost` tokens even if fewer are left (a debt later requests wait out)."""
        self.refill()
        self.tokens -= cost

    def wait_s(self, cost: float = 1.0) -> float:
        """Seconds until `cost` tokens will be there (0: now)."""
        self.refill()
        return max(0.0, (min(cost, self.burst) - self.tokens) / self.rate) if self.rate > 0 else float("inf")

    def full_at(self) -> float:
        """When the bucket will be full again (a bucket full by then is the same as a new one)."""
        return self.stamp + max(0.0, self.burst - self.tokens) / self.rate if self.rate > 0 else float("inf")


class SharedLimiter(RateLimiter):
    """An address's bucket that also draws on one bucket of the whole server: a request passes only if both
    have the tokens (many addresses together cannot take more than the server's share)."""

    __slots__ = ("shared",)

    def __init__(self, rate: float, burst: int, shared: RateLimiter) -> None:
        super().__init__(rate, burst, shared.now)
        self.shared = shared

    def allow(self, cost: float = 1.0) -> bool:
        """Take `cost` from this bucket and the shared one, or from neither."""
        if not super().allow(cost):
            return False
        if self.shared.allow(cost):
            return True
        self.tokens += cost  # refused by the server's bucket: this one keeps its tokens
        self.refused += 1
        return False

    def charge(self, cost: float) -> None:
        """Take `cost` from this bucket and the shared one even if fewer are left (debts both wait out)."""
        super().charge(cost)
        self.shared.charge(cost)

    def wait_s(self, cost: float = 1.0) -> float:
        """Seconds until both buckets will have `cost` tokens."""
        return max(super().wait_s(cost), self.shared.wait_s(cost))


class NetworkLimiter(SharedLimiter):
    """A network's bucket between its addresses' buckets and the server's (kept while an address of it is known)."""

    __slots__ = ("__weakref__",)

"""Failed sign-ins counted where every server of a deployment reads them: the small protocol the throttle calls.

A server on its own has none (its throttle counts in its memory: `server.core.sign_in_throttle`); a cluster node
counts in the cluster's Redis (`server.cluster.sign_in_counts`), so that one account's or one network's failures
are throttled alike whichever nodes they were spread over. The counts follow the throttle's rules exactly (free
failures, then a delay doubling with each one up to a cap, all forgotten an hour after the last), timed by the
shared store's own clock, never a node's.
"""

from __future__ import annotations

from typing import Protocol


class FailureCountsError(Exception):
    """The shared counts cannot be read or written just now (the throttle falls back on the node's own)."""


class FailureCounts(Protocol):
    """Failure counts shared by every server of a deployment, by key (each key names its throttle and what it counts:
    an account, a network)."""

    async def wait(self, keys: list[str]) -> float:
        """Seconds the most held of `keys` must still wait (0: none); `FailureCountsError` if it cannot be read."""

    async def fail(self, key: str, free: int, base_s: float, max_s: float, forget_s: float) -> None:
        """One more failure of `key`: past `free`, a wait of `base_s` doubling with each one up to `max_s`; all of
        them forgotten `forget_s` after the last (`FailureCountsError` if it cannot be written)."""

    async def clear(self, key: str) -> None:
        """Forget `key`'s failures (`FailureCountsError` if it cannot be written)."""

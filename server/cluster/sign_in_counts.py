"""Failed sign-ins counted in the cluster's Redis, so that every node throttles one account or network alike.

Each count is a hash `kalah:signin:<scope>:<a|n>:<key>` of `count` and `until` (when its wait ends, in milliseconds
by Redis's clock: the nodes' clocks never come in), changed by one Lua script per failure (so two nodes' failures
at once are both counted) and kept `forget_s` after its last failure. The node talks to Redis on a connection of its
own with short timeouts: a sign-in never hangs on an unreachable Redis; after a failure Redis is left alone for
`PAUSE_S` (each try meanwhile is told at once that the counts cannot be read, and the node's own are used).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from server.core.failure_counts import FailureCountsError

PREFIX = "kalah:signin:"
TIMEOUT_S = 0.5
"""The longest one command may take (connecting included) before the counts are taken as unreadable."""
PAUSE_S = 2.0
"""After a failed command, how long every try uses the node's own counts before Redis is asked again."""

FAIL = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
local over = count - tonumber(ARGV[1])
if over > 0 then
  local delay = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * 2 ^ math.min(over - 1, 30))
  redis.call('HSET', KEYS[1], 'until', string.format('%.0f', now + delay))
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return count
"""
"""One more failure of KEYS[1] (ARGV: free failures, first delay, its cap, forget after; milliseconds)."""

WAIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = 0
for _, key in ipairs(KEYS) do
  local ends = tonumber(redis.call('HGET', key, 'until') or '0')
  if ends - now > wait then wait = ends - now end
end
return wait
"""
"""Milliseconds the most held of KEYS must still wait (0: none)."""


class RedisFailureCounts:
    """The cluster's shared counts of failed sign-ins (`server.core.failure_counts.FailureCounts`) in Redis."""

    def __init__(self, url: str) -> None:
        self.redis: redis.Redis = redis.from_url(url, decode_responses=True, socket_timeout=TIMEOUT_S,
                                                 socket_connect_timeout=TIMEOUT_S)
        self._fail = self.redis.register_script(FAIL)
        self._wait = self.redis.register_script(WAIT)
        self._paused_until = 0.0

    async def wait(self, keys: list[str]) -> float:
        """Seconds the most held of `keys` must still wait (0: none)."""
        return float(await self._run(self._wait, [PREFIX + key for key in keys], [])) / 1000

    async def fail(self, key: str, free: int, base_s: float, max_s: float, forget_s: float) -> None:
        """One more failure of `key`: past `free`, a wait of `base_s` doubling up to `max_s`; forgotten `forget_s`
        after the last."""
        await self._run(self._fail, [PREFIX + key],
                        [free, round(base_s * 1000), round(max_s * 1000), max(1, round(forget_s * 1000))])

    async def clear(self, key: str) -> None:
        """Forget `key`'s failures."""
        await self._call(lambda: self.redis.delete(PREFIX + key))

    async def close(self) -> None:
        """Close the connection."""
        await self.redis.aclose()

    async def _run(self, script: Any, keys: list[str], args: list[int]) -> Any:
        """Run one of the scripts (loaded into Redis at its first use)."""
        return await self._call(lambda: script(keys=keys, args=args))

    async def _call(self, command: Callable[[], Awaitable[Any]]) -> Any:
        """Send one command; `FailureCountsError` if Redis fails it, or failed one less than `PAUSE_S` ago."""
        if time.monotonic() < self._paused_until:
            raise FailureCountsError("Redis failed just now")
        try:
            return await command()
        except (RedisError, OSError, TimeoutError) as exc:
            self._paused_until = time.monotonic() + PAUSE_S
            raise FailureCountsError(f"Redis: {exc!r}") from None

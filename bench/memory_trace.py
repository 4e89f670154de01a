"""The server's resident memory through a benchmark's phase: sampled from /proc, summed up as levels and slopes.

`RssSampler` reads a process's RSS every second while a phase runs; `rss_summary` says where it
stood when the measured part began, its peak, where it ended, and how fast it grew over the first
and the last third of the measured part (a least-squares slope, MiB a minute), with the RSS at
each whole minute: a server whose memory is bounded levels off (the last third's slope near
zero) however long the flood; one that holds what the flood leaves grows at the same pace to
the end.
"""

from __future__ import annotations

import asyncio
import contextlib

from harness import rss

MIB = 1 << 20


class RssSampler:
    """Samples a process's resident memory every `every_s` seconds (from `start()` to `stop()`)."""

    def __init__(self, pid: int, every_s: float = 1.0) -> None:
        self.pid = pid
        self.every_s = every_s
        self.samples: list[tuple[float, int]] = []
        """(loop time, RSS bytes) of each sample."""
        self.marks: dict[str, float] = {}
        """Named moments of the phase (loop time): where the measured part begins and ends."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin sampling."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    def mark(self, name: str) -> None:
        """Note a moment of the phase (`begin`, `end`) and take a sample at it."""
        self.marks[name] = self._sample()

    async def stop(self) -> None:
        """Stop sampling."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _sample(self) -> float:
        """Take one sample (none once the process is gone); its time."""
        now = asyncio.get_running_loop().time()
        with contextlib.suppress(OSError, ValueError):
            self.samples.append((now, rss(self.pid)))
        return now

    async def _run(self) -> None:
        """Sample until cancelled."""
        while True:
            self._sample()
            await asyncio.sleep(self.every_s)


def slope_mib_per_min(samples: list[tuple[float, int]]) -> float:
    """The least-squares slope of RSS over time, in MiB a minute (nan with fewer than two samples)."""
    if len(samples) < 2:
        return float("nan")
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_r = sum(r for _, r in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    if var == 0:
        return float("nan")
    cov = sum((t - mean_t) * (r - mean_r) for t, r in samples)
    return cov / var * 60 / MIB


def rss_summary(sampler: RssSampler) -> str:
    """One line: RSS at the measured part's begin, peak and end, its slopes over the first and last thirds, and the
    RSS at each whole minute from its begin (MiB)."""
    begin = sampler.marks.get("begin", sampler.samples[0][0] if sampler.samples else 0.0)
    end = sampler.marks.get("end", sampler.samples[-1][0] if sampler.samples else 0.0)
    part = [(t, r) for t, r in sampler.samples if begin <= t <= end]
    if not part:
        return "no samples"
    third = (end - begin) / 3
    first = slope_mib_per_min([(t, r) for t, r in part if t <= begin + third])
    last = slope_mib_per_min([(t, r) for t, r in part if t >= end - third])
    minutes = []
    for minute in range(int((end - begin) // 60) + 1):
        at = begin + 60 * minute
        nearest = min(part, key=lambda sample: abs(sample[0] - at))
        minutes.append(f"{nearest[1] / MIB:.0f}")
    peak = max(r for _, r in sampler.samples)
    return (f"{part[0][1] / MIB:.0f} MiB at the start, peak {peak / MIB:.0f}, end {part[-1][1] / MIB:.0f} over "
            f"{end - begin:.0f} s; growth {first:+.1f} MiB/min over the first third, {last:+.1f} over the last; "
            f"by minute: {', '.join(minutes)}")

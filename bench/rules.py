"""Benchmark: sowings per second of the pure-Python rules on random games."""

from __future__ import annotations

import random
import time

from protocol import Position, Sow, Variant


def random_games(variant: Variant, seconds: float, seed: int = 1) -> tuple[int, int, float]:
    """Play random games for about `seconds`; return (sowings, games, elapsed)."""
    rng = random.Random(seed)
    start = Position.initial(variant)
    sowings = games = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        pos = start
        while pos.end is None:
            pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
            sowings += 1
        games += 1
    return sowings, games, time.perf_counter() - t0


def main() -> None:
    """Print sowings per second for Kalah(6,4) and Kalah(12,12) against the 200k/s goal."""
    goal = 200_000
    print(f"{'variant':<26}{'sowings/s':>12}{'games/s':>10}{'vs goal':>9}")
    for text in ("kalah(6,4)", "kalah(12,12)", "kalah(6,4,capture=empty)", "kalah(6,4,relay=on)"):
        sowings, games, elapsed = random_games(Variant.parse(text), 2.0)
        rate = sowings / elapsed
        print(f"{text:<26}{rate:>12,.0f}{games / elapsed:>10,.1f}{rate / goal:>8.2f}x")


if __name__ == "__main__":
    main()

"""The ladder's statistics: Elo difference with its 95 % interval, and the SPRT that stops a pairing when decided.

The Elo difference of a score s (the mean of a player's points, win 1, draw 1/2) is the
logistic one, `-400 log10(1/s - 1)`. Its 95 % interval comes from the score's standard error,
`sqrt(var / N)` with `var` the per-game variance of the points, mapped through the same
function: `[elo(s - 1.96 se), elo(s + 1.96 se)]`, as cutechess-cli and fastchess report it.

The SPRT is the generalised SPRT of fishtest and fastchess (their "logistic" model): with
`s0`, `s1` the scores Elo0 and Elo1 give, and the sample's mean score `m` and variance `var`
(per game on the trinomial, per colour-swapped pair on the pentanomial, a pair's score being
its two points halved), the log-likelihood ratio is `N (s1 - s0) (2m - s0 - s1) / (2 var)`.
A sample without variance (every game, or every pair, alike: a clean sweep) has no ratio (0):
the test waits, as cutechess-cli gives no verdict before it has seen wins, draws and losses.
The test accepts H1 (Elo >= Elo1) once it reaches `log((1 - beta) / alpha)` and H0
(Elo <= Elo0) once it falls to `log(beta / (1 - alpha))`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The normal distribution's two-sided 95 % quantile."""


def elo_of(score: float) -> float:
    """The Elo difference a mean score gives (±inf at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def score_of(elo: float) -> float:
    """The mean score an Elo difference predicts."""
    return 1 / (1 + 10 ** (-elo / 400))


def _moments(points: Sequence[float], counts: Sequence[int]) -> tuple[int, float, float]:
    """N, the mean and the variance of a sample given as counts of each value of `points`."""
    n = sum(counts)
    if n == 0:
        return 0, 0.0, 0.0
    mean = sum(p * c for p, c in zip(points, counts, strict=True)) / n
    var = sum(c * (p - mean) ** 2 for p, c in zip(points, counts, strict=True)) / n
    return n, mean, var


TRINOMIAL = (0.0, 0.5, 1.0)
"""A game's points: loss, draw, win."""
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A colour-swapped pair's points halved: 0, 1/2, 1, 3/2 or 2 points of 2."""


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """An Elo difference and its 95 % interval (the interval may be infinite on one side)."""

    elo: float
    low: float
    high: float

    @property
    def margin(self) -> float:
        """Half the interval's width (the ± figure)."""
        return (self.high - self.low) / 2

    def text(self) -> str:
        """`+35.2 ± 20.1` (finite); `>= -291` or `<= +291` after a sweep (no estimate, a bound); the estimate and
        its one finite bound when the interval is open on one side (`+190.8 (>= -68)`), or none yet."""
        if math.isinf(self.elo):
            return f">= {self.low:+.0f}" if self.elo > 0 else f"<= {self.high:+.0f}"
        estimate = f"{self.elo + 0.0:+.1f}"
        if math.isinf(self.low) and math.isinf(self.high):
            return f"{estimate} (no bound yet)"
        if math.isinf(self.high):
            return f"{estimate} (>= {self.low:+.0f})"
        if math.isinf(self.low):
            return f"{estimate} (<= {self.high:+.0f})"
        return f"{estimate} ± {self.margin:.1f}"


def elo_estimate(wins: int, draws: int, losses: int) -> EloEstimate | None:
    """The Elo difference of these results and its 95 % interval (None without games)."""
    n, mean, var = _moments(TRINOMIAL, (losses, draws, wins))
    if n == 0:
        return None
    if wins == n or losses == n:  # a sweep: no estimate, only the exact (Clopper-Pearson) 95 % bound
        bound = elo_of(((1 - 0.95) / 2) ** (1 / n))
        return EloEstimate(math.inf, bound, math.inf) if wins else EloEstimate(-math.inf, -math.inf, -bound)
    se = math.sqrt(var / n)
    return EloEstimate(elo_of(mean), elo_of(mean - Z95 * se), elo_of(mean + Z95 * se))


def _llr(points: Sequence[float], counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of the sample for Elo1 against Elo0 (0 while it has no variance)."""
    n, mean, var = _moments(points, counts)
    if n == 0 or var <= 0:
        return 0.0
    s0, s1 = score_of(elo0), score_of(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def llr_trinomial(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of single games (losses, draws, wins)."""
    return _llr(TRINOMIAL, (losses, draws, wins), elo0, elo1)


def llr_pentanomial(pairs: Sequence[int], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of colour-swapped pairs: `pairs[k]` pairs scored k/2 points of 2 (k = 0..4)."""
    return _llr(PENTANOMIAL, pairs, elo0, elo1)


@dataclass(frozen=True, slots=True)
class Sprt:
    """An SPRT's hypotheses (Elo0 < Elo1) and error rates."""

    elo0: float
    elo1: float
    alpha: float
    beta: float

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """`elo0,elo1,alpha,beta`, e.g. `0,10,0.05,0.05`; raises ValueError."""
        parts = text.split(",")
        try:
            elo0, elo1, alpha, beta = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"--sprt takes elo0,elo1,alpha,beta (e.g. 0,10,0.05,0.05), not {text!r}") from None
        if not elo0 < elo1:
            raise ValueError("--sprt needs elo0 < elo1")
        if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
            raise ValueError("--sprt needs 0 < alpha, beta < 1 and alpha + beta < 1")
        return cls(elo0, elo1, alpha, beta)

    @property
    def lower(self) -> float:
        """The bound at or below which H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The bound at or above which H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def verdict(self, llr: float) -> str | None:
        """`H1` or `H0` once the ratio crosses a bound, else None (go on)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def text(self) -> str:
        """The test as given, e.g. `elo0=0 elo1=10 alpha=0.05 beta=0.05`."""
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}"

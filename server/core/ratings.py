"""Glicko-2 ratings (Glickman, "Example of the Glicko-2 system", 2013), pure functions."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from protocol.outcome import rating_text

SCALE = 173.7178
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5
EPSILON = 1e-6
MIN_RD = 30.0


@dataclass(frozen=True, slots=True)
class Rating:
    """A Glicko-2 rating on the familiar scale: rating, deviation (RD) and volatility."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    def text(self) -> str:
        """Rating ± 95% half-width, rounded, e.g. `1523 ± 112`."""
        return rating_text(self.rating, self.rd)


def _g(phi: float) -> float:
    """The g function that discounts an opponent's deviation."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    """Expected score against an opponent."""
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of Glicko-2: the new volatility by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    fa, fb = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * fa / (fb - fa)
        fc = f(big_c)
        if fc * fb <= 0:
            big_a, fa = big_b, fb
        else:
            fa /= 2.0
        big_b, fb = big_c, fc
    return math.exp(big_a / 2.0)


def update(player: Rating, games: Iterable[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The player's rating after one rating period of (opponent, score 0/0.5/1) games."""
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.rd / SCALE
    played = [((o.rating - DEFAULT_RATING) / SCALE, o.rd / SCALE, s) for o, s in games]
    if not played:
        phi_star = math.sqrt(phi * phi + player.volatility**2)
        return Rating(player.rating, min(phi_star * SCALE, DEFAULT_RD), player.volatility)
    inv_v = 0.0
    total = 0.0
    for mu_j, phi_j, score in played:
        e = _expected(mu, mu_j, phi_j)
        g = _g(phi_j)
        inv_v += g * g * e * (1.0 - e)
        total += g * (score - e)
    v = 1.0 / inv_v
    delta = v * total
    sigma = _new_volatility(player.volatility, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * total
    return Rating(new_mu * SCALE + DEFAULT_RATING, max(new_phi * SCALE, MIN_RD), sigma)


def update_pair(a: Rating, b: Rating, score_a: float) -> tuple[Rating, Rating]:
    """Both players' ratings after one game between them (each game its own period)."""
    return update(a, [(b, score_a)]), update(b, [(a, 1.0 - score_a)])

"""The ladder's tester report: per pairing and per player, results, Elo difference ± 95 %, and the SPRT.

A game is given as `(key, south, north, south_score)`; the schedule's keys end in `|0` and
`|1` for the two games of one opening with the sides exchanged, which makes a pair for the
pentanomial SPRT. A pairing `(a, b)` is counted from `a`'s side, `a` being the player that comes
first in the order given: the ladder puts the engines under test first, then the bots, so an
SPRT always tests the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cli.ladder_stats import EloEstimate, Sprt, elo_estimate, llr_pentanomial

Game = tuple[str, str, str, float]
"""(schedule key, South's player, North's player, South's score)."""


@dataclass
class Tally:
    """Wins, draws and losses of one side, and its colour-swapped pairs' points (0..4 halves)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    pairs: list[int] = field(default_factory=lambda: [0] * 5)

    def add(self, score: float) -> None:
        """Count one game's score."""
        if score == 1:
            self.wins += 1
        elif score == 0:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def games(self) -> int:
        """Games counted."""
        return self.wins + self.draws + self.losses

    def elo(self) -> EloEstimate | None:
        """The Elo difference and its 95 % interval."""
        return elo_estimate(self.wins, self.draws, self.losses)

    def llr(self, sprt: Sprt) -> float:
        """The pentanomial log-likelihood ratio of the complete pairs."""
        return llr_pentanomial(self.pairs, sprt.elo0, sprt.elo1)


def pairing_of(south: str, north: str, players: Sequence[str]) -> tuple[str, str]:
    """The pairing of a game, its first player the one that comes first in `players`."""
    return (south, north) if players.index(south) < players.index(north) else (north, south)


def tallies(games: Iterable[Game], players: Sequence[str]) -> tuple[dict[tuple[str, str], Tally], dict[str, Tally]]:
    """Every pairing's tally (from its first player's side) and every player's against all."""
    by_pair: dict[tuple[str, str], Tally] = {}
    by_player: dict[str, Tally] = {p: Tally() for p in players}
    halves: dict[tuple[tuple[str, str], str], list[float]] = {}
    for key, south, north, score in games:
        pair = pairing_of(south, north, players)
        mine = score if south == pair[0] else 1 - score
        by_pair.setdefault(pair, Tally()).add(mine)
        by_player[south].add(score)
        by_player[north].add(1 - score)
        halves.setdefault((pair, key.rpartition("|")[0]), []).append(mine)
    for (pair, _), points in halves.items():
        if len(points) == 2:
            by_pair[pair].pairs[round(2 * sum(points))] += 1
    return by_pair, by_player


def verdict_text(tally: Tally, sprt: Sprt) -> str:
    """`llr 1.23 (-2.94, 2.94)` and the verdict once there is one."""
    llr = tally.llr(sprt)
    verdict = sprt.verdict(llr)
    decided = {"H1": " H1 accepted", "H0": " H0 accepted"}.get(verdict or "", "")
    return f"llr {llr:+.2f} ({sprt.lower:+.2f}, {sprt.upper:+.2f}){decided}"


def render(games: Iterable[Game], players: Sequence[str], sprt: Sprt | None) -> str:
    """The report as text: one line per pairing, then one per player."""
    by_pair, by_player = tallies(games, players)
    head = "pairing (first player's view)"
    lines = [f"{head:<38} {'games':>5}   {'W-D-L':<12} {'Elo (95 %)':<18}" + (" SPRT" if sprt else "")]
    for (a, b), t in sorted(by_pair.items(), key=lambda kv: (players.index(kv[0][0]), players.index(kv[0][1]))):
        elo = t.elo()
        line = (f"{a + ' v ' + b:<38} {t.games:>5}   {t.wins}-{t.draws}-{t.losses:<8} "
                f"{elo.text() if elo else '-':<18}")
        if sprt:
            line += f" {verdict_text(t, sprt)}"
        lines.append(line.rstrip())
    lines.append("")
    lines.append(f"{'player (against the field)':<38} {'games':>5}   {'W-D-L':<12} Elo (95 %)")
    for p in players:
        t = by_player[p]
        elo = t.elo()
        lines.append(f"{p:<38} {t.games:>5}   {t.wins}-{t.draws}-{t.losses:<8} {elo.text() if elo else '-'}".rstrip())
    if sprt:
        lines.append(f"\nSPRT {sprt.text()} on colour-swapped pairs (pentanomial, logistic Elo)")
    return "\n".join(lines)


def _elo_json(elo: EloEstimate | None) -> dict[str, float | None]:
    """An estimate as JSON (infinite ends as None)."""
    if elo is None:
        return {"elo": None, "low": None, "high": None}
    finite = [v if abs(v) != float("inf") else None for v in (elo.elo, elo.low, elo.high)]
    return {"elo": finite[0], "low": finite[1], "high": finite[2]}


def as_json(games: Iterable[Game], players: Sequence[str], sprt: Sprt | None) -> dict[str, Any]:
    """The report as JSON values."""
    by_pair, by_player = tallies(games, players)
    pairings = []
    for (a, b), t in by_pair.items():
        row: dict[str, Any] = {"player": a, "opponent": b, "wins": t.wins, "draws": t.draws, "losses": t.losses,
                               "pairs": t.pairs, **_elo_json(t.elo())}
        if sprt:
            llr = t.llr(sprt)
            row["sprt"] = {"llr": llr, "lower": sprt.lower, "upper": sprt.upper, "verdict": sprt.verdict(llr)}
        pairings.append(row)
    return {"pairings": pairings,
            "players": [{"player": p, "wins": t.wins, "draws": t.draws, "losses": t.losses, **_elo_json(t.elo())}
                        for p, t in by_player.items()]}

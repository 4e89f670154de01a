"""Swiss pairing by the FIDE Dutch system (C.04.3), computed by the `caissify-pairings` library.

The library's Dutch engine is checked by its authors against bbpPairings (the engine lichess
uses) on 70,000 generated rounds; this module is the one place that speaks its dictionary
interface: entrants become numbers in seeding order, our pairings their colour and float
histories, and its answer our (south, north) pairs. South, who moves first, stands for white.
A bye scores one point and goes to an entrant who has had none (the library's rule C.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from caissify_pairings import generate_pairings  # type: ignore[import-untyped]

from server.tournaments.records import Pairing

BYE_POINTS = 1.0


class NoPairingError(Exception):
    """No pairing of the round keeps every absolute rule (each pair met already, or byes used up)."""


@dataclass(slots=True)
class _History:
    """One entrant's past as the Dutch rules need it."""

    score: float = 0.0
    colours: list[str] = field(default_factory=list)
    floats: list[str] = field(default_factory=list)
    byes: int = 0


def histories(entrants: Sequence[str], past: Sequence[Pairing]) -> dict[str, _History]:
    """Score, colours, floats and byes of each entrant from the finished pairings of earlier rounds."""
    found = {e: _History() for e in entrants}
    rounds = sorted({p.round for p in past})
    for rnd in rounds:
        this = [p for p in past if p.round == rnd]
        before = {e: h.score for e, h in found.items()}
        for p in this:
            if p.north is None:
                if p.south in found:
                    h = found[p.south]
                    h.byes += 1
                    h.score += BYE_POINTS
                    h.floats.append("down")
                continue
            for player, side in ((p.south, "white"), (p.north, "black")):
                if player not in found:
                    continue
                h = found[player]
                h.colours.append(side)
                mine, theirs = before.get(player, 0.0), before.get(p.opponent_of(player) or "", 0.0)
                h.floats.append("down" if mine > theirs else "up" if mine < theirs else "none")
                h.score += p.score_of(player) or 0.0
    return found


def swiss_round(entrants: Sequence[str], past: Sequence[Pairing], rnd: int,
                total_rounds: int) -> list[tuple[str, str | None]]:
    """Round `rnd`'s pairs (south, north; north None for the bye) of `entrants` (seeding order) after `past`."""
    if len(entrants) < 2:
        raise NoPairingError("a Swiss round needs two entrants or more")
    number = {e: i for i, e in enumerate(entrants, start=1)}
    name = {i: e for e, i in number.items()}
    found = histories(entrants, past)
    players: list[dict[str, Any]] = [
        {"id": number[e], "name": e, "rating": 0, "starting_number": number[e], "pairing_number": number[e],
         "score": found[e].score, "color_hist": found[e].colours, "float_history": found[e].floats,
         "bye_count": found[e].byes}
        for e in entrants
    ]
    met = {(min(number[a], number[b]), max(number[a], number[b]))
           for p in past if p.north is not None
           for a, b in ((p.south, p.north),) if a in number and b in number}
    try:
        answer: list[dict[str, Any]] = generate_pairings("dutch", players, met, rnd, max(total_rounds, rnd),
                                                         bye_value=BYE_POINTS, max_byes_per_player=1)
    except (ValueError, RuntimeError) as exc:
        raise NoPairingError(str(exc)) from None
    pairs = [(name[g["white_id"]], None if g.get("black_id") is None else name[g["black_id"]]) for g in answer]
    placed = [p for pair in pairs for p in pair if p is not None]
    repeats = [(s, n) for s, n in pairs if n is not None and (min(number[s], number[n]), max(number[s], number[n]))
               in met]
    second_byes = [s for s, n in pairs if n is None and found[s].byes]
    if sorted(placed) != sorted(entrants) or sum(n is None for _, n in pairs) > 1 or repeats or second_byes:
        raise NoPairingError(f"round {rnd} cannot be paired without a repeat or a second bye")
    return sorted(pairs, key=lambda pair: pair[1] is None)

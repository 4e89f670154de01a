"""The ladder's schedule: every pairing of bots, each opening played twice with sides exchanged."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from itertools import combinations

from protocol.actions import Action, Sow, format_actions
from protocol.position import Position
from protocol.variant import Variant

OPENING_PLIES = 2


@dataclass(frozen=True, slots=True)
class LadderGame:
    """One scheduled game: who sits South and North, and the opening both sides must play."""

    key: str
    south: str
    north: str
    opening: tuple[Action, ...]

    @property
    def opening_text(self) -> str:
        """The opening as a record."""
        return format_actions(list(self.opening))


def _rng(seed: int, *parts: object) -> random.Random:
    """A random generator determined by the seed and the parts (stable across runs)."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def random_opening(variant: Variant, rng: random.Random, plies: int = OPENING_PLIES) -> tuple[Action, ...]:
    """Up to `plies` random sowings from the start; stops where a swap or transfer is to be decided."""
    pos = Position.initial(variant)
    out: list[Action] = []
    while len(out) < plies and not pos.over and not pos.swap_offered and not pos.transfer_pending:
        action = Sow(rng.choice(pos.legal_bins()))
        pos = pos.apply(action)
        out.append(action)
    if pos.over:  # an opening must leave a game to play
        return ()
    return tuple(out)


def check_ladder(bots: list[str] | tuple[str, ...], games: int) -> None:
    """Refuse fewer than two different bots, a bot named twice, or no games (ValueError)."""
    if len(set(bots)) != len(bots) or len(bots) < 2:
        raise ValueError("a ladder needs at least two different bots")
    if games < 1:
        raise ValueError("a ladder plays at least one game per pairing")


def schedule(bots: list[str], games: int, variant: Variant, seed: int = 0,
             plies: int = OPENING_PLIES) -> list[LadderGame]:
    """`games` per pairing (rounded up to even): each opening (`plies` random sowings) once with each bot as South."""
    check_ladder(bots, games)
    out: list[LadderGame] = []
    rounds = (games + 1) // 2
    for k in range(rounds):
        for a, b in combinations(bots, 2):
            opening = random_opening(variant, _rng(seed, variant.text(), a, b, k), plies)
            base = f"{variant.text()}|{seed}|{a}|{b}|{k}"
            out.append(LadderGame(f"{base}|0", a, b, opening))
            out.append(LadderGame(f"{base}|1", b, a, opening))
    return out


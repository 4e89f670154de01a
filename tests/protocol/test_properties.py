"""Property tests over random variants and random games (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Capture, Game, Leftover, Position, Variant

variants = st.builds(
    Variant,
    houses=st.integers(1, 8),
    seeds=st.integers(1, 8),
    capture=st.sampled_from(list(Capture)),
    extra_turn=st.booleans(),
    clockwise=st.booleans(),
    relay=st.booleans(),
    leftover=st.sampled_from(list(Leftover)),
    majority_end=st.booleans(),
    pie=st.booleans(),
    opening_transfer=st.booleans(),
)

MAX_PLIES = 1_000_000  # clockwise games without captures can run to ~10^4 plies


def random_game(variant: Variant, seed: int) -> Game:
    """Play uniformly random legal actions until the game ends (or a generous cap)."""
    rng = random.Random(seed)
    game = Game(variant)
    while not game.over and game.ply < MAX_PLIES:
        game.play(rng.choice(game.position.legal_actions()))
    return game


@settings(max_examples=150, deadline=None)
@given(variants, st.integers(0, 2**32))
def test_seeds_conserved_and_game_ends(variant: Variant, seed: int) -> None:
    """Every position holds all the seeds; every random game ends; the result is the margin."""
    game = random_game(variant, seed)
    assert game.over, f"{variant.text()} did not end: {game.record()}"
    total = variant.total_seeds
    for p in game.positions[:-1]:
        assert sum(p.pits) == total and min(p.pits) >= 0
    final = game.position
    assert all(final.pits[i] == 0 for i in range(variant.pits) if i not in final.tables.stores)
    if variant.leftover is Leftover.DISCARD:
        assert sum(final.stores) <= total
    else:
        assert sum(final.stores) == total
    assert final.result == final.stores[0] - final.stores[1]


@settings(max_examples=100, deadline=None)
@given(variants, st.integers(0, 2**32))
def test_record_and_positions_round_trip(variant: Variant, seed: int) -> None:
    """A game's record replays to the same positions; each position's text parses back."""
    game = random_game(variant, seed)
    again = Game.from_record(Variant.parse(variant.text()), game.record())
    assert [p.fen() for p in again.positions] == [p.fen() for p in game.positions]
    for p in game.positions:
        assert Position.from_fen(variant, p.fen()) == p


@settings(max_examples=100, deadline=None)
@given(variants)
def test_variant_text_round_trip(variant: Variant) -> None:
    """Every variant's text form parses back to an equal value."""
    assert Variant.parse(variant.text()) == variant

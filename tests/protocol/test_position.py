"""Positions: legal actions, pie swap, opening transfer, errors and text form."""

from __future__ import annotations

import random
import re

import pytest

from protocol import (
    Game,
    GameOverError,
    NotationError,
    OutOfTurnError,
    Position,
    Side,
    Sow,
    Swap,
    SwapNotOfferedError,
    Transfer,
    TransferError,
    Variant,
)
from protocol.errors import ImpossiblePositionError
from tests.conftest import pos

PIE = Variant(pie=True)


def test_initial_position() -> None:
    """Kalah(6,4) starts with four seeds a house, South to move."""
    p = Position.initial()
    assert p.pits == (4,) * 6 + (0,) + (4,) * 6 + (0,)
    assert p.to_move == Side.SOUTH and p.legal_bins() == [1, 2, 3, 4, 5, 6]
    assert p.fen() == "4,4,4,4,4,4,0,4,4,4,4,4,4,0 S 0 -"


def test_out_of_turn() -> None:
    """An action by the side not to move raises OutOfTurnError and changes nothing."""
    p = Position.initial()
    with pytest.raises(OutOfTurnError):
        p.apply(Sow(9), Side.NORTH)
    assert p == Position.initial()


def test_swap_offered_on_north_first_turn_only() -> None:
    """The pie swap is legal for North right after South's first turn, never later."""
    p = Position.initial(PIE)
    assert not p.swap_offered
    with pytest.raises(SwapNotOfferedError):
        p.apply(Swap())
    p = p.play(1)
    assert p.to_move == Side.NORTH and p.swap_offered and Swap() in p.legal_actions()
    later = p.play(10)  # North declines by sowing; lands in its store
    assert later.to_move == Side.NORTH and not later.swap_offered
    with pytest.raises(SwapNotOfferedError):
        later.apply(Swap())


def test_swap_keeps_board_and_north_moves() -> None:
    """After a swap the board stands, seats exchange and North (now the opener) moves."""
    p = Position.initial(PIE).play(1)
    swapped, event = p.apply_event(Swap())
    assert swapped.pits == p.pits and swapped.swapped and swapped.to_move == Side.NORTH
    assert not swapped.swap_offered and event.side == Side.NORTH
    assert swapped.ply == p.ply + 1


def test_swap_after_extra_turns() -> None:
    """South's first turn may chain extra turns; the swap comes after the whole turn."""
    p = Position.initial(PIE).play(3)
    assert p.to_move == Side.SOUTH and not p.swap_offered
    p = p.play(6)
    assert p.swap_offered


def test_swap_without_pie_rule() -> None:
    """Without the pie rule a swap is refused."""
    with pytest.raises(SwapNotOfferedError):
        Position.initial().play(1).apply(Swap())


def test_opening_transfer() -> None:
    """North moves one seed between any two houses before South's first move (133 choices)."""
    v = Variant(opening_transfer=True)
    p = Position.initial(v)
    assert p.to_move == Side.NORTH and p.transfer_pending and p.legal_bins() == []
    assert len(p.legal_actions()) == 133
    after = p.apply(Transfer(2, 12))
    assert after.pits[1] == 3 and after.pits[11] == 5 and after.to_move == Side.SOUTH
    assert p.apply(Transfer()).pits == p.pits
    with pytest.raises(TransferError):
        p.apply(Sow(9))
    for bad in (Transfer(7, 1), Transfer(1, 1), Transfer(1, 14), Transfer(15, 1)):
        with pytest.raises(TransferError):
            p.apply(bad)
    with pytest.raises(TransferError):
        after.apply(Transfer(1, 2))


def test_transfer_then_pie() -> None:
    """With both options the swap is offered after South's first turn, not at the transfer."""
    p = Position.initial(Variant(opening_transfer=True, pie=True))
    assert not p.swap_offered
    p = p.apply(Transfer()).play(1)
    assert p.swap_offered


def test_moves_after_game_over() -> None:
    """Any action after the end raises GameOverError."""
    p = pos("kalah(6,4)", [0, 0, 0, 0, 0, 1, 20, 5, 0, 0, 0, 0, 0, 22]).play(6)
    assert p.over and p.legal_actions() == []
    with pytest.raises(GameOverError):
        p.play(8)


def test_fen_round_trip_with_flags() -> None:
    """Positions with every flag and an end reason print and parse back equal."""
    v = Variant(opening_transfer=True, pie=True)
    for p in (Position.initial(v), Position.initial(v).apply(Transfer(1, 2)),
              pos("kalah(6,4)", [0, 0, 0, 0, 0, 1, 20, 5, 0, 0, 0, 0, 0, 22]).play(6)):
        assert Position.from_fen(v if not p.over else p.variant, p.fen()) == p
        assert eval(repr(p), {"Position": Position, "Variant": Variant}) == p


@pytest.mark.parametrize("text", ["", "1,2,3 S 0 -", "4,4,4,4,4,4,0,4,4,4,4,4,4,0 X 0 -",
                                  "4,4,4,4,4,4,0,4,4,4,4,4,4,0 S 0 q", "4,4,4,4,4,4,0,4,4,4,4,4,4,0 S 0 - nope",
                                  "4,4,4,4,4,4,0,4,4,4,4,4,4,-1 S 0 -"])
def test_bad_fen(text: str) -> None:
    """Malformed position texts raise NotationError."""
    with pytest.raises(NotationError):
        Position.from_fen(Variant(), text)


def test_board_drawing() -> None:
    """str() draws North's row reversed above South's with the stores at the sides."""
    lines = str(Position.initial().play(3)).splitlines()
    assert lines[0].split() == ["4"] * 6
    assert lines[1].split() == ["0", "1"]
    assert lines[2].split() == ["4", "4", "0", "5", "5", "5"]


@pytest.mark.parametrize("variant", ["kalah(3,3,pie=on)", "kalah(2,5,transfer=on,leftover=discard)",
                                     "kalah(4,200,capture=empty,majority=on)"])
def test_every_position_of_a_game_is_possible(variant: str) -> None:
    """Each position of random games, the ended ones included, passes `check_possible` (and parses back)."""
    rng = random.Random(4)
    v = Variant.parse(variant)
    for _ in range(5):
        game = Game(v)
        while not game.over:
            game.play(rng.choice(game.position.legal_actions()))
        for p in game.positions:
            assert Position.from_fen(v, p.fen()).check_possible() == p


@pytest.mark.parametrize("variant, text, why", [
    ("kalah(6,4)", "4,4,4,4,4,4,0,4,4,4,4,4,4,1 S 0 -", "holds 49 seeds; every kalah(6,4) position holds 48"),
    ("kalah(6,4)", "0,0,0,0,0,0,20,4,4,4,4,4,4,4 N 9 -", "would be over here"),
    ("kalah(6,4)", "0,0,0,0,0,1,20,0,0,0,0,0,0,27 S 9 - empty", "seeds are left in houses"),
    ("kalah(6,4)", "4,4,4,4,4,4,0,4,4,4,4,4,4,0 N 1 p", "name a rule"),
    ("kalah(6,4,transfer=on)", "4,4,4,4,4,4,0,4,4,4,4,4,4,0 N 3 t", "only at the start"),
    ("kalah(6,4,majority=on)", "1,1,1,1,1,1,25,1,1,1,1,1,1,11 S 9 -", "would be over here"),
])
def test_impossible_positions_say_why(variant: str, text: str, why: str) -> None:
    """A well-formed position no game of the variant can reach is refused with a typed error saying why."""
    p = Position.from_fen(Variant.parse(variant), text)
    with pytest.raises(ImpossiblePositionError, match=re.escape(why)) as caught:
        p.check_possible()
    assert caught.value.code == "impossible_position" and isinstance(caught.value, NotationError)
    assert "\n" not in str(caught.value)


def test_a_discarding_end_may_hold_fewer_seeds() -> None:
    """Under `leftover=discard` an ended position holds fewer seeds than the start (the rest were discarded)."""
    v = Variant.parse("kalah(2,2,leftover=discard)")
    assert Position.from_fen(v, "0,0,3,0,0,2 N 3 - empty").check_possible().result == 1

"""Games and records: replay, round trip, repetition and forced small games."""

from __future__ import annotations

import pytest

from protocol import Game, IllegalRecordError, NotationError, Variant, parse_actions
from protocol.actions import Sow, Swap, Transfer, parse_action

EXAMPLE = "3 6 9 8 2 12 6 5 11 6 1 6 5"
# Perfect play is forced in Kalah(1, s): the small-board table of RULES.md, row h = 1.
KALAH_1_RESULTS = {1: 0, 2: -2, 3: 6, 4: -2, 5: 2, 6: 0}


def test_example_record_round_trips() -> None:
    """The RULES.md example replays and prints back to the same text."""
    game = Game.from_record(Variant(), EXAMPLE)
    assert game.record() == EXAMPLE and game.ply == 13
    assert sum(game.position.pits) == 48


def test_illegal_record_names_the_move() -> None:
    """An illegal record raises naming the move index and token."""
    with pytest.raises(IllegalRecordError) as info:
        Game.from_record(Variant(), "3 6 9 3")
    assert info.value.index == 3 and info.value.token == "3"
    assert "move 4 (3)" in str(info.value)


def test_tokens() -> None:
    """Notation tokens parse and print back: bins, swap, transfers."""
    for token in ("1", "13", "swap", "t3-9", "t-"):
        assert parse_action(token).token() == token
    assert parse_actions("t2-12 1 swap") == [Transfer(2, 12), Sow(1), Swap()]
    for bad in ("x", "1.5", "t3", "swapp", "-1", "t3-"):
        with pytest.raises(NotationError):
            parse_action(bad)


@pytest.mark.parametrize(("seeds", "expected"), sorted(KALAH_1_RESULTS.items()))
def test_forced_kalah_1_games(seeds: int, expected: int) -> None:
    """Kalah(1,s) games are forced; their results match the solved table."""
    game = Game(Variant(houses=1, seeds=seeds))
    while not game.over:
        (only,) = game.position.legal_actions()
        game.play(only)
    assert game.result == expected
    assert sum(game.position.stores) == 2 * seeds


def test_threefold_repetition_ends_game() -> None:
    """With clockwise sowing a third occurrence of a position ends the game."""
    game = Game.from_record(Variant.parse("kalah(2,1,clockwise=on)"), "2 4 1 5 2 4 1 5 2")
    assert not game.over
    game.play(Sow(4))
    assert game.over and game.position.end == "repetition"
    assert game.events[-1].end == "repetition"
    assert sum(game.position.stores) == 4


def test_preview_changes_nothing() -> None:
    """preview() shows the repetition ending without playing the move."""
    game = Game.from_record(Variant.parse("kalah(2,1,clockwise=on)"), "2 4 1 5 2 4 1 5 2")
    pos, event = game.preview(Sow(4))
    assert pos.end == "repetition" and event.end == "repetition"
    assert game.ply == 9 and not game.over

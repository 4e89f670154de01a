"""The game-over panel's result line: the name gives way before the reason does."""

from __future__ import annotations

from client.stored_game import REASONS, reason_text
from client.widgets.game_over import RESULT_NAME_MIN, fit_result
from protocol.outcome import EndReason

WINS = " (North) wins by 12"
WHY = " (a store holds the majority)"


def test_a_result_that_fits_is_left_whole() -> None:
    """A short name, a draw and a result without a reason stay one line, uncut."""
    assert fit_result("bob", WINS, WHY, 64) == ["bob (North) wins by 12 (a store holds the majority)"]
    assert fit_result("", "Draw", " (a row is empty)", 21) == ["Draw (a row is empty)"]
    assert fit_result("bob", WINS, "", 22) == ["bob (North) wins by 12"]


def test_a_long_name_is_cut_before_the_reason() -> None:
    """The longest name the server allows is cut with `…` so that who won, by how much and why fit one line."""
    line = fit_result("n" * 32, WINS, WHY, 64)
    assert line == ["n" * 15 + "…" + WINS + WHY] and len(line[0]) == 64
    least = RESULT_NAME_MIN + len(WINS) + len(WHY)
    assert fit_result("n" * 32, WINS, WHY, least) == ["n" * (RESULT_NAME_MIN - 1) + "…" + WINS + WHY]


def test_the_reason_takes_its_own_line_where_the_name_would_be_cut_too_short() -> None:
    """Below the room for `RESULT_NAME_MIN` columns of the name, the reason goes on a second line, whole."""
    least = RESULT_NAME_MIN + len(WINS) + len(WHY)
    assert fit_result("n" * 32, WINS, WHY, least - 1) == ["n" * 32 + WINS, "(a store holds the majority)"]
    assert fit_result("n" * 32, WINS, WHY, 38) == ["n" * 18 + "…" + WINS, "(a store holds the majority)"]
    assert fit_result("", "Game over", " (aborted by the operator)", 20) == ["Game over", "(aborted by the operator)"]
    assert fit_result("ann", WINS, WHY, 38) == ["ann" + WINS, "(a store holds the majority)"]


def test_every_end_reason_has_words() -> None:
    """Each way a game can end is said in words, not as the protocol's token (a forfeit was shown as "forfeit")."""
    missing = [reason.value for reason in EndReason if reason.value not in REASONS]
    assert missing == []
    assert reason_text("forfeit") == " (the engine broke the protocol)"

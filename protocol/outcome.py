"""How a game ends: the end reasons, the winner of a final margin, a player's score.

One vocabulary for the rules (`Position.end`), the server (a match's end, its stored row,
the ratings) and the client (the verdict it shows).
"""

from __future__ import annotations

from enum import StrEnum

from protocol.side import Side


class EndReason(StrEnum):
    """Why a game ended: on the board (the stores decide) or by a player or a clock."""

    EMPTY = "empty"
    """A row of houses is empty."""
    MAJORITY = "majority"
    """A store holds more than half the seeds (variants with `majority=on`)."""
    REPETITION = "repetition"
    """A position occurred for the third time (clockwise or relay sowing)."""
    RESIGN = "resign"
    TIME = "time"
    ABANDONMENT = "abandonment"
    """The opponent had no connection past the grace period and the win was claimed."""
    FORFEIT = "forfeit"
    """An outside engine broke its protocol (an illegal move, no answer to a ping, a lost connection)."""
    ABORTED = "aborted"
    """The server's operator stopped the match: no one won, and it is unrated."""

    @property
    def on_board(self) -> bool:
        """Whether the rules ended the game, so the stores' margin decides the winner."""
        return self in (EndReason.EMPTY, EndReason.MAJORITY, EndReason.REPETITION)


def winner_of(margin: int) -> Side | None:
    """The side a final margin (South's store minus North's) makes the winner; None for a draw."""
    if margin == 0:
        return None
    return Side.SOUTH if margin > 0 else Side.NORTH


def seat_score(winner: int | None, seat: int = 0) -> float:
    """The score of `seat` (0 or 1) when seat `winner` won (None: a draw): 1, 0.5 or 0."""
    if winner is None:
        return 0.5
    return 1.0 if winner == seat else 0.0


def rating_text(rating: float, rd: float) -> str:
    """A rating with its 95% interval's half-width (1.96 deviations), rounded: `1523 ± 112`."""
    return f"{rating:.0f} ± {1.96 * rd:.0f}"

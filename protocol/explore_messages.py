"""Wire messages of the opening explorer: the request `explore` and its reply `explored` (see docs/explore.md).

From a position of a variant, the moves played there in the server's finished games: how many
games, the mover's wins, draws and losses, the movers' average rating, the position after the
move, and South's final margin under best play after it where it was found (`exact` says whether
proved; else a depth-limited estimate, labelled so). The reply also names the solver's move.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from protocol.wire_base import Fen, Int32, MatchId, Message, Name, check_variant

ActionToken = Annotated[str, Field(min_length=1, max_length=8)]
Value = Annotated[int, Field(ge=-10_000, le=10_000)]
RatingBound = Annotated[int, Field(ge=0, le=10_000)]
Movers = Literal["any", "people", "bots"]
"""Whose moves are counted: everyone's, only people's (not hosted bots), only hosted bots'."""
MAX_EXPLORED_MOVES = 64


class Explore(Message):
    """Ask for the moves played from a position in the stored games (the variant's start if no position)."""

    type: Literal["explore"] = "explore"
    variant: str = "kalah(6,4)"
    position: Fen | None = None
    """The position in the position notation (docs/rules.md); None: the variant's start."""
    rated: bool = False
    """Only rated games."""
    min_rating: RatingBound | None = None
    """Only moves by players rated at least this (by bands of a hundred: 1450 counts in 1400)."""
    max_rating: RatingBound | None = None
    """Only moves by players rated below this (by bands of a hundred: 1600 takes 1500-1599, not 1600)."""
    player: Name | None = None
    """Only the games of this player (both sides' moves)."""
    movers: Movers = "any"
    values: bool = True
    """Whether to value the moves with the solver (within a small budget each)."""

    _variant = field_validator("variant")(check_variant)

    @model_validator(mode="after")
    def _range(self) -> Explore:
        """A rating range whose bounds are in order."""
        if self.min_rating is not None and self.max_rating is not None and self.min_rating >= self.max_rating:
            raise ValueError("min_rating must be below max_rating")
        return self


class ExploredMove(Message):
    """One move played from the position: its games and the mover's results in them."""

    action: ActionToken
    games: Int32
    wins: Int32
    """Games the player who made this move went on to win."""
    draws: Int32
    losses: Int32
    average_rating: Annotated[int, Field(ge=0, le=100_000)] | None = None
    """The average rating of the players who made it (at the time of the game)."""
    after: Fen
    """The position after the move."""
    value: Value | None = None
    """South's final margin under best play after the move (None: not valued)."""
    exact: bool = False
    """Whether `value` is proved (a book, the databases, a full search); else a depth-limited estimate."""
    last_match: MatchId | None = None
    """The last game that played the move (its replay: /game/MATCH)."""


class Explored(Message):
    """Answer to `explore`: the moves played from the position, the most played first, and the solver's view."""

    type: Literal["explored"] = "explored"
    variant: str
    position: Fen
    games: Int32
    """Games that played a move from the position (under the filters)."""
    moves: list[ExploredMove] = Field(max_length=MAX_EXPLORED_MOVES)
    value: Value | None = None
    """South's final margin under best play from the position (None: not valued)."""
    exact: bool = False
    solver: ActionToken | None = None
    """The move the solver plays here (None: not valued, or no move to make)."""
    depth: Annotated[int, Field(ge=-1, le=1000)] = -1
    """The depth in sowings of the search behind `value` when not exact (-1 when exact)."""

    _variant = field_validator("variant")(check_variant)

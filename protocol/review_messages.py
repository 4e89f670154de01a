"""Wire messages of game review: the request `review` and its reply `game_review` (see docs/review.md).

A review gives each ply of a finished game the seeds it lost against perfect play: South's final
margin under best play before the move (`value`) against the same after it (`after`), seen from
the mover. `exact` says whether both figures are proved; where not, they are a depth-limited
estimate, and every client labels them so.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from protocol.wire_base import Int32, MatchId, Message, Name, SideName, check_variant

MarkName = Literal["perfect", "inaccuracy", "mistake", "blunder", "unjudged"]
"""How a ply is marked by the seeds it lost (`unjudged`: a pie-rule decision or an opening transfer, not weighed)."""
Value = Annotated[int, Field(ge=-10_000, le=10_000)]
ActionToken = Annotated[str, Field(min_length=1, max_length=8)]
MAX_REVIEWED_PLIES = 10_000


class ReviewGame(Message):
    """Ask for the review of a finished stored game (computed once, then read back from the database)."""

    type: Literal["review"] = "review"
    match_id: MatchId


class ReviewedPly(Message):
    """One ply of a review: the action played at position `ply` (0: the first), and what it cost the mover."""

    ply: Int32
    side: SideName
    player: Name | None = None
    action: ActionToken
    value: Value
    """South's final margin under best play from the position before the action."""
    after: Value
    """South's final margin under best play from the position after the action."""
    best: list[ActionToken] = Field(default_factory=list, max_length=26)
    """A best action there (the solver's), empty where none was looked for."""
    loss: Int32
    """Seeds the mover gave away: `value - after` from the mover's side, 0 for a perfect move (never below 0)."""
    exact: bool
    """Whether `value` and `after` are proved (a book, the databases, a full search); else a depth-limited estimate."""
    depth: Annotated[int, Field(ge=-1, le=1000)] = -1
    """The depth in sowings of the shallower of the two searches when not exact (-1 when exact)."""
    mark: MarkName


class ReviewSummary(Message):
    """One player's figures: perfect moves out of all judged, seeds given away, the worst moment."""

    seat: Annotated[int, Field(ge=0, le=1)]
    """0: who opened as South, 1: who opened as North (seats exchange sides after a pie-rule swap)."""
    player: Name | None = None
    moves: Int32
    perfect: Int32
    lost: Int32
    worst_ply: Int32 | None = None
    """The ply that lost the most seeds (the first of equals), None if no move lost any."""
    worst_loss: Int32 = 0
    exact: bool
    """Whether every one of this player's figures is proved."""


class MarkThresholds(Message):
    """The seeds lost from which a ply is an inaccuracy, a mistake, a blunder (scaled to the board's seeds)."""

    inaccuracy: Int32
    mistake: Int32
    blunder: Int32


class GameReview(Message):
    """Answer to `review`: each ply's loss against perfect play, the marks' thresholds and each player's summary."""

    type: Literal["game_review"] = "game_review"
    match_id: MatchId
    variant: str
    plies: list[ReviewedPly] = Field(max_length=MAX_REVIEWED_PLIES)
    players: list[ReviewSummary] = Field(max_length=2)
    thresholds: MarkThresholds
    exact: bool
    """Whether every figure of the review is proved."""
    budget_ms: Int32
    """The most one position's analysis could think while the review was made."""
    reviewed_at: Annotated[str, Field(max_length=40)]

    _variant = field_validator("variant")(check_variant)

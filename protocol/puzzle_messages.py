"""Wire messages of puzzles (see docs/puzzles.md): `puzzle`, `puzzle_answer` and `puzzles`, and their replies.

A puzzle is a position where exactly one move keeps the value under perfect play and every other
loses at least a threshold of seeds, every value proved by the solver. `puzzle` asks for one to
solve (`puzzle_shown`, without its answer); `puzzle_answer` plays a move on it and is told whether
it was the answer, with the proved value of every move and the line after it (`puzzle_result`);
`puzzles` lists them with their answers (`puzzle_list`), as lichess publishes its puzzles.
Values are South's final margin (South's store minus North's at the end) under best play.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from protocol.wire_base import Fen, Int32, Message, Name, SideName, check_variant

Theme = Literal["capture", "extra_turn", "chain", "endgame", "opening", "pie"]
"""What a puzzle turns on: the answer captures, gives an extra turn, starts a chain of extra turns, few seeds are
left in the houses, it comes early in the game, or it is North's swap decision under the pie rule."""
PuzzleSource = Literal["game", "self-play"]
PuzzleId = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
Value = Annotated[int, Field(ge=-10_000, le=10_000)]
ActionToken = Annotated[str, Field(min_length=1, max_length=8)]
Line = Annotated[list[ActionToken], Field(max_length=16)]
MAX_LISTED_PUZZLES = 200


def _variant_or_none(text: str | None) -> str | None:
    """A variant text in normal form, or None."""
    return None if text is None else check_variant(text)


class PuzzleMove(Message):
    """One legal move of a puzzle's position with its proved value and the best play after it."""

    action: ActionToken
    value: Value
    """South's final margin under best play after this move (proved)."""
    loss: Int32
    """Seeds this move gives away against the answer, from the chooser's seat (0 for the answer; after a swap the
    chooser holds South's side)."""
    line: Line = Field(default_factory=list)
    """Best play after the move (proved, both sides): the answer's continuation, or a wrong move's refutation."""


class PuzzleInfo(Message):
    """A whole puzzle, answer included: what `puzzles` lists and the database stores."""

    id: PuzzleId
    variant: str
    position: Fen
    """The position to play, in the position notation (`kalah solve --position` reads it)."""
    side: SideName
    """The side to move: whoever solves the puzzle plays it."""
    answer: ActionToken
    """The one move that keeps the position's value."""
    value: Value
    """South's final margin under best play from the position (proved)."""
    moves: list[PuzzleMove] = Field(min_length=2, max_length=26)
    """Every legal move with its proved value, the answer first."""
    themes: list[Theme] = Field(default_factory=list, max_length=5)
    threshold: Int32
    """The fewest seeds every other move loses."""
    exact: Literal[True] = True
    """Every value is proved (a puzzle whose answer is not proved is never made or served)."""
    source: PuzzleSource
    match_id: Annotated[str, Field(max_length=64)] | None = None
    """The stored game it came from, if any."""
    ply: Int32 | None = None
    """The ply of that game it came from."""
    rating: float = 1500.0
    rd: float = 350.0
    plays: Int32 = 0
    solved: Int32 = 0

    _variant = field_validator("variant")(check_variant)

    @model_validator(mode="after")
    def _one_answer(self) -> PuzzleInfo:
        """The answer is the only move losing nothing and every other loses at least the threshold."""
        if self.moves[0].action != self.answer or self.moves[0].loss != 0 or self.moves[0].value != self.value:
            raise ValueError("a puzzle lists its answer first, losing nothing, at the position's value")
        if self.threshold < 1 or any(m.loss < self.threshold for m in self.moves[1:]):
            raise ValueError("every move but the answer loses at least the puzzle's threshold")
        if len({m.action for m in self.moves}) != len(self.moves):
            raise ValueError("a puzzle lists each move once")
        return self


class AskPuzzle(Message):
    """Ask for a puzzle to solve: a given one, else one near the asker's puzzle rating they have not tried."""

    type: Literal["puzzle"] = "puzzle"
    variant: str | None = None
    """Only puzzles of this variant (None: any)."""
    puzzle_id: PuzzleId | None = None

    _variant = field_validator("variant")(_variant_or_none)


class PuzzleShown(Message):
    """Answer to `puzzle`: the position to play, without its answer."""

    type: Literal["puzzle_shown"] = "puzzle_shown"
    id: PuzzleId
    variant: str
    position: Fen
    side: SideName
    themes: list[Theme] = Field(default_factory=list, max_length=5)
    rating: float
    plays: Int32
    player_rating: float | None = None
    """The asker's puzzle rating (None before hello)."""


class AnswerPuzzle(Message):
    """Play a move on a puzzle: told whether it was the answer, with every move's proved value."""

    type: Literal["puzzle_answer"] = "puzzle_answer"
    puzzle_id: PuzzleId
    action: ActionToken


class PuzzleResult(Message):
    """Answer to `puzzle_answer`: right or wrong, the answer, each move's proved value and line, and the ratings."""

    type: Literal["puzzle_result"] = "puzzle_result"
    puzzle_id: PuzzleId
    action: ActionToken
    correct: bool
    answer: ActionToken
    value: Value
    """South's final margin under best play from the position."""
    played: PuzzleMove
    """The move played: its value, what it lost and the best play after it (a wrong move's refutation)."""
    moves: list[PuzzleMove] = Field(max_length=26)
    side: SideName
    rated: bool
    """Whether this attempt moved the ratings (a player's first attempt at a puzzle, after hello)."""
    player: Name | None = None
    player_rating: float | None = None
    """The player's puzzle rating after this attempt."""
    puzzle_rating: float


class ListPuzzles(Message):
    """Ask for stored puzzles with their answers, by rating (easiest first)."""

    type: Literal["puzzles"] = "puzzles"
    variant: str | None = None
    limit: Annotated[int, Field(ge=1, le=MAX_LISTED_PUZZLES)] = 50
    offset: Int32 = 0

    _variant = field_validator("variant")(_variant_or_none)


class PuzzleList(Message):
    """Answer to `puzzles`: puzzles with their answers."""

    type: Literal["puzzle_list"] = "puzzle_list"
    puzzles: list[PuzzleInfo] = Field(max_length=MAX_LISTED_PUZZLES)

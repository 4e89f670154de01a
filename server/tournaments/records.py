"""One pairing of an event as a value with a text form: round, sides, result, the match it is played as.

`str(pairing)` is `3.2 alice-bob 1-0 ev1-r3-t2`: round 3, table 2, alice on the south side (who
moves first) against bob, south won, played as match `ev1-r3-t2`; a bye is `3.4 carol bye`, a
game still being played has `*` for its result. `Pairing.parse` reads every such line back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Self

from protocol.errors import NotationError

RESULTS = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0, "*": None}
"""Result texts and the score of the south side (None: not played yet)."""
_RESULT_TEXT = {score: text for text, score in RESULTS.items()}
_LINE = re.compile(r"(\d{1,4})\.(\d{1,4}) ([A-Za-z0-9_.:-]{1,32})(?:-([A-Za-z0-9_.:-]{1,32}) (1-0|0-1|1/2-1/2|\*)"
                   r" ([A-Za-z0-9_-]{1,64})| bye)")


@dataclass(frozen=True, slots=True)
class Pairing:
    """A game of an event (or a bye when `north` is None); `score` is south's, None until it ends."""

    round: int
    table: int
    south: str
    north: str | None = None
    match_id: str | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if (self.north is None) != (self.match_id is None):
            raise NotationError("a pairing has both an opponent and a match, or neither (a bye)")
        if self.score not in _RESULT_TEXT:
            raise NotationError(f"a result is 1, 0.5 or 0 for south, not {self.score!r}")
        if self.north is None and self.score is not None:
            raise NotationError("a bye has no result of its own")
        if self.north == self.south:
            raise NotationError(f"{self.south} cannot play themselves")

    @property
    def bye(self) -> bool:
        """Whether this is a bye (no opponent, no game)."""
        return self.north is None

    @property
    def finished(self) -> bool:
        """Whether the game has ended (a bye counts as ended)."""
        return self.bye or self.score is not None

    def players(self) -> tuple[str, ...]:
        """Who this pairing occupies: both sides, or the one with the bye."""
        return (self.south,) if self.north is None else (self.south, self.north)

    def score_of(self, player: str) -> float | None:
        """What `player` scored in this game (None: not ended, or not theirs; a bye is scored elsewhere)."""
        if self.score is None:
            return None
        if player == self.south:
            return self.score
        return 1.0 - self.score if player == self.north else None

    def opponent_of(self, player: str) -> str | None:
        """The other side of `player`'s game (None for a bye)."""
        return self.north if player == self.south else self.south

    def ended(self, score: float) -> Self:
        """This pairing with its result: `score` for south (1, 0.5 or 0)."""
        return type(self)(self.round, self.table, self.south, self.north, self.match_id, score)

    def text(self) -> str:
        """The one-line text form that `parse` reads back."""
        head = f"{self.round}.{self.table} {self.south}"
        if self.north is None:
            return f"{head} bye"
        return f"{head}-{self.north} {_RESULT_TEXT[self.score]} {self.match_id}"

    @classmethod
    def parse(cls, text: str) -> Pairing:
        """Read the text form, e.g. `3.2 alice-bob 1-0 ev1-r3-t2` or `3.4 carol bye`."""
        match = _LINE.fullmatch(text.strip())
        if match is None:
            raise NotationError(f"bad pairing {text!r}: expected 'ROUND.TABLE SOUTH-NORTH RESULT MATCH' or "
                                f"'ROUND.TABLE NAME bye'")
        rnd, table, south, north, result, match_id = match.groups()
        if north is None:
            return cls(int(rnd), int(table), south)
        return cls(int(rnd), int(table), south, north, match_id, RESULTS[result])

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Pairing.parse({self.text()!r})"

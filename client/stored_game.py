"""The client's stored game: one shape, read from the wire or from a database row, and replayed.

The lobby lists stored games, the replay screen steps through one, and `kalah games`,
`kalah export` and `kalah replay` read them; all of them use `StoredGame`. It is built by
`StoredGame.from_info` (a `GameInfo` of the wire) or `StoredGame.from_row` (a game read back
from the server's database, without importing the server), and `replay` turns a record into
the positions it went through.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from protocol import Game, KalahError, Variant, parse_action

if TYPE_CHECKING:  # read from the wire only by a client of a server: `kalah games --db` loads no wire model
    from protocol.messages import GameInfo

REASONS = {
    "empty": "a row is empty",
    "majority": "a store holds the majority",
    "repetition": "threefold repetition",
    "resign": "resignation",
    "time": "time ran out",
    "abandonment": "abandoned",
    "aborted": "aborted by the operator",
    "forfeit": "the engine broke the protocol",
}
"""Human words for the end reasons of the rules and the server."""


def reason_text(reason: str | None) -> str:
    """` (why)` for an end reason, or nothing."""
    return f" ({REASONS.get(reason, reason)})" if reason else ""


def replay(variant: Variant, record: Iterable[str]) -> Game:
    """The game of a record, as far as it replays legally (a stored record is shown, never refused)."""
    game = Game(variant)
    for token in record:
        try:
            game.play(parse_action(token))
        except KalahError:
            break
    return game


class GameRow(Protocol):
    """A stored game as the server's database reads it back (`server.storage.StoredGame`)."""

    @property
    def match_id(self) -> str:
        """The match id."""

    @property
    def variant(self) -> str:
        """The variant's text form."""

    @property
    def south(self) -> str | None:
        """Who opened as South."""

    @property
    def north(self) -> str | None:
        """Who opened as North."""

    @property
    def status(self) -> str:
        """`open`, `live`, `finished` or `cancelled`."""

    @property
    def record(self) -> str:
        """The actions, space-separated."""

    @property
    def result(self) -> int | None:
        """South's store minus North's at the end."""

    @property
    def winner(self) -> str | None:
        """The winner's name."""

    @property
    def reason(self) -> str | None:
        """Why the game ended."""

    @property
    def created_at(self) -> datetime:
        """When the match was created."""

    @property
    def finished_at(self) -> datetime | None:
        """When it ended."""

    @property
    def detail(self) -> str | None:
        """Why an outside engine forfeited it, if one did."""


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored game: who opened as South and North, its record, and how it ended."""

    match_id: str
    variant: Variant
    record: tuple[str, ...] = ()
    south: str | None = None
    north: str | None = None
    status: str = "finished"
    result: int | None = None
    winner: str | None = None
    reason: str | None = None
    created_at: datetime | None = None
    finished_at: datetime | None = None
    detail: str | None = None
    """Why an outside engine forfeited the game, if one did."""

    @classmethod
    def from_info(cls, info: GameInfo) -> StoredGame:
        """A stored game as the server sends it (`game_list` and `game_record` answers)."""
        return cls(info.match_id, Variant.parse(info.variant), tuple(info.record), info.south, info.north,
                   info.status, info.result, info.winner, info.reason, datetime.fromisoformat(info.created_at),
                   datetime.fromisoformat(info.finished_at) if info.finished_at else None, info.detail)

    @classmethod
    def from_row(cls, row: GameRow) -> StoredGame:
        """A stored game as read from a database file (`kalah replay`, `kalah games`, `kalah export`)."""
        return cls(row.match_id, Variant.parse(row.variant), tuple(row.record.split()), row.south, row.north,
                   row.status, row.result, row.winner, row.reason, row.created_at, row.finished_at, row.detail)

    @property
    def ply(self) -> int:
        """Number of actions in the record."""
        return len(self.record)

    @property
    def finished(self) -> bool:
        """Whether the game came to an end (rather than being left open, live or cancelled)."""
        return self.status == "finished"

    @property
    def verdict_parts(self) -> tuple[str, str, str]:
        """The verdict in three parts: the winner's name (empty for none), what follows it, and why (` (…)`)."""
        if not self.finished:
            return "", "unfinished", f" ({self.status})"
        why = reason_text(self.reason)
        if self.winner is None:
            return "", "Draw" if self.result == 0 else "Game over", why
        by = f" by {abs(self.result)}" if self.result else ""
        return self.winner, f" wins{by}", why

    @property
    def winner_cell(self) -> str:
        """Who won, for a table: the winner's name, `draw`, or `-` (unfinished, or ended with no winner)."""
        if self.finished and self.winner is not None:
            return self.winner
        return "draw" if self.finished and self.result == 0 else "-"

    @property
    def score_cell(self) -> str:
        """South's store minus North's when the board decided the game (`+4`), else `-` (resigned, timed out…)."""
        return "-" if self.result is None else f"{self.result:+d}"

    @property
    def verdict(self) -> str:
        """How the game ended, in words: `ann wins by 4 (…)`, `Draw (…)`, or `unfinished (live)`."""
        return "".join(self.verdict_parts)

"""Puzzles in the database: `puzzles` (each proved puzzle as the wire's JSON, with its Glicko-2 rating),
`puzzle_players` (each player's puzzle rating) and `puzzle_attempts` (a player's first answer to each puzzle).

One SQL for both backends (`?` placeholders; PostgreSQL numbers them). Puzzles are written by the
operator's `kalah puzzle build` (`server.storage.puzzle_shelf`: one process beside the servers,
`INSERT ... ON CONFLICT DO NOTHING`, so a puzzle is stored once); the servers write attempts and
ratings through their writer (the `Op`s below) and serve only rows marked `exact`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from protocol.puzzle_messages import PuzzleInfo
from server.storage.ops import Op, OpKind

PUZZLE_SQL: dict[OpKind, str] = {
    OpKind.PUZZLE_ATTEMPT: "INSERT INTO puzzle_attempts (player_id, puzzle_id, correct, at) VALUES (?, ?, ?, ?)",
    OpKind.PUZZLE_RATING: "UPDATE puzzles SET rating = ?, rd = ?, volatility = ?, plays = plays + 1,"
                          " solved = solved + ? WHERE id = ?",
    OpKind.PUZZLER_RATING: "INSERT INTO puzzle_players (player_id, rating, rd, volatility, solved, failed)"
                           " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (player_id) DO UPDATE SET rating = excluded.rating,"
                           " rd = excluded.rd, volatility = excluded.volatility,"
                           " solved = puzzle_players.solved + excluded.solved,"
                           " failed = puzzle_players.failed + excluded.failed",
}
"""The statements of the puzzle `Op` kinds (the servers' writes)."""

COLUMNS = "puzzle, rating, rd, volatility, plays, solved"
"""What a read of a puzzle selects (`from_row` reads it)."""
PUZZLE = f"SELECT {COLUMNS} FROM puzzles WHERE id = ? AND exact = ?"
_UNTRIED = " AND NOT EXISTS (SELECT 1 FROM puzzle_attempts a WHERE a.player_id = ? AND a.puzzle_id = p.id)"
NEXT_ABOVE = f"SELECT {COLUMNS} FROM puzzles p WHERE exact = ? AND rating >= ?{_UNTRIED} ORDER BY rating, id LIMIT 1"
"""The proved puzzle rated nearest at or above a rating that a player has not tried (walking the rating index)."""
NEXT_BELOW = (f"SELECT {COLUMNS} FROM puzzles p WHERE exact = ? AND rating < ?{_UNTRIED}"
              " ORDER BY rating DESC, id DESC LIMIT 1")
"""The proved puzzle rated nearest below a rating that a player has not tried."""
NEXT_ABOVE_OF_VARIANT = NEXT_ABOVE.replace("exact = ? AND", "variant = ? AND exact = ? AND")
NEXT_BELOW_OF_VARIANT = NEXT_BELOW.replace("exact = ? AND", "variant = ? AND exact = ? AND")
LIST = f"SELECT {COLUMNS} FROM puzzles WHERE exact = ? ORDER BY rating, id LIMIT ? OFFSET ?"
LIST_OF_VARIANT = LIST.replace("exact = ?", "exact = ? AND variant = ?")
PLAYER_RATING = "SELECT rating, rd, volatility FROM puzzle_players WHERE player_id = ?"
ATTEMPT = "SELECT correct FROM puzzle_attempts WHERE player_id = ? AND puzzle_id = ?"
INSERT = ("INSERT INTO puzzles (id, variant, puzzle, exact, rating, rd, volatility, plays, solved, created_at)"
          " VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?) ON CONFLICT (id) DO NOTHING")
IDS = "SELECT id FROM puzzles"
REVIEWED = ("SELECT r.match_id, m.variant, r.review FROM reviews r JOIN matches m ON m.id = r.match_id"
            " WHERE m.status = 'finished' ORDER BY r.at DESC LIMIT ?")
"""The latest reviewed games, newest first: where `kalah puzzle build --from-games` looks."""
RECORD = "SELECT action FROM actions WHERE match_id = ? ORDER BY ply"
"""A match's actions in order (its record's tokens)."""


Fetch = Callable[..., Awaitable[list[tuple[Any, ...]]]]
"""A backend's read of rows (`Storage.fetch_rows`)."""


async def nearest_untried(fetch: Fetch, player_id: str, rating: float, variant: str | None) -> list[tuple[Any, ...]]:
    """The row (`COLUMNS`) of the proved puzzle rated nearest `rating` that the player has not tried (of `variant`,
    if given), at most one: two walks of the rating index, up and down from the rating."""
    head: tuple[Any, ...] = (variant, True) if variant else (True,)
    above = await fetch(NEXT_ABOVE_OF_VARIANT if variant else NEXT_ABOVE, *head, rating, player_id)
    below = await fetch(NEXT_BELOW_OF_VARIANT if variant else NEXT_BELOW, *head, rating, player_id)
    return sorted([*above, *below], key=lambda row: abs(float(row[1]) - rating))[:1]


def from_row(row: Sequence[Any]) -> PuzzleInfo:
    """A puzzle from a row of `COLUMNS` (ValueError if it cannot be read)."""
    puzzle = PuzzleInfo.model_validate_json(str(row[0]))
    return puzzle.model_copy(update={"rating": float(row[1]), "rd": float(row[2]), "plays": int(row[4]),
                                     "solved": int(row[5])})


def op_attempt(player_id: str, puzzle_id: str, correct: bool) -> Op:
    """Keep a player's first answer to a puzzle (a second is a `ConflictError`: only the first is rated)."""
    return (OpKind.PUZZLE_ATTEMPT, (player_id, puzzle_id, correct, time.time()))


def op_rate_puzzle(puzzle_id: str, rating: float, rd: float, volatility: float, solved: bool) -> Op:
    """A puzzle's rating after an attempt, one more play (and solve)."""
    return (OpKind.PUZZLE_RATING, (rating, rd, volatility, int(solved), puzzle_id))


def op_rate_player(player_id: str, rating: float, rd: float, volatility: float, solved: bool) -> Op:
    """A player's puzzle rating after an attempt, one more solved or failed."""
    return (OpKind.PUZZLER_RATING, (player_id, rating, rd, volatility, int(solved), int(not solved)))

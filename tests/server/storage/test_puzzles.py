"""Stored puzzles (`puzzles`, `puzzle_players`, `puzzle_attempts`, schema versions 18 and 19) on both backends: added
once by the command line's shelf beside a server's storage, read back by rating, only proved rows, a first attempt
kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.errors import ConflictError
from protocol.puzzle_messages import PuzzleInfo, PuzzleMove
from server.storage import open_storage
from server.storage.puzzle_shelf import PuzzleShelf
from server.storage.puzzles import (
    LIST,
    PLAYER_RATING,
    PUZZLE,
    from_row,
    nearest_untried,
    op_attempt,
    op_rate_player,
    op_rate_puzzle,
)


def puzzle(puzzle_id: str, rating: float = 1500.0) -> PuzzleInfo:
    """A small puzzle (its values need not be a real position's here)."""
    return PuzzleInfo(id=puzzle_id, variant="kalah(4,3)", position="3,3,3,3,0,3,3,3,3,0 S 0 -", side="south",
                      answer="2", value=6, threshold=2, source="self-play", rating=rating,
                      moves=[PuzzleMove(action="2", value=6, loss=0), PuzzleMove(action="1", value=-6, loss=12)])


async def test_puzzles_are_added_once_and_read_by_rating_with_first_attempts_kept(any_db: str | Path) -> None:
    """The shelf adds new puzzles only; a server's storage (opened beside it) reads the proved ones nearest a rating
    that the player has not tried, keeps one attempt per player and puzzle, and the ratings it writes."""
    with PuzzleShelf(any_db) as shelf:
        assert shelf.add([puzzle("za"), puzzle("zb", 1700.0)]) == 2
        assert shelf.add([puzzle("za"), puzzle("zc", 1200.0)]) == 1
        assert [p.id for p in shelf.listing("kalah(4,3)", 10)] == ["zc", "za", "zb"]
        assert shelf.listing("kalah(6,4)", 10) == []
    storage = await open_storage(any_db)
    try:
        nearest = [from_row(r).id for r in await nearest_untried(storage.fetch_rows, "p1", 1650.0, None)]
        assert nearest == ["zb"]
        assert [from_row(r).id for r in await nearest_untried(storage.fetch_rows, "p1", 1300.0, "kalah(4,3)")] == ["zc"]
        assert await nearest_untried(storage.fetch_rows, "p1", 1300.0, "kalah(6,4)") == []
        await storage.write([op_attempt("p1", "zb", True), op_rate_puzzle("zb", 1650.0, 300.0, 0.06, True),
                             op_rate_player("p1", 1550.0, 290.0, 0.06, True)])
        with pytest.raises(ConflictError):
            await storage.write([op_attempt("p1", "zb", False), op_rate_puzzle("zb", 1.0, 1.0, 0.06, False)])
        stored = from_row((await storage.fetch_rows(PUZZLE, "zb", True))[0])
        assert (stored.rating, stored.plays, stored.solved) == (1650.0, 1, 1)
        assert await storage.fetch_rows(PLAYER_RATING, "p1") == [(1550.0, 290.0, 0.06)]
        assert [from_row(r).id for r in await nearest_untried(storage.fetch_rows, "p1", 1650.0, None)] == ["za"]
        assert len(await storage.fetch_rows(LIST, True, 10, 0)) == 3
        assert await storage.fetch_rows(LIST, False, 10, 0) == []
    finally:
        await storage.close()

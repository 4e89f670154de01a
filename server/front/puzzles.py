"""Puzzles for clients: `puzzle` (one to solve, without its answer), `puzzle_answer` (right or wrong, with every
move's proved value) and `puzzles` (a list, answers included).

Puzzles are made by the operator's `kalah puzzle build` and stored (`server.storage.puzzles`); a server
only reads them, and serves only rows marked proved whose every value the wire model accepts. Each
request is a public read, charged to the asker's address and network like the other reads (one row,
or the rows listed). A player's first answer to a puzzle is rated: the player and the puzzle are
rated against each other with Glicko-2 (a solve is a win for the player), as lichess rates its
puzzles; later answers, and answers before hello, are told right or wrong but move no rating.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from protocol.errors import ConflictError, IllegalMoveError, UnknownPuzzleError
from protocol.messages import Message
from protocol.puzzle_messages import (
    AnswerPuzzle,
    AskPuzzle,
    ListPuzzles,
    PuzzleInfo,
    PuzzleList,
    PuzzleResult,
    PuzzleShown,
)
from server.core.ratings import Rating, update
from server.edge.session import Session
from server.front.router import too_many_rows
from server.logs import event as log_event
from server.storage import Op, Storage
from server.storage.puzzles import (
    LIST,
    LIST_OF_VARIANT,
    PLAYER_RATING,
    PUZZLE,
    from_row,
    nearest_untried,
    op_attempt,
    op_rate_player,
    op_rate_puzzle,
)


class Puzzles:
    """Serves stored puzzles and rates the answers."""

    def __init__(self, storage: Storage, write: Callable[[list[Op]], Awaitable[None]]) -> None:
        self.storage = storage
        """Where puzzles and players' puzzle ratings are read."""
        self.write = write
        """The arena's one durable write (work in flight, refused while the server closes)."""

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handlers of the puzzle requests."""
        return {AskPuzzle: self.ask, AnswerPuzzle: self.answer, ListPuzzles: self.listing}

    @staticmethod
    def _charge(s: Session, rows: int) -> None:
        """Take `rows` from the asker's public-read budgets, or refuse with `rate_limited`."""
        if not s.peer.reads.allow(max(1, rows)):
            raise too_many_rows(rows, s.peer.reads.wait_s(max(1, rows)))

    def _read(self, rows: list[tuple[Any, ...]]) -> list[PuzzleInfo]:
        """The puzzles of rows this version can read (others are logged and left out)."""
        out = []
        for row in rows:
            try:
                out.append(from_row(row))
            except ValueError as exc:
                log_event("unreadable_puzzle", error=str(exc)[:300], level=30)
        return out

    async def _rating(self, player_id: str | None) -> Rating | None:
        """A player's puzzle rating (the default for one who never answered), None before hello."""
        if player_id is None:
            return None
        rows = await self.storage.fetch_rows(PLAYER_RATING, player_id)
        return Rating(*map(float, rows[0])) if rows else Rating()

    async def _puzzle(self, puzzle_id: str) -> PuzzleInfo:
        """A stored proved puzzle by id, or `UnknownPuzzleError`."""
        found = self._read(await self.storage.fetch_rows(PUZZLE, puzzle_id, True))
        if not found:
            raise UnknownPuzzleError(f"no puzzle {puzzle_id!r} (`kalah puzzles` lists them)")
        return found[0]

    async def ask(self, s: Session, msg: AskPuzzle) -> list[Message]:
        """A puzzle to solve: the one named, else the proved one nearest the asker's rating not tried yet."""
        self._charge(s, 1)
        rating = await self._rating(s.player_id)
        if msg.puzzle_id is not None:
            puzzle = await self._puzzle(msg.puzzle_id)
        else:
            near = (rating or Rating()).rating
            who = s.player_id or ""
            rows = await nearest_untried(self.storage.fetch_rows, who, near, msg.variant)
            found = self._read(rows)
            if not found:
                where = f" of {msg.variant}" if msg.variant else ""
                raise UnknownPuzzleError(f"no puzzle{where} left to try: the operator makes more with "
                                         "`kalah puzzle build`")
            puzzle = found[0]
        return [PuzzleShown(id=puzzle.id, variant=puzzle.variant, position=puzzle.position, side=puzzle.side,
                            themes=puzzle.themes, rating=round(puzzle.rating, 1), plays=puzzle.plays,
                            player_rating=None if rating is None else round(rating.rating, 1))]

    async def answer(self, s: Session, msg: AnswerPuzzle) -> list[Message]:
        """Whether a move is the puzzle's answer, with every move's proved value; a player's first answer is rated."""
        self._charge(s, 1)
        puzzle = await self._puzzle(msg.puzzle_id)
        played = next((m for m in puzzle.moves if m.action == msg.action), None)
        if played is None:
            legal = ", ".join(sorted((m.action for m in puzzle.moves), key=lambda a: (len(a), a)))
            raise IllegalMoveError(f"{msg.action} is not a legal move of this puzzle: play one of {legal}")
        correct = played.action == puzzle.answer
        rating = await self._rating(s.player_id)
        puzzle_rating = Rating(puzzle.rating, puzzle.rd)
        rated = False
        if rating is not None and s.player_id is not None:
            score = 1.0 if correct else 0.0
            mine = update(rating, [(puzzle_rating, score)])
            theirs = update(puzzle_rating, [(rating, 1.0 - score)])
            try:
                await self.write([
                    op_attempt(s.player_id, puzzle.id, correct),
                    op_rate_puzzle(puzzle.id, theirs.rating, theirs.rd, theirs.volatility, correct),
                    op_rate_player(s.player_id, mine.rating, mine.rd, mine.volatility, correct)])
                rating, puzzle_rating, rated = mine, theirs, True
            except ConflictError:
                pass  # tried before: only the first answer is rated
        return [PuzzleResult(puzzle_id=puzzle.id, action=msg.action, correct=correct, answer=puzzle.answer,
                             value=puzzle.value, played=played, moves=puzzle.moves, side=puzzle.side, rated=rated,
                             player=s.name if s.player_id is not None else None,
                             player_rating=None if rating is None else round(rating.rating, 1),
                             puzzle_rating=round(puzzle_rating.rating, 1))]

    async def listing(self, s: Session, msg: ListPuzzles) -> list[Message]:
        """Proved puzzles with their answers, easiest first."""
        self._charge(s, msg.limit)
        rows = await (self.storage.fetch_rows(LIST_OF_VARIANT, True, msg.variant, msg.limit, msg.offset)
                      if msg.variant else self.storage.fetch_rows(LIST, True, msg.limit, msg.offset))
        return [PuzzleList(puzzles=self._read(rows))]

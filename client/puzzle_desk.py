"""Where the terminal's puzzles come from: a server (`puzzle`, `puzzle_answer` over the wire, rated) or a database
read offline (the stored puzzles, answered here against their stored proved values, unrated).

Both give the same wire messages (`PuzzleShown`, `PuzzleResult`), so the screen shows either alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from protocol.errors import IllegalMoveError, KalahError, UnknownPuzzleError
from protocol.messages import ErrorMessage, Message, ServerMessage
from protocol.puzzle_messages import AnswerPuzzle, AskPuzzle, PuzzleInfo, PuzzleResult, PuzzleShown

ANSWER_WAIT_S = 30.0
"""How long a server's answer to a puzzle request is waited for."""


class DeskError(Exception):
    """A puzzle request refused or unanswered, in one sentence."""


class PuzzleDesk(Protocol):
    """Gives puzzles to solve and judges the answers."""

    async def next(self, variant: str | None, puzzle_id: str | None) -> PuzzleShown:
        """A puzzle to solve (the one named, else the next one); `DeskError` if there is none."""
        ...

    async def answer(self, puzzle_id: str, action: str) -> PuzzleResult:
        """Whether `action` solves the puzzle, with every move's proved value."""
        ...


def shown_of(puzzle: PuzzleInfo, player_rating: float | None = None) -> PuzzleShown:
    """What a solver is shown of a puzzle: everything but its answer and values."""
    return PuzzleShown(id=puzzle.id, variant=puzzle.variant, position=puzzle.position, side=puzzle.side,
                       themes=puzzle.themes, rating=puzzle.rating, plays=puzzle.plays, player_rating=player_rating)


def judged(puzzle: PuzzleInfo, action: str, player: str | None = None) -> PuzzleResult:
    """An unrated verdict on `action` from the puzzle's proved values (`IllegalMoveError` for a move not in it)."""
    played = next((m for m in puzzle.moves if m.action == action), None)
    if played is None:
        raise IllegalMoveError(f"{action} is not a legal move of this puzzle")
    return PuzzleResult(puzzle_id=puzzle.id, action=action, correct=action == puzzle.answer, answer=puzzle.answer,
                        value=puzzle.value, played=played, moves=puzzle.moves, side=puzzle.side, rated=False,
                        player=player, puzzle_rating=puzzle.rating)


class StoredDesk:
    """The puzzles of a database (read by the command), easiest first, each answered here (unrated): `kalah puzzle
    --db`."""

    def __init__(self, puzzles: list[PuzzleInfo]) -> None:
        self.puzzles = {p.id: p for p in puzzles}
        self.tried: set[str] = set()

    async def next(self, variant: str | None, puzzle_id: str | None) -> PuzzleShown:
        """The puzzle named, else the easiest not tried in this session."""
        if puzzle_id is not None:
            if puzzle_id not in self.puzzles:
                raise DeskError(f"no puzzle {puzzle_id!r} in this database (`kalah puzzles --db` lists them)")
            return shown_of(self.puzzles[puzzle_id])
        left = [p for p in self.puzzles.values()
                if p.id not in self.tried and (variant is None or p.variant == variant)]
        if not left:
            raise DeskError("no puzzle left to try here: the operator makes more with `kalah puzzle build`")
        return shown_of(left[0])

    async def answer(self, puzzle_id: str, action: str) -> PuzzleResult:
        """The verdict from the stored proved values."""
        self.tried.add(puzzle_id)
        try:
            return judged(self.puzzles[puzzle_id], action)
        except (KeyError, KalahError) as exc:
            raise DeskError(str(exc)) from None


class ServerDesk:
    """A server's puzzles, asked and answered over the client's connection (a first answer is rated)."""

    def __init__(self, send: Callable[[Message], object]) -> None:
        self.send = send
        """Sends one message on the connection (the connection is the app's)."""
        self._waiting: dict[str, asyncio.Future[ServerMessage]] = {}

    def received(self, msg: ServerMessage) -> None:
        """Hand a server message to the request waiting for it."""
        key = msg.request if isinstance(msg, ErrorMessage) else msg.type
        future = self._waiting.pop(str(key), None)
        if future is not None and not future.done():
            future.set_result(msg)

    async def _ask(self, msg: AskPuzzle | AnswerPuzzle, reply: str) -> ServerMessage:
        """Send a request and wait for its reply (or its refusal)."""
        future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
        self._waiting[reply] = future
        self._waiting[msg.type] = future
        self.send(msg)
        try:
            answer = await asyncio.wait_for(future, ANSWER_WAIT_S)
        except TimeoutError:
            raise DeskError("the server did not answer in time") from None
        finally:
            self._waiting.pop(reply, None)
            self._waiting.pop(msg.type, None)
        if isinstance(answer, ErrorMessage):
            raise DeskError(answer.message if answer.code == UnknownPuzzleError.code
                            else f"{answer.code}: {answer.message}")
        return answer

    async def next(self, variant: str | None, puzzle_id: str | None) -> PuzzleShown:
        """The server's puzzle: the one named, else the one nearest the player's rating not tried yet."""
        answer = await self._ask(AskPuzzle(variant=variant, puzzle_id=puzzle_id), "puzzle_shown")
        assert isinstance(answer, PuzzleShown)
        return answer

    async def answer(self, puzzle_id: str, action: str) -> PuzzleResult:
        """The server's verdict (rated on a first answer)."""
        answer = await self._ask(AnswerPuzzle(puzzle_id=puzzle_id, action=action), "puzzle_result")
        assert isinstance(answer, PuzzleResult)
        return answer

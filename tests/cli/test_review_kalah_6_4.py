"""`kalah review` of stored Kalah(6,4) games, both capture rules, checked at every ply against `kalah solve`.

Each game follows the shipped book (`bots/data`): the longest line of the book whose every
position the book holds (the most seeds given away among the longest), read from the book,
then the side to move resigns. So every value is proved at once by the book, in the review and
in the solve alike, and the test takes seconds; whole games, whose middle needs the 24-seed
endgame databases, are reviewed by the slow tests/bots/test_review_kalah_6_4_slow.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bots import book
from bots.core import relative_board, south_value
from protocol import Capture, Game, Position, Sow, Variant
from tests.helpers.processes import KALAH, run
from tests.helpers.stored_games import store_finished

SOLVES_AT_ONCE = 2
"""`kalah solve` processes run at once."""


def book_value(found: book.Book, position: Position) -> int | None:
    """South's final margin under perfect play from `position` as the book holds it, or None."""
    entry = found.get(relative_board(position))
    return None if entry is None else south_value(position, entry.value)


def book_line(variant: Variant) -> list[int]:
    """The longest line from the start whose every position the shipped book holds (of those, the one giving the most
    seeds away, then the first in bin order)."""
    found = book.load(variant, [book.PACKAGE_DIR])
    assert found is not None, f"no shipped book for {variant.text()}"
    lines: list[tuple[int, int, list[int]]] = []

    def walk(position: Position, line: list[int], lost: int) -> None:
        """Follow every move to a position the book holds; keep each line that can go no further."""
        before = book_value(found, position)
        assert before is not None
        sign = 1 if position.to_move == 0 else -1
        ends = True
        for bin_ in position.legal_bins():
            after = position.apply(Sow(bin_))
            value = None if after.over else book_value(found, after)
            if value is not None:
                ends = False
                walk(after, [*line, bin_], lost + sign * (before - value))
        if ends:
            lines.append((-len(line), -lost, line))

    walk(Position.initial(variant), [], 0)
    return min(lines)[2]


async def solve_all(variant: Variant, positions: list[Position]) -> dict[str, dict[str, Any]]:
    """`kalah solve --position FEN --json` of each position (a few at once), by its position text."""
    limit = asyncio.Semaphore(SOLVES_AT_ONCE)

    async def solve(fen: str) -> tuple[str, dict[str, Any]]:
        """One solve's JSON."""
        async with limit:
            done = await asyncio.to_thread(run, [*KALAH, "solve", "--variant", variant.text(), "--position", fen,
                                                 "--json"])
        assert done.returncode == 0, done.stderr
        return fen, json.loads(done.stdout)

    fens = sorted({p.fen() for p in positions})
    return dict(await asyncio.gather(*(solve(fen) for fen in fens)))


@pytest.mark.parametrize("capture", ["standard", "empty"])
async def test_the_review_of_a_book_line_is_the_solvers_at_every_ply(capture: str, tmp_path: Path) -> None:
    """A stored Kalah(6,4) game along the shipped book, resigned where the book ends: `kalah review --db --json`
    gives every ply the value before and after and the loss that `kalah solve --position` proves, all exact."""
    variant = Variant(capture=Capture(capture))
    line = book_line(variant)
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"g64": (variant, " ".join(map(str, line)))})  # resigned where the book ends
    done = await asyncio.to_thread(run, [*KALAH, "review", "g64", "--db", str(db), "--json"])
    assert done.returncode == 0, done.stderr
    review = json.loads(done.stdout)
    game = Game.from_record(variant, " ".join(map(str, line)))
    solved = await solve_all(variant, list(game.positions))
    plies = review["plies"]
    assert [p["action"] for p in plies] == [str(b) for b in line]
    for ply, before, after in zip(plies, game.positions[:-1], game.positions[1:], strict=True):
        want, then = solved[before.fen()], solved[after.fen()]
        sign = 1 if ply["side"] == "south" else -1
        assert (ply["value"], ply["after"]) == (want["value"], then["value"]), f"ply {ply['ply']} at {before.fen()}"
        assert ply["loss"] == sign * (want["value"] - then["value"]) >= 0, f"ply {ply['ply']}"
        assert want["exact"] and then["exact"]
        assert ply["exact"] is True, f"ply {ply['ply']}: the solve proved it, the review calls it an estimate"
        assert int(ply["best"][0]) in want["best"]
    assert review["exact"] is True
    assert sum(p["lost"] for p in review["players"]) == sum(p["loss"] for p in plies) > 0

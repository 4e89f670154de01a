"""The shipped Kalah(6,5) books: the published values, the line of perfect play they hold, late entries proved again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bots import book as book_mod
from bots.book import Book, Entry
from bots.engines import Engines
from bots.inventory import BOOK_NODE_LIMIT, LARGE_SEEDS
from bots.players import PerfectPlayer
from bots.solver import Engine, proof_order, relative_board
from cli.main import main
from protocol import Capture, Position, Sow, Variant

PUBLISHED = {"standard": 10, "empty": 12}
"""Kalah(6,5) under perfect play, South's margin, from SOLVER-NOTES.md."""


def kalah_6_5(capture: str) -> Variant:
    """Kalah(6,5) under a capture rule."""
    return Variant(houses=6, seeds=5, capture=Capture(capture))


def shipped(capture: str) -> Book:
    """The shipped book of the rule set."""
    found = book_mod.load(kalah_6_5(capture), [book_mod.PACKAGE_DIR])
    assert found is not None
    return found


def start_entry(capture: str) -> Entry:
    """The shipped entry of the Kalah(6,5) start."""
    entry = shipped(capture).get(relative_board(Position.initial(kalah_6_5(capture))))
    assert entry is not None
    return entry


def book_line(capture: str) -> tuple[list[Position], Position]:
    """The positions of the book's line from the start (its best moves, both sides), and where it ends."""
    book, pos, seen = shipped(capture), Position.initial(kalah_6_5(capture)), []
    while not pos.over and (entry := book.get(relative_board(pos))) is not None:
        seen.append(pos)
        pos = pos.apply(Sow(entry.pit + 1 if pos.to_move == 0 else entry.pit + 8))
    return seen, pos


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_start_holds_the_published_value(capture: str) -> None:
    """The start's entry: the published value, sowing bin 2 (the first best in proof order), every move if held."""
    v = kalah_6_5(capture)
    board = relative_board(Position.initial(v))
    entry = start_entry(capture)
    assert entry.value == PUBLISHED[capture]
    assert entry.pit == 1  # bin 2 (an extra turn, first in proof order), as CMancala found under the standard rule
    kids = Engine(v, tt_log2=10).children(board)
    assert sorted(kids, key=proof_order)[0][0] == entry.pit
    if entry.per_move is not None:
        assert None not in entry.per_move and max(x for x in entry.per_move if x is not None) == entry.value


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_the_books_line_keeps_the_value(capture: str) -> None:
    """Along the book's line each value is what the move won plus (or, when the turn passes, minus) the next one's."""
    line, end = book_line(capture)
    book = shipped(capture)
    assert line
    for pos, nxt in zip(line, [*line[1:], end], strict=True):
        entry = book.get(relative_board(pos))
        assert entry is not None
        sign = 1 if pos.to_move == 0 else -1
        won = sign * (nxt.margin - pos.margin)
        after = None if nxt.over else book.get(relative_board(nxt))
        if nxt.over:
            assert entry.value == won
        elif after is not None:
            assert entry.value == won + (after.value if nxt.to_move == pos.to_move else -after.value)
        if entry.per_move is not None and after is not None:
            assert entry.per_move[entry.pit] == entry.value


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_solve_and_the_perfect_bot_read_the_start(capture: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah solve -H 6 -s 5 --per-move` answers from the book at once; the perfect bot plays its move unthinking."""
    every = start_entry(capture).per_move is not None
    flags = ["--per-move"] if every else []
    assert main(["solve", "-H", "6", "-s", "5", "--capture", capture, *flags, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == PUBLISHED[capture] and out["source"] == "book" and out["nodes"] == 0
    assert 2 in out["best"] and set(out["per_move"]) == ({"1", "2", "3", "4", "5", "6"} if every else set())
    engines = Engines(egdb_dir=Path("/nonexistent"), book_dirs=[book_mod.PACKAGE_DIR])
    decision = PerfectPlayer(engines=engines).explain(Position.initial(kalah_6_5(capture)), 1.0)
    assert decision.source == "book" and decision.action == Sow(2) and decision.value == PUBLISHED[capture]
    assert engines.made == 0


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_the_shipped_book_records_its_complete_walk(capture: str) -> None:
    """The rule set's shipped book records a full walk of the Kalah(6,5) start with the 30-seed databases and the
    books' node limit: what makes `kalah serve` say "perfect" where the bots use those levels."""
    done = shipped(capture).complete(kalah_6_5(capture), LARGE_SEEDS)
    assert done is not None
    assert (done.databases, done.node_limit) == (LARGE_SEEDS, BOOK_NODE_LIMIT)
    assert shipped(capture).complete(kalah_6_5(capture), LARGE_SEEDS - 1) is None

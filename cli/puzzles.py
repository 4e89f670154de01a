"""`kalah puzzles [--variant V] [--json] [--server URL | --db PATH]`: the stored puzzles with their answers.

From a server, its `puzzles` list; from a database (a file or a `postgresql://` URL), the rows stored
there. Only proved puzzles are listed, easiest (lowest rated) first.
"""

from __future__ import annotations

import argparse
import json

from cli.number_args import whole
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server
from protocol.errors import KalahError
from protocol.puzzle_messages import MAX_LISTED_PUZZLES, ListPuzzles, PuzzleInfo, PuzzleList
from protocol.variant import Variant


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah puzzles`."""
    parser.add_argument("--variant", default=None, help="only puzzles of this variant, e.g. kalah(6,4)")
    parser.add_argument("--limit", type=whole(1, MAX_LISTED_PUZZLES), default=50, metavar="N",
                        help=f"list at most N puzzles (1..{MAX_LISTED_PUZZLES})")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser, "the database file to read, offline")
    parser.add_argument("--json", action="store_true", help="print a JSON list of puzzles")


def variant_text(text: str | None) -> str | None:
    """A `--variant` in normal form (None: any), or a `CommandError` naming the mistake."""
    if text is None:
        return None
    try:
        return Variant.parse(text).text()
    except KalahError as exc:
        raise CommandError(f"--variant {text!r}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    """List the stored puzzles."""
    variant = variant_text(args.variant)
    url = chosen_server(args)
    puzzles = from_server(url, variant, args.limit) if url else from_database(args.db, variant, args.limit)
    if args.json:
        print(json.dumps([p.model_dump(mode="json") for p in puzzles], indent=1))
    else:
        print(puzzles_text(puzzles))
    return 0


def from_server(url: str, variant: str | None, limit: int) -> list[PuzzleInfo]:
    """The puzzles a server lists."""
    from cli.event import ask

    answer = ask(url, ListPuzzles(variant=variant, limit=limit), identity=None, command="kalah puzzles")
    if not isinstance(answer, PuzzleList):
        raise CommandError(f"{url} answered {answer.type!r} to a puzzle list")
    return list(answer.puzzles)


def from_database(source: str | None, variant: str | None, limit: int) -> list[PuzzleInfo]:
    """The puzzles stored in a database (the per-user file when None)."""
    from cli.stored_games import database_of
    from server.storage import StorageError
    from server.storage.puzzle_shelf import PuzzleShelf

    try:
        with PuzzleShelf(database_of(source), create=False) as shelf:
            return shelf.listing(variant, limit)
    except StorageError as exc:
        raise CommandError(str(exc)) from None


def puzzles_text(puzzles: list[PuzzleInfo]) -> str:
    """The puzzles as an aligned table (a line each) with how to solve them."""
    from cli.games import table

    if not puzzles:
        return "no puzzles: the operator makes them with `kalah puzzle build`"
    rows = [["id", "variant", "rating", "to move", "position", "answer", "value", "themes"]]
    rows += [[p.id, p.variant, f"{p.rating:.0f}", p.side, p.position, p.answer, f"{p.value:+d}",
              ",".join(p.themes) or "-"] for p in puzzles]
    return table(rows, right=frozenset({2, 6})) + "\n(values: South's final margin under best play)"

"""`kalah puzzle`: solve puzzles in the terminal; `kalah puzzle build`: the operator makes them.

`kalah puzzle [--server URL | --db PATH] [--variant V] [--id ID]` opens a terminal screen on a puzzle
(`client.screens.puzzle`): press or click a house; it says right or wrong with every move's proved
value. From a server the answers are rated (a first answer to each puzzle); from a database they are
judged here from the stored values, unrated.

`kalah puzzle build [--db PATH] [--from-games N] [--self-play N] ...` looks for puzzles in the latest
reviewed games of a database and in bots' self-play, proves them (`bots.puzzles`) and stores each new
one as soon as it is proved. It runs at low priority (nice 10, one search thread) and is bounded: at
most `--max-puzzles` puzzles and `--max-seconds` in all, each search at most `--position-seconds`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from cli.client_args import add_client_args, default_name
from cli.number_args import whole
from cli.puzzles import variant_text
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server
from protocol.variant import Variant

if TYPE_CHECKING:
    from bots.puzzles import Candidate, Prover
    from server.storage.puzzle_shelf import PuzzleShelf

BUILD_NICE = 10
"""How far `kalah puzzle build` lowers its own priority."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register `kalah puzzle` and `kalah puzzle build`."""
    sub = parser.add_subparsers(dest="puzzle_command", metavar="ACTION")
    build = sub.add_parser("build", help="find, prove and store puzzles (the operator; low priority, bounded)",
                           description="Find puzzles in the latest reviewed games of a database and in bots' "
                                       "self-play, prove every answer with the solver, and store the new ones.")
    add_db_arg(build, "the database to store puzzles in (a file or a postgresql:// URL)")
    build.add_argument("--from-games", type=whole(0), default=200, metavar="N",
                       help="look at the positions where a move lost seeds in the N latest reviewed games")
    build.add_argument("--self-play", type=whole(0), default=0, metavar="N",
                       help="and at every position of N games between shallow bots that often play at random")
    build.add_argument("--variant", default="kalah(6,4)", help="the variant of the self-play games")
    build.add_argument("--max-puzzles", type=whole(1), default=100, metavar="N", help="store at most N new puzzles")
    build.add_argument("--max-seconds", type=whole(1), default=600, metavar="S", help="stop looking after S seconds")
    build.add_argument("--position-seconds", type=float, default=5.0, metavar="S",
                       help="the most one proof may take (a position not proved in time is no puzzle)")
    build.add_argument("--threshold", type=whole(1), default=None, metavar="SEEDS",
                       help="the fewest seeds every other move must lose (default: a review's mistake, "
                            "a 24th of the seeds, at least 2)")
    build.add_argument("--seed", type=int, default=0, help="the self-play games' random seed")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser, "the database to read puzzles from, offline (answers are not rated)")
    parser.add_argument("--variant", default=None, help="only puzzles of this variant, e.g. kalah(6,4)")
    parser.add_argument("--id", default=None, metavar="ID", help="this puzzle first (`kalah puzzles` lists them)")
    add_client_args(parser)


def run(args: argparse.Namespace) -> int:
    """Build puzzles, or solve them in the terminal."""
    if args.puzzle_command == "build":
        return build(args)
    return solve(args)


def solve(args: argparse.Namespace) -> int:
    """Open the terminal's puzzle screen on a server's puzzles or a database's."""
    from client.account_sessions import default_session_file, load_session
    from client.identities import default_identity_file
    from client.puzzle_app import PuzzleApp, PuzzleLaunch

    variant = variant_text(args.variant)
    url = chosen_server(args)
    common = {"variant": variant, "puzzle_id": args.id, "light": args.light}
    if url:
        signed_in = load_session(default_session_file(), url)
        name = signed_in.name if signed_in else args.name or default_name()
        launch = PuzzleLaunch(url=url, name=name, identity_file=default_identity_file(),
                              session=signed_in.session if signed_in else None, **common)
    else:
        from cli.puzzles import from_database

        stored = from_database(args.db, variant, 200)
        if not stored:
            raise CommandError("no puzzles in this database: the operator makes them with `kalah puzzle build`")
        launch = PuzzleLaunch(stored=tuple(stored), **common)
    app = PuzzleApp(launch)
    app.run()
    if app.failure:
        raise CommandError(app.failure)
    return 0


def build(args: argparse.Namespace) -> int:
    """Find, prove and store puzzles, then say how many."""
    from bots import puzzles as finder
    from cli.stored_games import database_of
    from server.storage import StorageError

    if not 0.01 <= args.position_seconds <= 3600:
        raise CommandError("--position-seconds must be 0.01 to 3600")
    variant = Variant.parse(variant_text(args.variant) or "kalah(6,4)")
    _lower_priority()
    deadline = time.monotonic() + args.max_seconds
    provers: dict[str, Prover] = {}

    def prover(v: Variant) -> Prover:
        """One prover per variant, made when first needed."""
        if v.text() not in provers:
            provers[v.text()] = finder.Prover(finder.make_engine(v), args.position_seconds)
        return provers[v.text()]

    try:
        from server.storage.puzzle_shelf import PuzzleShelf

        with PuzzleShelf(database_of(args.db)) as shelf:
            known = shelf.known()
            stored = 0
            for source, source_variant, candidates in _sources(shelf, args, variant, prover):
                for puzzle in finder.find(prover(source_variant), candidates, deadline, args.max_puzzles - stored,
                                          args.threshold, known):
                    stored += shelf.add([puzzle])  # kept at once: an interrupted build keeps what it proved
                    known |= {puzzle.id}
                    print(f"{puzzle.id}  {puzzle.variant}  {puzzle.position}  answer {puzzle.answer}  "
                          f"({source})", file=sys.stderr)
    except finder.UnprovableVariantError as exc:
        raise CommandError(str(exc)) from None
    except StorageError as exc:
        raise CommandError(str(exc)) from None
    print(f"{stored} new puzzle{'s' * (stored != 1)} stored in {shelf.where}")
    return 0


def _sources(shelf: PuzzleShelf, args: argparse.Namespace, variant: Variant,
             prover: Callable[[Variant], Prover]) -> Iterator[tuple[str, Variant, Iterator[Candidate]]]:
    """Each source of candidates: its name, its variant and its candidates (the latest reviewed games, then
    self-play)."""
    from bots.puzzles import from_review, self_play
    from protocol.review_messages import GameReview
    from server.storage.puzzles import RECORD, REVIEWED

    if args.from_games:
        for match_id, variant_name, review_text in shelf.rows(REVIEWED, args.from_games):
            try:
                game_variant = Variant.parse(str(variant_name))
                review = GameReview.model_validate_json(str(review_text))
            except ValueError:
                continue
            rows = shelf.rows(RECORD, str(match_id))
            if not game_variant.can_repeat and rows:
                record = " ".join(str(r[0]) for r in rows)
                yield f"game {match_id}", game_variant, from_review(game_variant, record, review)
    if args.self_play:
        yield "self-play", variant, self_play(prover(variant).engine, args.self_play, args.seed)


def _lower_priority() -> None:
    """Run at low priority: nice `BUILD_NICE` (where the system has it)."""
    with contextlib.suppress(AttributeError, OSError):
        os.nice(BUILD_NICE)

"""`kalah export`: write stored games as text records (read back by `kalah record`) or NDJSON, newest first."""

from __future__ import annotations

import argparse
import json

from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server, refuse_url_argument
from cli.stored_games import SourceError, game_text, game_to_dict, get_game, query_games
from client.stored_game import StoredGame

ALL_LIMIT = 1_000_000


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah export`."""
    parser.add_argument("match", nargs="?", default=None, metavar="MATCH", help="the match id to export")
    parser.add_argument("--all", action="store_true",
                        help="export every finished game, newest first (the order of kalah games)")
    parser.add_argument("--format", choices=["ndjson", "text"], default="text",
                        help="text: header lines and the record, as kalah record reads; ndjson: one object a line")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser)


def run(args: argparse.Namespace) -> int:
    """Write the chosen games to standard output."""
    refuse_url_argument(args.match)
    if (args.match is None) == (not args.all):
        raise CommandError("give one MATCH or --all")
    source = chosen_server(args) or args.db
    try:
        if args.all:
            games: list[StoredGame] = query_games(source, ALL_LIMIT)
        else:
            one = get_game(source, args.match)
            if one is None:
                raise CommandError(f"no stored match {args.match!r}")
            games = [one]
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    for i, game in enumerate(games):
        if args.format == "ndjson":
            print(json.dumps(game_to_dict(game)))
        else:
            print(("\n" if i else "") + game_text(game), end="")
    return 0

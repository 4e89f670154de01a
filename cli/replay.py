"""`kalah replay [MATCH] [--db PATH | --server URL]`: step through a stored game."""

from __future__ import annotations

import argparse

from cli.client_args import add_client_args, default_name
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server, db_path, refuse_url_argument
from protocol.wire_base import MATCH_ID_RULE, is_match_id

LIBRARY_SIZE = 200
"""How many of the newest stored games (finished or not) an offline replay lists."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah replay`."""
    parser.add_argument("match", nargs="?", default=None, metavar="MATCH",
                        help="the match id (default: choose one in the list of stored games)")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser, "the database file to read, offline")
    add_client_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the replay of a stored game, or the list of stored games."""
    from cli.client_session import run_client
    from client.app import Launch
    from client.identities import default_identity_file

    refuse_url_argument(args.match)
    url = chosen_server(args)
    match_id = args.match
    common = {"name": args.name or default_name(), "animate": not args.no_animation, "light": args.light,
              "command": "kalah replay"}
    if url:
        if match_id and not is_match_id(match_id):  # a request cannot carry it: only a hand-written database holds one
            raise CommandError(f"{match_id!r} is not a match id ({MATCH_ID_RULE}): a server is asked only for match "
                               "ids (replay a database holding such a game with --db)")
        launch = Launch(url=url, start="replay" if match_id else "lobby", match_id=match_id,
                        identity_file=default_identity_file(), resume=False, guest=True, **common)
    else:
        from cli.games import with_detail
        from cli.stored_games import SourceError, get_game, query_games

        try:  # an engine's forfeit is shown with its reason
            library = tuple(with_detail(g) for g in query_games(args.db, LIBRARY_SIZE, status=None))
            stored = get_game(args.db, match_id) if match_id else None
        except SourceError as exc:
            raise CommandError(str(exc)) from None
        stored = None if stored is None else with_detail(stored)
        if match_id and stored is None:
            raise CommandError(f"no stored match {match_id!r}")
        launch = Launch(offline=True, db_path=db_path(args.db), library=library, stored=stored, **common)
    return run_client(launch)

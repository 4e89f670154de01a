"""`kalah replay [MATCH] [--db PATH | URL]`: step through a stored game."""

from __future__ import annotations

import argparse
import sys

from cli.client_args import add_client_args, db_arg, default_name, is_url

LIBRARY_SIZE = 200
"""How many of the newest stored games (finished or not) an offline replay lists."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah replay`."""
    parser.add_argument("targets", nargs="*", metavar="MATCH | URL",
                        help="a match id, and/or a server address ws://host:port "
                             "(default: the local database file)")
    parser.add_argument("--db", default=None, help="database file to read (default: per-user file)")
    add_client_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the replay of a stored game, or the list of stored games."""
    from client.app import KalahApp, Launch
    from client.identities import default_identity_file

    urls = [t for t in args.targets if is_url(t)]
    ids = [t for t in args.targets if not is_url(t)]
    if len(urls) > 1 or len(ids) > 1 or (urls and args.db):
        print("kalah replay: give at most one MATCH, and either --db PATH or one URL", file=sys.stderr)
        return 2
    match_id = ids[0] if ids else None
    common = {"name": args.name or default_name(), "animate": not args.no_animation, "light": args.light}
    if urls:
        launch = Launch(url=urls[0], start="replay" if match_id else "lobby", match_id=match_id,
                        identity_file=default_identity_file(), **common)
    else:
        from cli.stored_games import SourceError, get_game, query_games

        try:
            library = tuple(query_games(args.db, LIBRARY_SIZE, status=None))
            stored = get_game(args.db, match_id) if match_id else None
        except SourceError as exc:
            print(f"kalah replay: {exc}", file=sys.stderr)
            return 2
        if match_id and stored is None:
            print(f"kalah replay: no stored match {match_id!r}", file=sys.stderr)
            return 2
        launch = Launch(offline=True, db_path=db_arg(args.db), library=library, stored=stored, **common)
    app = KalahApp(launch)
    app.run()
    return app.return_code or 0  # 1 when the client gave up (no server, refused name)

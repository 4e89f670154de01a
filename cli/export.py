"""`kalah export`: write stored games as text records (readable by `kalah record`) or NDJSON."""

from __future__ import annotations

import argparse
import json
import sys

from cli.stored_games import SourceError, game_text, game_to_dict, get_game, query_games
from client.stored_game import StoredGame

ALL_LIMIT = 1_000_000


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah export`."""
    parser.add_argument("match", nargs="?", default=None, metavar="MATCH", help="the match id to export")
    parser.add_argument("--all", action="store_true", help="export every finished game")
    parser.add_argument("--format", choices=["ndjson", "text"], default="text")
    parser.add_argument("--db", default=None, help="database file (default: the per-user file)")
    parser.add_argument("--url", default=None, help="read from a server ws://host:port instead")


def run(args: argparse.Namespace) -> int:
    """Write the chosen games to standard output."""
    if (args.match is None) == (not args.all):
        print("kalah export: give one MATCH or --all", file=sys.stderr)
        return 2
    if args.url and args.db:
        print("kalah export: give either --url or --db, not both", file=sys.stderr)
        return 2
    source = args.url or args.db
    try:
        if args.all:
            games: list[StoredGame] = query_games(source, ALL_LIMIT)[::-1]
        else:
            one = get_game(source, args.match)
            if one is None:
                print(f"kalah export: no stored match {args.match!r}", file=sys.stderr)
                return 2
            games = [one]
    except SourceError as exc:
        print(f"kalah export: {exc}", file=sys.stderr)
        return 2
    for i, game in enumerate(games):
        if args.format == "ndjson":
            print(json.dumps(game_to_dict(game)))
        else:
            print(("\n" if i else "") + game_text(game), end="")
    return 0

"""`kalah games`: list stored games from a database file or a server."""

from __future__ import annotations

import argparse
import sys

from cli.stored_games import SourceError, query_games
from protocol import Variant, VariantError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah games`."""
    parser.add_argument("url", nargs="?", default=None, metavar="URL", help="a server ws://host:port")
    parser.add_argument("--db", default=None, help="database file (default: the per-user file)")
    parser.add_argument("--player", default=None, help="only games of this player name")
    parser.add_argument("--variant", default=None, help="only games of this variant, e.g. kalah(6,4)")
    parser.add_argument("--limit", type=int, default=50, help="at most this many games (newest first)")
    parser.add_argument("--all-statuses", action="store_true", help="include unfinished games")


def run(args: argparse.Namespace) -> int:
    """Print one line per stored game."""
    if args.url and args.db:
        print("kalah games: give either URL or --db, not both", file=sys.stderr)
        return 2
    try:
        variant = Variant.parse(args.variant).text() if args.variant else None
        games = query_games(args.url or args.db, max(1, min(args.limit, 10_000)), args.player, variant,
                            None if args.all_statuses else "finished")
    except (SourceError, VariantError) as exc:
        print(f"kalah games: {exc}", file=sys.stderr)
        return 2
    if not games:
        print("no stored games")
        return 0
    print(f"{'match':<16} {'date':<16} {'variant':<22} {'south':<14} {'north':<14} {'plies':>5} {'result':>7}  reason")
    for g in games:
        result = "*" if g.result is None else f"{g.result:+d}"
        date = "-" if g.created_at is None else f"{g.created_at:%Y-%m-%d %H:%M}"
        print(f"{g.match_id:<16} {date:<16} {g.variant.text():<22} {g.south or '-':<14} "
              f"{g.north or '-':<14} {g.ply:>5} {result:>7}  {g.reason or g.status}")
    return 0

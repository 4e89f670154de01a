"""`kalah games`: list stored games from a database file or a server, newest first."""

from __future__ import annotations

import argparse
import dataclasses
import json

from cli.number_args import whole
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server, refuse_url_argument
from cli.stored_games import SourceError, game_to_dict, query_games
from client.stored_game import StoredGame
from protocol import Variant, VariantError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah games`."""
    parser.add_argument("stray", nargs="?", default=None, help=argparse.SUPPRESS)
    add_server_arg(parser, "read the database file")
    add_db_arg(parser)
    parser.add_argument("--player", default=None, help="only games of this player name (default: everyone's)")
    parser.add_argument("--variant", default=None, help="only games of this variant, e.g. kalah(6,4) (default: all)")
    parser.add_argument("--limit", type=whole(1), default=50, help="at most this many games, newest first")
    parser.add_argument("--all-statuses", action="store_true",
                        help="include open, live and cancelled games (default: finished games only)")
    parser.add_argument("--json", action="store_true", help="print one JSON array of games")


def table(rows: list[list[str]], right: frozenset[int] = frozenset()) -> str:
    """Rows of cells as aligned columns (the first row is the header); columns in `right` align right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths,
                                                                                                  strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def games_table(games: list[StoredGame]) -> str:
    """The listing: one aligned line per game, as wide as its longest id, name and variant: who won (`draw`, or
    `-`), South's store minus North's when the board decided it (`-` for a resignation, a loss on time, an
    abandonment or a forfeit), and why it ended (a forfeit's reason follows it)."""
    rows = [["match", "date", "variant", "south", "north", "plies", "winner", "score", "reason"]]
    for g in games:
        reason = g.reason or g.status
        if g.detail:
            reason += f": {g.detail}"
        rows.append([g.match_id, "-" if g.created_at is None else f"{g.created_at:%Y-%m-%d %H:%M}", g.variant.text(),
                     g.south or "-", g.north or "-", str(g.ply), g.winner_cell, g.score_cell, reason])
    return table(rows, right=frozenset({5, 7}))


def with_detail(game: StoredGame) -> StoredGame:
    """The game with its forfeit's reason after its end reason (`forfeit: engine exited with status 3`)."""
    if not game.detail:
        return game
    return dataclasses.replace(game, reason=f"{game.reason}: {game.detail}")


def run(args: argparse.Namespace) -> int:
    """Print one line per stored game (or a JSON array)."""
    refuse_url_argument(args.stray, expected=False)
    source = chosen_server(args) or args.db
    try:
        variant = Variant.parse(args.variant).text() if args.variant else None
        games = query_games(source, max(1, min(args.limit, 10_000)), args.player, variant,
                            None if args.all_statuses else "finished")
    except (SourceError, VariantError) as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps([game_to_dict(g) for g in games]))
    elif not games:
        print("no stored games")
    else:
        print(games_table(games))
    return 0

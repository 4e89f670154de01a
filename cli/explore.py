"""`kalah explore --variant V [--position P] [--json] [--server URL | --db PATH]`: the opening explorer.

The moves played from a position in the stored games, with the mover's results and the solver's
value after each move. From a server, its answer to `explore`; from a database, its index read
here and each position valued by the `perfect` bot in this process (its books and the databases
on disk, at most `VALUE_BUDGET_MS` a position).
"""

from __future__ import annotations

import argparse

from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server
from protocol.errors import KalahError
from protocol.explore_messages import Explore, Explored


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah explore`."""
    parser.add_argument("--variant", default="kalah(6,4)", help="the variant, e.g. kalah(6,4) or kalah(4,3)")
    parser.add_argument("--position", default=None,
                        help="the position in the position notation, e.g. '0,4,1,4,3,0 N 1 -' (default: the start)")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser, "the database file (or postgresql:// URL) to read, offline")
    parser.add_argument("--rated", action="store_true", help="only rated games")
    parser.add_argument("--min-rating", type=int, default=None, help="only moves by players rated at least this")
    parser.add_argument("--max-rating", type=int, default=None, help="only moves by players rated below this")
    parser.add_argument("--player", default=None, help="only the games of this player")
    parser.add_argument("--movers", choices=("any", "people", "bots"), default="any",
                        help="whose moves: everyone's, people's, or hosted bots'")
    parser.add_argument("--no-values", action="store_true", help="do not value the moves with the solver")
    parser.add_argument("--json", action="store_true", help="print the answer as one JSON object")


def request_of(args: argparse.Namespace) -> Explore:
    """The `explore` request the flags ask for; `CommandError` naming the flag that is wrong."""
    if args.min_rating is not None and args.max_rating is not None and args.min_rating >= args.max_rating:
        raise CommandError("--min-rating must be below --max-rating")
    try:
        return Explore(variant=args.variant, position=args.position, rated=args.rated, min_rating=args.min_rating,
                       max_rating=args.max_rating, player=args.player, movers=args.movers, values=not args.no_values)
    except ValueError as exc:
        first = exc.errors()[0] if hasattr(exc, "errors") else None
        where = f"--{str(first['loc'][0]).replace('_', '-')}: " if first and first.get("loc") else ""
        reason = first["msg"] if first else str(exc)
        raise CommandError(f"{where}{reason}") from None


def run(args: argparse.Namespace) -> int:
    """Print the moves played from a position."""
    msg = request_of(args)
    url = chosen_server(args)
    answer = from_server(url, msg) if url else from_database(args.db, msg)
    print(answer.model_dump_json() if args.json else explored_text(answer))
    return 0


def from_server(url: str, msg: Explore) -> Explored:
    """A server's answer."""
    from cli.event import ask

    answer = ask(url, msg, timeout=60, command="kalah explore")
    if not isinstance(answer, Explored):
        raise CommandError(f"{url} answered {answer.type!r} to explore")
    return answer


def from_database(source: str | None, msg: Explore) -> Explored:
    """The answer from a database's index, valued in this process by the `perfect` bot."""
    from bots.review import perfect_valuer
    from cli.stored_games import SourceError, explore_rows
    from protocol.names import name_key
    from server.core.explorer import after_moves, explored, start_of, tallied, to_value, value_all
    from server.storage.explore import position_key

    try:
        variant, position = start_of(msg)
    except KalahError as exc:
        raise CommandError(f"--position: {exc}") from None
    player = None if msg.player is None else name_key(msg.player)
    try:
        rows = explore_rows(source, position_key(variant, position), player)
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    tallies = tallied(msg, rows)
    afters = after_moves(position, list(tallies))
    values = value_all(to_value(position, afters), perfect_valuer()) if msg.values else {}
    return explored(msg, position, tallies, afters, values)


def share(part: int, games: int) -> str:
    """A part of the games as a whole percentage."""
    return f"{round(100 * part / games)}%" if games else "-"


def signed(value: int | None, exact: bool) -> str:
    """A value with its sign, `~` before it when it is an estimate, `-` when not valued."""
    return "-" if value is None else f"{'' if exact else '~'}{value:+d}"


def explored_text(answer: Explored) -> str:
    """The answer as aligned text: a line per move, then the solver's view."""
    from cli.games import table

    head = f"{answer.variant} at {answer.position}: {answer.games} games"
    if not answer.moves:
        lines = [head, "no stored game played a move from this position"]
    else:
        rows = [["move", "games", "win", "draw", "loss", "rating", "value", "last game"]]
        rows += [[m.action, str(m.games), share(m.wins, m.games), share(m.draws, m.games), share(m.losses, m.games),
                  "-" if m.average_rating is None else str(m.average_rating), signed(m.value, m.exact),
                  m.last_match or "-"] for m in answer.moves]
        lines = [head, table(rows, right=frozenset({1, 2, 3, 4, 5, 6}))]
    if answer.value is not None:
        proved = "proved" if answer.exact else f"estimate, depth {answer.depth}"
        lines.append(f"value {signed(answer.value, answer.exact)} ({proved}); the solver plays {answer.solver or '-'}")
    lines.append("win/draw/loss: the mover's results; value: South's final margin under best play after the move")
    return "\n".join(lines)

"""`kalah review MATCH [--json] [--server URL | --db PATH]`: each move of a finished game against perfect play.

From a server, the review it stored (made once, through its analysis queue, on first request);
from a database, the review stored there, else one made now in this process by the `perfect` bot
(not stored: the command only reads the database).
"""

from __future__ import annotations

import argparse

from cli.client_args import default_name
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server, refuse_url_argument
from protocol.review_messages import GameReview, ReviewedPly, ReviewGame, ReviewSummary
from protocol.wire_base import MATCH_ID_RULE, is_match_id

REVIEW_WAIT_S = 300.0
"""How long the command waits for a server's review (one made now waits its turn in the analysis queue)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah review`."""
    parser.add_argument("match", metavar="MATCH", help="the match id of a finished game (`kalah games` lists them)")
    add_server_arg(parser, "read the database file")
    add_db_arg(parser, "the database file to read, offline")
    parser.add_argument("--name", default=None, help="the name to say hello as on a server (default: your login)")
    parser.add_argument("--json", action="store_true", help="print the review as one JSON object")


def run(args: argparse.Namespace) -> int:
    """Print the review of a stored game."""
    refuse_url_argument(args.match)
    url = chosen_server(args)
    if not is_match_id(args.match):  # only a database written by hand holds one: a review cannot carry it
        raise CommandError(f"{args.match!r} is not a match id ({MATCH_ID_RULE}), so its game cannot be reviewed: "
                           "give the stored game such an id (`kalah games` lists them)")
    review = from_server(url, args.match, args.name or default_name()) if url else from_database(args.db, args.match)
    print(review.model_dump_json() if args.json else review_text(review))
    return 0


def from_server(url: str, match_id: str, name: str) -> GameReview:
    """The review a server serves (made by it on first request)."""
    from cli.event import ask

    answer = ask(url, ReviewGame(match_id=match_id), identity=name, timeout=REVIEW_WAIT_S, command="kalah review")
    if not isinstance(answer, GameReview):
        raise CommandError(f"{url} answered {answer.type!r} to a review")
    return answer


def from_database(source: str | None, match_id: str) -> GameReview:
    """The review stored in a database, else one made now by the `perfect` bot in this process."""
    from bots.review import perfect_valuer, review_game
    from cli.stored_games import SourceError, get_game, stored_review

    try:
        stored = stored_review(source, match_id)
        if stored is not None:
            return GameReview.model_validate_json(stored)
        game = get_game(source, match_id)
    except (SourceError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if game is None:
        raise CommandError(f"no stored match {match_id!r} (`kalah games` lists them)")
    if game.status != "finished":
        raise CommandError(f"match {match_id} is {game.status}: only a finished game is reviewed")
    return review_game(match_id, game.variant, game.record, (game.south, game.north), perfect_valuer())


def signed(value: int, exact: bool) -> str:
    """A value with its sign, `~` before it when it is an estimate."""
    return f"{'' if exact else '~'}{value:+d}"


def ply_line(p: ReviewedPly) -> list[str]:
    """One ply's cells."""
    mark = p.mark if p.exact or p.mark == "unjudged" else f"{p.mark} (estimate)"
    return [str(p.ply), p.side, p.player or "-", p.action, signed(p.value, p.exact), signed(p.after, p.exact),
            str(p.loss) if p.exact else f"~{p.loss}", mark, " ".join(p.best) or "-"]


def summary_line(s: ReviewSummary) -> str:
    """One player's summary in words."""
    who = f"{s.player or '-'} (opened as {'South' if s.seat == 0 else 'North'})"
    worst = "no seed lost" if s.worst_ply is None else f"worst: ply {s.worst_ply}, {s.worst_loss} seeds"
    estimate = "" if s.exact else " (some figures are estimates)"
    return f"{who}: {s.perfect}/{s.moves} perfect moves, {s.lost} seeds given away, {worst}{estimate}"


def review_text(review: GameReview) -> str:
    """The review as aligned text: a line per ply, then each player's summary and the marks' thresholds."""
    from cli.games import table

    proved = "every figure proved" if review.exact else "~: a depth-limited estimate, not proved"
    rows = [["ply", "side", "player", "move", "value", "after", "lost", "mark", "best"]]
    rows += [ply_line(p) for p in review.plies]
    t = review.thresholds
    lines = [f"review of {review.match_id}, {review.variant} (values: South's final margin; {proved})",
             table(rows, right=frozenset({0, 4, 5, 6})), ""]
    lines += [summary_line(s) for s in review.players]
    lines.append(f"marks by seeds lost: inaccuracy {t.inaccuracy}+, mistake {t.mistake}+, blunder {t.blunder}+")
    return "\n".join(lines)

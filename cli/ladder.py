"""`kalah ladder`: every pairing of bots plays paired openings as stored matches; prints standings."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import secrets
import sys
from pathlib import Path

import platformdirs

from bots.names import bot_id_shape, canonical_bot
from cli.ladder_engines import add_engine_args, engine_config, local_engines
from cli.ladder_report import as_json as report_json
from cli.ladder_report import render as render_report
from cli.ladder_runner import Finished, Ladder, LadderConfig, LadderError, LadderState
from cli.ladder_schedule import check_ladder
from cli.main import SIGINT_STATUS
from cli.number_args import whole
from cli.operator_token import add_operator_token_args, operator_token
from cli.server_args import CommandError, add_server_arg, chosen_server
from cli.stored_games import SourceError, failure, fetch_standings
from cli.variant_args import add_variant_args, variant_from_args
from protocol import KalahError
from protocol.messages import Standings
from protocol.requests import MAX_PACE_MS
from server.core.ratings import Rating
from server.core.standings import Standing, compute, render


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah ladder`."""
    parser.add_argument("--bots", default="", help="comma-separated bot names, e.g. random,greedy,alphabeta:4")
    add_engine_args(parser)
    parser.add_argument("--games", type=int, default=10, help="games per pairing (rounded up to even)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random openings")
    add_server_arg(parser, "a local server over --db")
    parser.add_argument("--db", metavar="PATH", default=None,
                        help=f"the local server's database (default: the ladder's own file, {ladder_db_path()}, "
                             "apart from the games you play)")
    parser.add_argument("--concurrency", type=whole(1), default=os.cpu_count() or 1, help="games at once")
    parser.add_argument("--state", metavar="FILE",
                        help="progress file (default: one per ladder under the per-user data directory)")
    parser.add_argument("--unrated", action="store_true",
                        help="do not rate the ladder's games (on a running server without --operator-token they "
                             "are unrated anyway)")
    parser.add_argument("--pace-ms", type=int, default=0, metavar="MS",
                        help="minimum time per move, so people can follow the games live (0..10000)")
    add_operator_token_args(parser, "the server's operator token, needed for rated games on a running server")
    parser.add_argument("--json", action="store_true",
                        help="print the games and the standings as one JSON object (progress goes to stderr)")
    add_variant_args(parser)


def ladder_db_path() -> Path:
    """The ladder's own database beside the per-user one, so its games stay out of `kalah games`."""
    return Path(platformdirs.user_data_dir("kalah-arena", appauthor=False)) / "ladder.sqlite3"


def _state_path(args: argparse.Namespace, config: LadderConfig, where: str) -> Path:
    """Where this ladder's progress is kept."""
    if args.state:
        return Path(args.state).expanduser()
    base = Path(platformdirs.user_data_dir("kalah-arena", appauthor=False)) / "ladders"
    return base / f"ladder-{config.digest(where)}.jsonl"


def server_standings(standings: Standings, config: LadderConfig) -> tuple[
        list[Standing], dict[tuple[str, str], list[int]]]:
    """The server's stored standings and head-to-head, cut to the ladder's players (best rating first)."""
    names = {config.display(player): player for player in config.players}
    table = [Standing(names[r.name], Rating(r.rating, r.rd), r.wins, r.draws, r.losses)
             for r in standings.rows if r.name in names]
    h2h = {(names[h.player], names[h.opponent]): [h.wins, h.draws, h.losses]
           for h in standings.head_to_head if h.player in names and h.opponent in names}
    return table, h2h


def _games(finished: list[Finished]) -> list[tuple[str, str, str, float]]:
    """The finished games as the report reads them."""
    return [(f.game.key, f.game.south, f.game.north, f.score) for f in finished]


def _as_json(finished: list[Finished], table: list[Standing], h2h: dict[tuple[str, str], list[int]],
             config: LadderConfig) -> str:
    """The ladder's games, standings and report as one JSON object."""
    return json.dumps({
        "rated": config.rated,
        "games": [{"match_id": f.match_id, "south": f.game.south, "north": f.game.north, "score": f.score,
                   "result": f.result, "reason": f.reason, "detail": f.detail} for f in finished],
        **report_json(_games(finished), config.report_order, config.sprt),
        "standings": [{"player": s.name, "rating": round(s.rating.rating, 1), "rd": round(s.rating.rd, 1),
                       "games": s.games, "wins": s.wins, "draws": s.draws, "losses": s.losses} for s in table],
        "head_to_head": [{"player": a, "opponent": b, "wins": w, "draws": d, "losses": lo}
                         for (a, b), (w, d, lo) in sorted(h2h.items())],
    })


async def _run(args: argparse.Namespace, config: LadderConfig, server: str | None) -> int:
    """Play the ladder on the chosen server (a local one over --db) and print the standings."""
    from server.assembly import start_server

    def say(line: str) -> None:
        """A progress line: on standard output, or standard error when the output is JSON."""
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    running = None
    if server:
        url, where = server, server
    else:
        db = Path(args.db).expanduser() if args.db else ladder_db_path()
        db.parent.mkdir(parents=True, exist_ok=True)
        token = secrets.token_urlsafe(24)
        config = dataclasses.replace(config, operator_token=token)
        running = await start_server(db, operator_token=token)
        url, where = running.url, str(db.resolve())
        say(f"ladder server {url} on {db} (watch a game: kalah watch MATCH --server {url})")
    state = LadderState(_state_path(args, config, where))
    engines = None if running is None else local_engines(args, running.arena, config)
    ladder = Ladder(config, state, say, engines)
    before = len(ladder.results)
    try:
        finished = await ladder.run(url)
        standings = await asyncio.to_thread(fetch_standings, url) if config.rated else None
    except OSError as exc:
        raise LadderError(f"cannot reach {url}: {failure(exc)}") from None
    finally:
        if running is not None:
            await running.close()
    if len(finished) == before:
        say(f"all {len(finished)} games of this ladder were played before (progress in {state.path})")
    if standings is not None:
        table, h2h = server_standings(standings, config)
        title = f"standings on {where} (every rated game of these bots, as the server stores them)"
    else:
        table, h2h = compute([f.as_result() for f in finished], config.players)
        title = "results of these unrated games (ratings computed from them alone, not stored)"
    if args.json:
        print(_as_json(finished, table, h2h, config))
        return 0
    print(f"\n{title}")
    print(render(table, h2h))
    print()
    print(render_report(_games(finished), config.report_order, config.sprt))
    print(f"\n{len(finished)} games of this ladder; progress kept in {state.path}")
    if not server:
        print(f"its games: kalah games --db {where}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Validate the settings and run the ladder; exit 2 on bad input, 1 if the server fails."""
    server = chosen_server(args)
    token = operator_token(args, "ladder")
    try:
        known = canonical_bot if server is None else bot_id_shape  # a server may host bots of other names
        bots = tuple(known(b.strip()) for b in args.bots.split(",") if b.strip())
        config = LadderConfig(bots=bots, games=args.games, variant=variant_from_args(args), seed=args.seed,
                              concurrency=args.concurrency, rated=not args.unrated,
                              operator_token=token, pace_ms=args.pace_ms)
        config = engine_config(args, config, server)
        check_ladder(config.players, args.games)
        if not 0 <= args.pace_ms <= MAX_PACE_MS:
            raise ValueError(f"--pace-ms takes 0 to {MAX_PACE_MS} milliseconds")
    except (KalahError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if server and config.rated and not config.operator_token:
        config = dataclasses.replace(config, rated=False)
        print("kalah ladder: no --operator-token-file (or $KALAH_OPERATOR_TOKEN) for this server: the games are "
              "unrated (--unrated plays them so without this line)", file=sys.stderr, flush=True)
    try:
        return asyncio.run(_run(args, config, server))
    except (LadderError, SourceError, OSError) as exc:
        raise CommandError(str(exc), status=1) from None
    except KeyboardInterrupt:
        start = "\n" if sys.stderr.isatty() else ""  # after the terminal's ^C
        print(f"{start}kalah ladder: stopped; run the same command again to resume", file=sys.stderr)
        return SIGINT_STATUS

"""`kalah ladder`: every pairing of bots plays paired openings as stored matches; prints standings."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import secrets
import sys
from pathlib import Path

import platformdirs

from cli.ladder_runner import Ladder, LadderConfig, LadderError, LadderState
from cli.ladder_schedule import check_ladder
from cli.variant_args import add_variant_args, variant_from_args
from protocol import KalahError
from protocol.requests import MAX_PACE_MS
from server.standings import compute, render


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah ladder`."""
    parser.add_argument("--bots", required=True, help="comma-separated bot names, e.g. random,greedy,alphabeta:4")
    parser.add_argument("--games", type=int, default=10, help="games per pairing (rounded up to even)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random openings")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--server", metavar="URL", help="play on a running server ws://host:port")
    where.add_argument("--db", metavar="PATH", help="play on a local server over this database "
                                                   "(default: the per-user database)")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1, help="games at once")
    parser.add_argument("--state", metavar="FILE", help="progress file (default: derived from the settings)")
    parser.add_argument("--unrated", action="store_true", help="do not rate the ladder's games")
    parser.add_argument("--pace-ms", type=int, default=0, metavar="MS",
                        help="minimum time per move, so people can follow the games live (0..10000; default 0)")
    parser.add_argument("--operator-token", metavar="SECRET", default=os.environ.get("KALAH_OPERATOR_TOKEN"),
                        help="the server's operator token, needed for rated games on a running server "
                             "(default: $KALAH_OPERATOR_TOKEN; a local server gets a fresh one)")
    add_variant_args(parser)


def _state_path(args: argparse.Namespace, config: LadderConfig, where: str) -> Path:
    """Where this ladder's progress is kept."""
    if args.state:
        return Path(args.state).expanduser()
    base = Path(platformdirs.user_data_dir("kalah-arena", appauthor=False)) / "ladders"
    return base / f"ladder-{config.digest(where)}.jsonl"


async def _run(args: argparse.Namespace, config: LadderConfig) -> int:
    """Play the ladder on the chosen server (an embedded one for --db) and print the standings."""
    from server.app import start_server
    from server.storage import default_db_path

    running = None
    if args.server:
        url, where = args.server, args.server
    else:
        db = Path(args.db).expanduser() if args.db else default_db_path()
        token = secrets.token_urlsafe(24)
        config = dataclasses.replace(config, operator_token=token)
        running = await start_server(db, operator_token=token)
        url, where = running.url, str(db.resolve())
        print(f"ladder server {url} on {db} (watch any game: kalah watch {url} MATCH)")
    state = LadderState(_state_path(args, config, where))
    try:
        finished = await Ladder(config, state, lambda line: print(line, flush=True)).run(url)
    finally:
        if running is not None:
            await running.close()
    table, h2h = compute([f.as_result() for f in finished], config.bots)
    print()
    print(render(table, h2h))
    print(f"\n{len(finished)} games; progress kept in {state.path}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Validate the settings and run the ladder; exit 2 on bad input, 1 if the server fails."""
    try:
        bots = tuple(b.strip() for b in args.bots.split(",") if b.strip())
        config = LadderConfig(bots=bots, games=args.games, variant=variant_from_args(args), seed=args.seed,
                              concurrency=max(1, args.concurrency), rated=not args.unrated,
                              operator_token=args.operator_token, pace_ms=args.pace_ms)
        check_ladder(bots, args.games)
        if not 0 <= args.pace_ms <= MAX_PACE_MS:
            raise ValueError(f"--pace-ms takes 0 to {MAX_PACE_MS} milliseconds")
    except (KalahError, ValueError) as exc:
        print(f"kalah ladder: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run(args, config))
    except (LadderError, OSError) as exc:
        print(f"kalah ladder: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nkalah ladder: stopped; run the same command again to resume", file=sys.stderr)
        return 130

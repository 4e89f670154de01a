"""`kalah bridge --server ws://HOST:PORT --engine COMMAND`: a local KGP engine plays in a remote arena.

Like lichess-bot for UCI engines: the bridge starts COMMAND (a program speaking KGP on its
stdin/stdout, as the client side), connects to the arena over the arena's own websocket
protocol, finds games (seek, a hosted bot, an open match of its own, open matches others
created, or an event's games), and plays the engine's moves, game after game, reconnecting when the connection
drops. See `cli.bridge_loop` for how, and docs/engines.md for the user's side.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from cli.client_args import player_key, player_name
from cli.server_args import CommandError, server_url


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah bridge`."""
    parser.add_argument("--server", required=True, metavar="URL", type=server_url,
                        help="the arena to play in: ws://HOST:PORT or wss://HOST:PORT")
    parser.add_argument("--engine", required=True, metavar="COMMAND",
                        help="the engine to run: a command line speaking KGP on stdin/stdout")
    parser.add_argument("--name", type=player_name,
                        help="the arena name to play under (default: the engine's info:name)")
    parser.add_argument("--token", type=player_key("KALAH_BRIDGE_TOKEN"),
                        default=os.environ.get("KALAH_BRIDGE_TOKEN") or None,
                        help="the identity's token from an earlier run (default $KALAH_BRIDGE_TOKEN; "
                             "none: a new identity, its token printed)")
    parser.add_argument("--games", type=int, help="games to play, then leave (0: until interrupted; default 1, "
                        "with --event until the event ends)")
    find = parser.add_mutually_exclusive_group()
    find.add_argument("--seek", dest="find", action="store_const", const="seek",
                      help="pair with another player seeking the variant (the default)")
    find.add_argument("--bot", metavar="NAME", help="play the server's hosted bot NAME (e.g. perfect)")
    find.add_argument("--open", dest="find", action="store_const", const="open",
                      help="create an open match and wait for someone to join it")
    find.add_argument("--accept", dest="find", action="store_const", const="accept",
                      help="join open matches of the variant that others created")
    find.add_argument("--event", metavar="ID", help="enter the event ID and play its games as they are paired")
    parser.add_argument("--variant", default="kalah(6,4)",
                        help="the variant to play (sowing only: no pie rule, no opening transfer)")
    parser.add_argument("--seat", choices=("south", "north", "random"), default="random",
                        help="the seat to take in a match the bridge creates (--bot, --open)")
    parser.add_argument("--unrated", action="store_true", help="create unrated matches (--bot, --open)")
    parser.add_argument("--move-time", type=float, default=5.0, metavar="SECONDS",
                        help="longest think per move when the clock allows more, and an untimed game's limit")
    parser.add_argument("--margin", type=float, default=0.5, metavar="SECONDS",
                        help="kept back of the engine's clock for the network and the server")
    parser.add_argument("--on-fault", choices=("restart", "stop"), default="restart",
                        help="after the engine crashed, hung or moved illegally (the game is resigned)")
    parser.add_argument("--max-faults", type=int, default=3,
                        help="stop after this many faulty games in a row, even with --on-fault restart")
    parser.add_argument("--poll", type=float, default=2.0, metavar="SECONDS",
                        help="how often --accept looks for open matches")


def run(args: argparse.Namespace) -> int:
    """Run the bridge until its games are played; the exit status (1: stopped by the engine's faults)."""
    from cli.bridge_game import kgp_variant
    from cli.bridge_loop import Bridge
    from cli.bridge_options import BridgeError, BridgeOptions

    games = args.games if args.games is not None else 0 if args.event else 1
    if games < 0 or args.max_faults < 1 or args.move_time <= 0 or args.margin < 0 or args.poll <= 0:
        raise CommandError("--games must be 0 or more, --max-faults at least 1, --move-time and --poll positive, "
                           "--margin not negative")
    try:
        kgp_variant(args.variant)
    except ValueError as exc:
        raise CommandError(f"--variant: {exc}") from None
    options = BridgeOptions(
        server=args.server, engine=args.engine, name=args.name, token=args.token, games=games,
        find="bot" if args.bot else "event" if args.event else args.find or "seek", bot=args.bot, event=args.event,
        variant=args.variant, seat=args.seat,
        rated=not args.unrated, move_s=args.move_time, margin_s=args.margin, on_fault=args.on_fault,
        max_faults=args.max_faults, poll_s=args.poll)

    async def main() -> int:
        bridge = Bridge(options, say=lambda text: print(text, flush=True))
        return await bridge.run()

    try:
        return asyncio.run(main())
    except BridgeError as exc:
        raise CommandError(str(exc), status=1) from None
    finally:
        sys.stdout.flush()

"""`kalah play [URL]`: the terminal client; with no URL, a local server and a game against a bot."""

from __future__ import annotations

import argparse
import sys

from cli.client_args import add_client_args, db_arg, default_name
from cli.variant_args import add_variant_args, variant_from_args
from protocol import KalahError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah play`."""
    from client.opponents import BOTS, DEFAULT_BOT_LEVEL

    parser.add_argument("url", nargs="?", default=None,
                        help="server address ws://host:port (default: start a local server)")
    parser.add_argument("--db", default=None, help="database file of the local server (default: per-user file)")
    levels = ", ".join(f"{n}={name}" for n, (name, _) in BOTS.items())
    parser.add_argument("--bot", type=int, choices=sorted(BOTS), default=None,
                        help=f"start a game against a hosted bot of this level ({levels}); "
                             f"default without URL: {DEFAULT_BOT_LEVEL}")
    parser.add_argument("--seat", choices=["south", "north", "random"], default="south",
                        help="your seat in the bot game (South moves first)")
    parser.add_argument("--lobby", action="store_true", help="open the lobby instead of starting a bot game")
    add_client_args(parser)
    add_variant_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the client; returns when the user quits."""
    from client.app import KalahApp, Launch
    from client.identities import default_identity_file
    from client.opponents import DEFAULT_BOT_LEVEL

    try:
        variant = variant_from_args(args)
    except KalahError as exc:
        print(f"kalah play: {exc}", file=sys.stderr)
        return 2
    bot = args.bot if args.bot is not None else (None if args.url or args.lobby else DEFAULT_BOT_LEVEL)
    launch = Launch(
        url=args.url, name=args.name or default_name(), db_path=db_arg(args.db),
        start="bot" if bot is not None and not args.lobby else "lobby", variant=variant,
        bot_level=bot or DEFAULT_BOT_LEVEL, seat=args.seat, animate=not args.no_animation, light=args.light,
        identity_file=default_identity_file(),
    )
    app = KalahApp(launch)
    app.run()
    return app.return_code or 0  # 1 when the client gave up (no server, refused name)

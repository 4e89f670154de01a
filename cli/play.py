"""`kalah play`: the terminal client; with no server named, a local server and a game against a bot.

Flags that choose a game (`--bot`, `--seat`, `--lobby`, any variant flag) start what they say,
whatever unfinished game the identity holds; `--resume` reopens the newest unfinished one; with
no flag at all the client asks whether to resume the unfinished game or start a new one.
"""

from __future__ import annotations

import argparse
import os

from cli.client_args import add_client_args, default_name, player_key
from cli.server_args import CommandError, add_db_arg, add_server_arg, chosen_server, db_path, refuse_url_argument
from cli.variant_args import add_variant_args, variant_from_args, variant_given
from protocol import KalahError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah play`."""
    from client.opponents import BOTS, DEFAULT_BOT_LEVEL

    add_server_arg(parser, "start a local server")
    add_db_arg(parser, "the local server's database file")
    parser.add_argument("stray", nargs="?", default=None, help=argparse.SUPPRESS)
    levels = ", ".join(f"{n}={name}" for n, (name, _) in BOTS.items())
    parser.add_argument("--bot", type=int, choices=sorted(BOTS), default=None,
                        help=f"start a game against a hosted bot of this level ({levels}) "
                             f"(default: level {DEFAULT_BOT_LEVEL} on a local server, the lobby on a server)")
    parser.add_argument("--seat", choices=["south", "north", "random"], default=None,
                        help="your seat in the bot game; South moves first (default: south)")
    parser.add_argument("--lobby", action="store_true", help="open the lobby instead of starting a bot game")
    parser.add_argument("--resume", action="store_true",
                        help="reopen your newest unfinished game instead of starting one (takes no game flags)")
    parser.add_argument("--token", type=player_key("KALAH_TOKEN"), default=os.environ.get("KALAH_TOKEN") or None,
                        help="play as the identity of this key, e.g. the web page's 'Show my key' (default: "
                             "$KALAH_TOKEN, else the key remembered for --name)")
    add_client_args(parser)
    add_variant_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the client; returns when the user quits."""
    from cli.client_session import run_client
    from client.account_sessions import default_session_file, load_session
    from client.app import Launch
    from client.identities import default_identity_file
    from client.opponents import DEFAULT_BOT_LEVEL

    refuse_url_argument(args.stray, expected=False)
    url = chosen_server(args)
    chooses = args.bot is not None or args.seat is not None or args.lobby or variant_given(args)
    if args.resume and chooses:
        raise CommandError("--resume reopens your unfinished game: give it without --bot, --seat, --lobby "
                           "or variant flags")
    try:
        variant = variant_from_args(args)
    except KalahError as exc:
        raise CommandError(str(exc)) from None
    signed_in = load_session(default_session_file(), url) if url is not None and args.token is None else None
    bot = args.bot if args.bot is not None else (None if url or args.lobby or args.resume else DEFAULT_BOT_LEVEL)
    launch = Launch(
        url=url, name=signed_in.name if signed_in else args.name or default_name(), db_path=db_path(args.db),
        session=signed_in.session if signed_in else None,
        start="bot" if bot is not None and not args.lobby else "lobby", variant=variant,
        bot_level=bot or DEFAULT_BOT_LEVEL, seat=args.seat or "south", animate=not args.no_animation,
        light=args.light, identity_file=default_identity_file(), token=args.token,
        resume=True if args.resume else False if chooses else None, command="kalah play",
    )
    return run_client(launch)

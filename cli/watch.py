"""`kalah watch [MATCH] --server URL`: spectate a match (or pick one in the lobby).

Watching is spectating: a match opened with `watch` is shown as a spectator even to an identity
seated in it (its keys make no moves), and no unfinished game of the identity is reopened.
"""

from __future__ import annotations

import argparse

from cli.client_args import add_client_args, default_name
from cli.server_args import CommandError, add_server_arg, chosen_server, refuse_url_argument


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah watch`."""
    parser.add_argument("match", nargs="?", default=None, help="match id (default: choose one in the lobby)")
    add_server_arg(parser, "none: a server must be named")
    add_client_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the client straight into spectating."""
    from cli.client_session import run_client
    from client.app import Launch
    from client.identities import default_identity_file

    refuse_url_argument(args.match)
    url = chosen_server(args)
    if url is None:
        raise CommandError("which server? give --server ws://host:port (or set $KALAH_SERVER)")
    launch = Launch(url=url, name=args.name or default_name(), start="watch" if args.match else "lobby",
                    match_id=args.match, animate=not args.no_animation, light=args.light,
                    identity_file=default_identity_file(), resume=False, spectate=True, guest=True,
                    command="kalah watch")
    return run_client(launch)

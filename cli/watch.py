"""`kalah watch URL [MATCH]`: spectate a match (or pick one in the lobby)."""

from __future__ import annotations

import argparse

from cli.client_args import add_client_args, default_name


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah watch`."""
    parser.add_argument("url", help="server address ws://host:port")
    parser.add_argument("match", nargs="?", default=None, help="match id (default: choose in the lobby)")
    add_client_args(parser)


def run(args: argparse.Namespace) -> int:
    """Open the client straight into spectating."""
    from client.app import KalahApp, Launch
    from client.identities import default_identity_file

    launch = Launch(url=args.url, name=args.name or default_name(),
                    start="watch" if args.match else "lobby", match_id=args.match,
                    animate=not args.no_animation, light=args.light, identity_file=default_identity_file())
    app = KalahApp(launch)
    app.run()
    return app.return_code or 0  # 1 when the client gave up (no server, refused name)

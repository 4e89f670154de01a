"""`kalah logout`: end this terminal's session on a server and forget it."""

from __future__ import annotations

import argparse

from websockets.sync.client import ClientConnection

from cli.account_client import (
    add_account_server_arg,
    exchange,
    hello_with_session,
    server_of,
    session_file,
    stored_session,
)
from cli.server_args import CommandError
from client.account_sessions import forget_session
from protocol.account_messages import Logout
from protocol.messages import encode


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah logout`."""
    add_account_server_arg(parser)


def run(args: argparse.Namespace) -> int:
    """End the session on the server (one that ended already is forgotten all the same)."""
    url = server_of(args)
    stored = stored_session(url)

    def steps(ws: ClientConnection) -> None:
        """Say hello with the session, then sign out."""
        hello_with_session(ws, stored)
        ws.send(encode(Logout()))
        ws.recv(timeout=30)

    try:
        exchange(url, steps)
    except CommandError as exc:
        if not str(exc).startswith("bad_session"):
            raise
    forget_session(session_file(), url)
    print(f"signed out of {url} as {stored.name}")
    return 0

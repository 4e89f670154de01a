"""`kalah sessions`: the sessions of the account this terminal is signed in to; `--revoke ID` ends one, `--all`
ends every one (this terminal's too)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from websockets.sync.client import ClientConnection

from cli.account_client import (
    add_account_server_arg,
    ask,
    exchange,
    hello_with_session,
    server_of,
    session_file,
    stored_session,
)
from cli.games import table
from client.account_sessions import forget_session
from protocol.account_messages import ListSessions, RevokeSessions, SessionList, SignedOut


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah sessions`."""
    add_account_server_arg(parser)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--revoke", metavar="ID", default=None, help="end the session with this id")
    what.add_argument("--all", action="store_true", help="end every session of the account (sign out everywhere)")


def when(at: float) -> str:
    """A time as `YYYY-MM-DD HH:MM` UTC."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M")


def run(args: argparse.Namespace) -> int:
    """List, or end one or all, of the account's sessions."""
    url = server_of(args)
    stored = stored_session(url)

    def steps(ws: ClientConnection) -> SessionList | SignedOut:
        """Say hello with the session, then ask."""
        hello_with_session(ws, stored)
        if args.all or args.revoke:
            return ask(ws, RevokeSessions(session_id=args.revoke, all=args.all), SignedOut)
        return ask(ws, ListSessions(), SessionList)

    answer = exchange(url, steps)
    if isinstance(answer, SignedOut):
        if answer.current:
            forget_session(session_file(), url)
        print(f"ended {answer.ended} session{'s' if answer.ended != 1 else ''}"
              + (" (this terminal's too: signed out)" if answer.current else ""))
        return 0
    rows = [["id", "client", "address", "signed in (UTC)", "last seen (UTC)", ""]]
    rows += [[s.session_id, s.client, s.address, when(s.created_at), when(s.seen_at), "this one" if s.current else ""]
             for s in answer.sessions]
    print(table(rows))
    return 0

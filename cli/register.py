"""`kalah register NAME`: make an account on a server (a guest identity remembered here for NAME becomes it,
keeping its games and rating), sign in, and print the one-time recovery codes once."""

from __future__ import annotations

import argparse

from websockets.sync.client import ClientConnection

from cli.account_client import (
    Secrets,
    add_account_server_arg,
    add_password_stdin,
    ask,
    exchange,
    server_of,
    session_file,
)
from cli.client_args import player_name
from client.account_sessions import StoredSession, save_session
from client.identities import default_identity_file, load_token, server_keys
from protocol.account_messages import Register, SignedIn
from protocol.messages import Hello, Welcome

STORE_HEADER = "Kalah-Store"


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah register`."""
    parser.add_argument("name", type=player_name, help="the account's name (your guest identity's, to keep it)")
    add_account_server_arg(parser)
    add_password_stdin(parser)


def run(args: argparse.Namespace) -> int:
    """Register, remember the session (readable by you only), and print the recovery codes."""
    url = server_of(args)
    password = Secrets(args.password_stdin).new_password()

    def steps(ws: ClientConnection) -> tuple[SignedIn, bool]:
        """Say hello as the remembered guest of that name, if any, then register."""
        store = ws.response.headers.get(STORE_HEADER) if ws.response is not None else None
        token = load_token(default_identity_file(), server_keys(url, store), args.name)
        if token is not None:
            ask(ws, Hello(name=args.name, token=token), Welcome)
        return ask(ws, Register(name=args.name, password=password), SignedIn), token is not None

    made, was_guest = exchange(url, steps)
    assert made.session is not None
    save_session(session_file(), url, StoredSession(made.name, made.session_id, made.session))
    kept = " (your guest identity, with its games and rating)" if was_guest else ""
    print(f"registered {made.name}{kept} on {url}, and signed in here")
    print("one-time recovery codes (each signs in once if you lose the password; shown only now, keep them safe):")
    for code in made.recovery_codes:
        print(f"  {code}")
    return 0

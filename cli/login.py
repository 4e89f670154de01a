"""`kalah login NAME`: sign in to an account on a server (the password asked without echo, or read with
`--password-stdin`; `--recovery-code` signs in with a one-time code and sets a new password)."""

from __future__ import annotations

import argparse

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
from protocol.account_messages import Login, Recover, SignedIn


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah login`."""
    parser.add_argument("name", type=player_name, help="the account's name")
    add_account_server_arg(parser)
    add_password_stdin(parser)
    parser.add_argument("--recovery-code", action="store_true",
                        help="sign in with a one-time recovery code (or the operator's reset code) and choose a new "
                             "password; every other session ends")


def run(args: argparse.Namespace) -> int:
    """Sign in and remember the session (readable by you only)."""
    url = server_of(args)
    secrets = Secrets(args.password_stdin)
    msg: Login | Recover
    if args.recovery_code:
        code = secrets.ask("Recovery code: ", check=False).strip()
        msg = Recover(name=args.name, code=code, new_password=secrets.new_password())
    else:
        msg = Login(name=args.name, password=secrets.ask("Password: "))
    made = exchange(url, lambda ws: ask(ws, msg, SignedIn))
    assert made.session is not None
    save_session(session_file(), url, StoredSession(made.name, made.session_id, made.session))
    print(f"signed in as {made.name} on {url}")
    return 0

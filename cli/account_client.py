"""What `kalah register`, `login`, `logout` and `sessions` share: the server, the password (prompted without echo,
or read from standard input with `--password-stdin`; never a flag), one exchange over the websocket, and the
session file (`client.account_sessions`, readable by its owner only)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from cli.server_args import ENV_SERVER, CommandError, server_url
from cli.stored_games import failure
from client.account_sessions import StoredSession, default_session_file, load_session
from protocol.account_messages import PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH
from protocol.messages import ErrorMessage, Hello, Message, MessageError, ServerMessage, Welcome, decode_server, encode

M = TypeVar("M")


def add_account_server_arg(parser: argparse.ArgumentParser) -> None:
    """Add `--server URL` (default `$KALAH_SERVER`)."""
    parser.add_argument("--server", metavar="URL", type=server_url, default=os.environ.get(ENV_SERVER),
                        help=f"the server ws://host:port or its web page's http://host:port (default: ${ENV_SERVER})")


def add_password_stdin(parser: argparse.ArgumentParser) -> None:
    """Add `--password-stdin`."""
    parser.add_argument("--password-stdin", action="store_true",
                        help="read the password (each one asked for, one a line) from standard input instead of "
                             "asking for it")


def server_of(args: argparse.Namespace) -> str:
    """The server the command talks to; `CommandError` if none is named."""
    if not args.server:
        raise CommandError(f"name the server: --server ws://host:port (or set ${ENV_SERVER})")
    try:
        return server_url(str(args.server))
    except argparse.ArgumentTypeError as exc:
        raise CommandError(f"${ENV_SERVER}: {exc}") from None


def session_file() -> Path:
    """Where the terminal keeps its sessions."""
    return default_session_file()


class Secrets:
    """Asks for passwords and codes: at the terminal without echo, or one a line from standard input."""

    def __init__(self, from_stdin: bool) -> None:
        self.from_stdin = from_stdin

    def ask(self, prompt: str, check: bool = True) -> str:
        """One secret (a password is checked for its length: 8 to 1,024 characters)."""
        if self.from_stdin:
            line = sys.stdin.readline()
            if not line:
                raise CommandError(f"standard input ended before the {prompt.lower().rstrip(': ')} was read")
            text = line.rstrip("\r\n")
        else:
            if not sys.stdin.isatty():
                raise CommandError("no terminal to ask for the password: give it on standard input with "
                                   "--password-stdin")
            text = getpass.getpass(prompt)
        if check and not PASSWORD_MIN_LENGTH <= len(text) <= PASSWORD_MAX_LENGTH:
            raise CommandError(f"a password has {PASSWORD_MIN_LENGTH} to {PASSWORD_MAX_LENGTH} characters; this one "
                               f"has {len(text)}")
        return text

    def new_password(self) -> str:
        """A new password, asked twice at a terminal (once from standard input)."""
        password = self.ask("New password: ")
        if not self.from_stdin and getpass.getpass("The same again: ") != password:
            raise CommandError("the two passwords differ: nothing was changed")
        return password


def exchange(url: str, steps: Callable[[ClientConnection], M]) -> M:
    """Connect to `url` and run `steps`; a failed connection or a refusal is a `CommandError` (status 1)."""
    try:
        with connect(url, open_timeout=10, close_timeout=2) as ws:
            return steps(ws)
    except (OSError, TimeoutError, WebSocketException, MessageError) as exc:
        raise CommandError(f"cannot reach {url}: {failure(exc)}", status=1) from None


def ask(ws: ClientConnection, msg: Message, expected: type[M]) -> M:
    """Send `msg` and read its answer of type `expected`; a refusal is a `CommandError` (status 1)."""
    ws.send(encode(msg))
    answer: ServerMessage = decode_server(ws.recv(timeout=60))
    if isinstance(answer, ErrorMessage):
        raise CommandError(refusal_text(answer), status=1)
    if not isinstance(answer, expected):
        raise CommandError(f"unexpected answer: {answer.type}", status=1)
    return answer


def refusal_text(error: ErrorMessage) -> str:
    """A refusal in one line, with what to do."""
    hints = {"bad_session": " (kalah login NAME signs in again)",
             "sign_in_failed": " (forgot it? kalah login NAME --recovery-code)"}
    return f"{error.code}: {error.message}{hints.get(error.code, '')}"


def hello_with_session(ws: ClientConnection, stored: StoredSession) -> Welcome:
    """Say hello with a stored session."""
    return ask(ws, Hello(name=stored.name, session=stored.session), Welcome)


def stored_session(url: str) -> StoredSession:
    """The session stored for `url`; `CommandError` if this terminal is not signed in there."""
    stored = load_session(session_file(), url)
    if stored is None:
        raise CommandError(f"not signed in on {url}: kalah login NAME --server {url}")
    return stored

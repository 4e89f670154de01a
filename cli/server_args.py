"""How every command names a server (`--server URL`, else `$KALAH_SERVER`) and a local database (`--db PATH`)."""

from __future__ import annotations

import argparse
import os
import urllib.parse
from pathlib import Path

ENV_SERVER = "KALAH_SERVER"


class CommandError(Exception):
    """A mistake in what the user asked for: printed as one line, the command exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


WEB_SCHEMES = {"http": "ws", "https": "wss"}
"""The web page's address of a server, mapped to its websocket's (one port serves both)."""


def server_url(text: str) -> str:
    """A server address `ws://host:port` or `wss://host:port` (argparse type), also as the web page's
    `http://host:port` or `https://host:port`, which becomes the ws or wss address; anything else is refused."""
    parts = urllib.parse.urlsplit(text)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    scheme = WEB_SCHEMES.get(parts.scheme.lower(), parts.scheme)
    if scheme not in ("ws", "wss") or not parts.hostname or not port_ok:
        raise argparse.ArgumentTypeError(f"{text!r} is not a server address ws://host:port (or http://host:port)")
    return urllib.parse.urlunsplit(parts._replace(scheme=scheme)) if scheme != parts.scheme else text


def add_server_arg(parser: argparse.ArgumentParser, without: str) -> None:
    """Add `--server URL`; `without` says what the command does when no server is named."""
    parser.add_argument("--server", metavar="URL", type=server_url, default=None,
                        help=f"the server ws://host:port (default: ${ENV_SERVER}, else {without})")


def add_db_arg(parser: argparse.ArgumentParser, what: str = "the database file") -> None:
    """Add `--db PATH` (the per-user file when not given)."""
    parser.add_argument("--db", metavar="PATH", default=None, help=f"{what} (default: the per-user file)")


def chosen_server(args: argparse.Namespace) -> str | None:
    """The server the flags name, else `$KALAH_SERVER` unless `--db` was given; None: work locally."""
    db = getattr(args, "db", None)
    if args.server and db:
        raise CommandError("give either --server or --db, not both")
    if args.server or db:
        return str(args.server) if args.server else None
    env = os.environ.get(ENV_SERVER)
    if not env:
        return None
    try:
        return server_url(env)
    except argparse.ArgumentTypeError as exc:
        raise CommandError(f"${ENV_SERVER}: {exc}") from None


def refuse_url_argument(text: str | None, expected: bool = True) -> None:
    """A server address given as an argument (where a match id is `expected`, or none): say how to name it."""
    if text is not None and text.startswith(("ws://", "wss://", "http://", "https://")):
        raise CommandError(f"name the server with --server {text} (or set ${ENV_SERVER}), not as an argument")
    if text is not None and not expected:
        raise CommandError(f"unexpected argument {text!r}")


def db_path(value: str | None) -> Path | None:
    """The `--db` path, expanded (None: the per-user file)."""
    return None if value is None else Path(value).expanduser()

"""Flags shared by `kalah play`, `kalah watch` and `kalah replay` (the terminal client's commands)."""

from __future__ import annotations

import argparse
import getpass
import re
from collections.abc import Callable

from pydantic import TypeAdapter, ValidationError

from protocol.wire_base import NAME_MAX_LENGTH, Name, Token

_NAME: TypeAdapter[str] = TypeAdapter(Name)
_TOKEN: TypeAdapter[str] = TypeAdapter(Token)


def default_name() -> str:
    """The login name, cut to what the server accepts as a player name."""
    try:
        raw = getpass.getuser()
    except (KeyError, OSError):
        raw = "player"
    name = re.sub(r"[^A-Za-z0-9_.:-]", "", raw)[:32]
    return name or "player"


def player_name(text: str) -> str:
    """A player name as the server takes it (argparse type); anything else is refused in one line before any
    screen opens or any connection is made."""
    try:
        return _NAME.validate_python(text)
    except ValidationError:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise argparse.ArgumentTypeError(f"{shown!r} is not a player name: 1 to {NAME_MAX_LENGTH} of "
                                         "A-Z a-z 0-9 _ . : -") from None


def player_key(env: str) -> Callable[[str], str]:
    """The argparse type of a player's key given by a flag or by the environment variable `env`: anything but a
    key as the server takes it is refused in one line, without echoing what may be most of a secret."""

    def key(text: str) -> str:
        """A key, or `ArgumentTypeError`."""
        try:
            return _TOKEN.validate_python(text)
        except ValidationError:
            raise argparse.ArgumentTypeError(f"that is not a whole key (16 to 128 of A-Z a-z 0-9 _ -; the flag or "
                                             f"${env}): copy all of it") from None

    return key


def add_client_args(parser: argparse.ArgumentParser) -> None:
    """Add the display and identity flags of the terminal client."""
    g = parser.add_argument_group("client")
    g.add_argument("--name", type=player_name, default=None,
                   help=f"your player name, 1 to {NAME_MAX_LENGTH} of A-Z a-z 0-9 _ . : - (default: your login name)")
    g.add_argument("--light", action="store_true", help="start in the light theme (ctrl+t toggles)")
    g.add_argument("--no-animation", action="store_true", help="do not animate sowings")

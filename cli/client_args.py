"""Flags shared by `kalah play`, `kalah watch` and `kalah replay` (the terminal client's commands)."""

from __future__ import annotations

import argparse
import getpass
import re


def default_name() -> str:
    """The login name, cut to what the server accepts as a player name."""
    try:
        raw = getpass.getuser()
    except (KeyError, OSError):
        raw = "player"
    name = re.sub(r"[^A-Za-z0-9_.:-]", "", raw)[:32]
    return name or "player"


def add_client_args(parser: argparse.ArgumentParser) -> None:
    """Add the display and identity flags of the terminal client."""
    g = parser.add_argument_group("client")
    g.add_argument("--name", default=None, help="your player name (default: your login name)")
    g.add_argument("--light", action="store_true", help="start in the light theme (ctrl+t toggles)")
    g.add_argument("--no-animation", action="store_true", help="do not animate sowings")

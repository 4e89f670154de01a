"""Entry point of the `kalah` command: dispatches to one module per subcommand."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

# subcommand -> (module under cli/, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("cli.serve", "run the game server (websockets, SQLite) until SIGTERM"),
    "record": ("cli.record", "apply a game record and print each position and the result"),
    "solve": ("cli.solve", "the exact value of a position under perfect play, with the best moves"),
    "egdb": ("cli.egdb", "build endgame databases ahead (hosted bots only use databases already built)"),
    "play": ("cli.play", "play in the terminal (no URL: a local server and a game against a bot)"),
    "watch": ("cli.watch", "spectate a live match in the terminal"),
    "replay": ("cli.replay", "step through a stored game in the terminal"),
    "games": ("cli.games", "list stored games from a database file or a server"),
    "export": ("cli.export", "write stored games as text records or NDJSON"),
    "quarantine": ("cli.quarantine", "list the matches a server set aside because they could not be loaded"),
    "ladder": ("cli.ladder", "play every pairing of bots with paired openings and print rated standings"),
    "engine": ("cli.engine", "connect a bot to a KGP server as an outside engine (kalah serve --kgp-port)"),
}


Runners = dict[str, Callable[[argparse.Namespace], int]]


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, Runners]:
    """The parser; a subcommand's module is loaded only if it is `only` (all when None), so help stays light."""
    parser = argparse.ArgumentParser(prog="kalah", description="Kalah Arena: play, serve, solve and study Kalah.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners: Runners = {}
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            module = importlib.import_module(module_name)
            module.configure(sp)
            runners[name] = module.run
    return parser, runners


def _command(argv: Sequence[str]) -> str:
    """The subcommand named on the command line ("" if none)."""
    return next((arg for arg in argv if not arg.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `kalah` command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, runners = build_parser(_command(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return runners[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

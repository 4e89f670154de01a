"""Entry point of the `kalah` command: dispatches to one module per subcommand.

Whatever a command meets, the user sees one line, never a traceback: a usage mistake
(`CommandError`) or an unexpected failure is printed as `kalah COMMAND: reason`; Ctrl-C ends
with status 130 and a closed standard output (`kalah games | head`) with 141, quietly.
`KALAH_DEBUG=1` shows the traceback of an unexpected failure.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from cli.config_file import CONFIG_DEST, apply_config
from cli.server_args import CommandError

# subcommand -> (module under cli/, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("cli.serve", "run the game server (websockets, SQLite) until SIGTERM or Ctrl-C"),
    "record": ("cli.record", "apply game records and print each position and the result"),
    "solve": ("cli.solve", "the exact value of a position under perfect play, with the best moves"),
    "egdb": ("cli.egdb", "build endgame databases ahead, or convert old ones (hosted bots only use databases built)"),
    "book": ("cli.book", "prove once the positions a bot cannot prove within a move: books of proved values"),
    "play": ("cli.play", "play in the terminal (no server named: a local server and a game against a bot)"),
    "watch": ("cli.watch", "spectate a live match in the terminal"),
    "replay": ("cli.replay", "step through a stored game in the terminal"),
    "review": ("cli.review", "each move of a finished game against perfect play: seeds lost, marks, summaries"),
    "explore": ("cli.explore", "the moves played from a position in stored games, with the solver's values"),
    "puzzle": ("cli.puzzle", "solve puzzles with proved answers in the terminal; `kalah puzzle build` makes them"),
    "puzzles": ("cli.puzzles", "list the stored puzzles with their answers (--json)"),
    "games": ("cli.games", "list stored games from a database file or a server"),
    "export": ("cli.export", "write stored games as text records or NDJSON"),
    "quarantine": ("cli.quarantine", "list the matches a server set aside because they could not be loaded"),
    "backup": ("cli.backup", "copy a SQLite store while the server plays (consistent, integrity-checked)"),
    "register": ("cli.register", "make an account on a server (your guest identity of that name becomes it)"),
    "login": ("cli.login", "sign in to an account on a server (the password is asked for, never a flag)"),
    "logout": ("cli.logout", "end this terminal's session on a server"),
    "sessions": ("cli.sessions", "list your account's sessions; end one (--revoke ID) or all (--all)"),
    "admin": ("cli.admin", "the operator's moderation of a running server: ban, abort, rename, close, online"),
    "restore": ("cli.restore", "put a backup back as a SQLite store (refuses a newer schema or a live database)"),
    "ladder": ("cli.ladder", "play every pairing of bots with paired openings and print rated standings"),
    "bridge": ("cli.bridge", "enter a local KGP engine (stdin/stdout) in a remote arena, game after game"),
    "engine": ("cli.engine", "connect a bot to a KGP server as an outside engine (kalah serve --kgp-port)"),
    "event": ("cli.event", "events (arenas, Swiss, round-robins) on a server: create, list, show, results"),
}

SIGINT_STATUS = 130
SIGPIPE_STATUS = 141

Runners = dict[str, Callable[[argparse.Namespace], int]]


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that ends each option's text with its default, unless the text already names it or there is none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        shown = action.option_strings and not any(action.default is x for x in (None, False, argparse.SUPPRESS, ""))
        if not shown or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


class KalahParser(argparse.ArgumentParser):
    """An argument parser whose help shows defaults (its subcommands' parsers are of this class too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A usage mistake in one line, pointing at the help (argparse prints the whole usage first)."""
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("kalah-arena")
    except PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked (the metadata lookup costs a command's start
    tens of milliseconds)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"kalah {version()}")
        parser.exit()


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, Runners]:
    """The parser; a subcommand's module is loaded only if it is `only` (all when None), so help stays light."""
    parser = KalahParser(prog="kalah", description="Kalah Arena: play, serve, solve and study Kalah.")
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
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


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `kalah` command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command(argv)
    prefix = f"kalah {command}" if command in SUBCOMMANDS else "kalah"
    try:
        parser, runners = build_parser(command)
        try:
            args, extra = parser.parse_known_args(argv)
        except SystemExit as exc:  # --help, --version, or a usage error argparse has already explained
            return exc.code if isinstance(exc.code, int) else 0
        if extra:
            raise CommandError(f"unrecognized arguments: {' '.join(extra)} (see {prefix} --help)")
        if args.command is None:
            parser.print_help()
            return 2
        if getattr(args, CONFIG_DEST, None) is not None:  # flags from a file, the command line's winning
            module = importlib.import_module(SUBCOMMANDS[args.command][0])
            apply_config(args, module.configure, argv[argv.index(args.command) + 1:], args.command)
        status = runners[args.command](args)
        sys.stdout.flush()
        return status
    except CommandError as exc:
        print(f"{prefix}: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        start = "\n" if sys.stderr.isatty() else ""  # after the terminal's ^C
        print(f"{start}{prefix}: interrupted", file=sys.stderr)
        return SIGINT_STATUS
    except BrokenPipeError:  # the reader went away (`kalah games | head`): nothing more to say
        _quiet_stdout()
        return SIGPIPE_STATUS
    except Exception as exc:
        if os.environ.get("KALAH_DEBUG"):
            raise
        print(f"{prefix}: failed: {type(exc).__name__}: {exc} (KALAH_DEBUG=1 shows where)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

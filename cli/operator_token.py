"""How a command takes the operator's secret: from a file (`--operator-token-file`) or `$KALAH_OPERATOR_TOKEN`,
which no other user of the machine can read, or (warned against) as `--operator-token` on the command line, which
every local user sees in the process list (`ps`, `/proc/PID/cmdline`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cli.server_args import CommandError

ENV_OPERATOR_TOKEN = "KALAH_OPERATOR_TOKEN"


def add_operator_token_args(parser: argparse.ArgumentParser, what: str) -> None:
    """Add `--operator-token-file FILE` and `--operator-token SECRET`; `what` says what the secret does here."""
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--operator-token-file", metavar="FILE", default=None,
                       help=f"read {what} from FILE (its first line; default: ${ENV_OPERATOR_TOKEN})")
    given.add_argument("--operator-token", metavar="SECRET", default=None,
                       help="the same secret on the command line, where every local user can read it in the "
                            "process list: prefer --operator-token-file or $KALAH_OPERATOR_TOKEN")


def on_command_line(flag: str) -> bool:
    """Whether this process's command line (what `ps` shows every local user) holds `flag` (not a config file)."""
    return any(arg == flag or arg.startswith(f"{flag}=") for arg in sys.argv[1:])


def operator_token(args: argparse.Namespace, command: str) -> str | None:
    """The operator token the flags (a config file's included, or the environment) give, None without one; one line
    on standard error when it is on the process's command line; a file that cannot be read or is empty is a
    `CommandError`."""
    if args.operator_token is not None:
        if on_command_line("--operator-token"):
            print(f"kalah {command}: warning: --operator-token shows the secret to every user of this machine in the "
                  f"process list: use --operator-token-file FILE or ${ENV_OPERATOR_TOKEN}", file=sys.stderr,
                  flush=True)
        return str(args.operator_token) or None
    if args.operator_token_file is not None:
        path = Path(args.operator_token_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
            raise CommandError(f"cannot read the operator token from {path}: {reason.lower()}") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise CommandError(f"the operator token file {path} is empty: write the secret on its first line")
        return token
    return os.environ.get(ENV_OPERATOR_TOKEN) or None

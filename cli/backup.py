"""`kalah backup`: a consistent copy of a SQLite store, taken while the server plays."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.server_args import CommandError
from server.storage import default_db_path, describe, is_postgres, sqlite_path
from server.storage.backup import BackupError, backup


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah backup`."""
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite file to copy (default: the per-user file)")
    parser.add_argument("dest", metavar="DEST", type=Path,
                        help="the new file to write, or a directory to put a timestamped file in")


def run(args: argparse.Namespace) -> int:
    """Copy the database and print what the copy holds."""
    db = args.db or default_db_path()
    if is_postgres(db):
        raise CommandError(f"{describe(db)} is PostgreSQL: back it up with pg_dump (see docs/operations.md)", status=2)
    try:
        target, summary = backup(sqlite_path(db), args.dest)
    except BackupError as exc:
        raise CommandError(str(exc), status=1) from None
    print(f"backed up {describe(db)} to {target}: schema {summary.version}, {summary.matches} matches, "
          f"{summary.actions} actions, integrity ok ({summary.seconds:.2f} s)")
    return 0

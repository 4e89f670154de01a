"""`kalah restore`: put a backup back as a server's SQLite store (the server stopped)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.server_args import CommandError
from server.storage import default_db_path, describe, is_postgres, sqlite_path
from server.storage.backup import BackupError, restore


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah restore`."""
    parser.add_argument("backup", metavar="BACKUP", type=Path, help="the file `kalah backup` wrote")
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite file to restore into (default: the per-user file)")
    parser.add_argument("--replace", action="store_true",
                        help="write over an existing database (never one a running server has open)")


def run(args: argparse.Namespace) -> int:
    """Restore the backup and print what it holds."""
    db = args.db or default_db_path()
    if is_postgres(db):
        raise CommandError(f"{describe(db)} is PostgreSQL: restore it with pg_restore (see docs/operations.md)",
                           status=2)
    try:
        summary = restore(args.backup, sqlite_path(db), replace=args.replace)
    except BackupError as exc:
        raise CommandError(str(exc), status=1) from None
    print(f"restored {args.backup} into {describe(db)}: schema {summary.version}, {summary.matches} matches, "
          f"{summary.actions} actions, integrity ok ({summary.seconds:.2f} s); start kalah serve on it")
    return 0

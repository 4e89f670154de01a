"""`kalah backup`: a consistent copy of a SQLite store, taken while the server plays."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.number_args import whole
from cli.server_args import CommandError
from server.storage import default_db_path, describe, is_postgres, sqlite_path
from server.storage.backup import BackupError, backup, prune


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah backup`."""
    parser.add_argument("--db", default=None, metavar="PATH",
                        help="the SQLite file to copy (default: the per-user file)")
    parser.add_argument("--keep", type=whole(1), default=None, metavar="N",
                        help="with DEST a directory: afterwards remove all but the newest N timestamped backups in it "
                             "(a daily timer keeps N days)")
    parser.add_argument("dest", metavar="DEST", type=Path,
                        help="the new file to write, or a directory to put a timestamped file in")


def run(args: argparse.Namespace) -> int:
    """Copy the database and print what the copy holds."""
    db = args.db or default_db_path()
    if is_postgres(db):
        raise CommandError(f"{describe(db)} is PostgreSQL: back it up with pg_dump (see docs/operations.md)", status=2)
    if args.keep is not None and not args.dest.is_dir():
        raise CommandError(f"--keep needs DEST to be a directory of timestamped backups: {args.dest} is not one",
                           status=2)
    try:
        target, summary = backup(sqlite_path(db), args.dest)
    except BackupError as exc:
        raise CommandError(str(exc), status=1) from None
    print(f"backed up {describe(db)} to {target}: schema {summary.version}, {summary.matches} matches, "
          f"{summary.actions} actions, integrity ok ({summary.seconds:.2f} s)")
    if args.keep is not None:
        removed = prune(args.dest, args.keep)
        if removed:
            print(f"removed {len(removed)} older backup{'s' * (len(removed) != 1)}, keeping the newest {args.keep}: "
                  + ", ".join(path.name for path in removed))
    return 0

"""`kalah quarantine`: the matches a server set aside because they could not be loaded back."""

from __future__ import annotations

import argparse
import sys

from server.storage import StorageError, default_db_path, describe, read_offline


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah quarantine`."""
    parser.add_argument("--db", default=None, metavar="PATH|URL",
                        help="database file or postgresql:// URL (default: the per-user file)")


def run(args: argparse.Namespace) -> int:
    """Print one line per quarantined match: id, when, and why it could not be loaded."""
    db = args.db or default_db_path()
    try:
        found = read_offline(db, lambda reads: reads.list_quarantined())
    except (FileNotFoundError, StorageError) as exc:
        print(f"kalah quarantine: {exc}", file=sys.stderr)
        return 2
    if not found:
        print(f"no quarantined matches in {describe(db)}")
        return 0
    for q in found:
        print(f"{q.match_id:<16} {q.at:%Y-%m-%d %H:%M}  {q.reason}")
    print(f"{len(found)} quarantined: they stay in the database, never loaded; fix or delete the rows by hand")
    return 0

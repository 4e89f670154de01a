"""`kalah quarantine`: the matches a server set aside because they could not be loaded back."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from server.storage import default_db_path, list_quarantined


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah quarantine`."""
    parser.add_argument("--db", default=None, help="database file (default: the per-user file)")


def run(args: argparse.Namespace) -> int:
    """Print one line per quarantined match: id, when, and why it could not be loaded."""
    db = Path(args.db).expanduser() if args.db else default_db_path()
    try:
        found = list_quarantined(db)
    except FileNotFoundError as exc:
        print(f"kalah quarantine: {exc}", file=sys.stderr)
        return 2
    if not found:
        print(f"no quarantined matches in {db}")
        return 0
    for q in found:
        print(f"{q.match_id:<16} {q.at:%Y-%m-%d %H:%M}  {q.reason}")
    print(f"{len(found)} quarantined: they stay in the database, never loaded; fix or delete the rows by hand")
    return 0

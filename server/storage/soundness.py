"""What a SQLite file must pass before the server listens on it: SQLite's quick integrity check, and a real write.

Both run at start, so that a damaged file or one this process cannot write is refused in one line then,
rather than served until the first hello fails.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from server.storage.errors import StorageError

PROBLEMS_SHOWN = 3
"""How many of `PRAGMA quick_check`'s findings the refusal names."""
WRITE_PROBE = "INSERT INTO guards (key) VALUES ('kalah: can this file be written?')"
"""The write tried at start and rolled back: it needs what every real write needs (a writable file, WAL and locks)."""


def is_read_only(exc: BaseException) -> bool:
    """Whether a SQLite error says the file cannot be written (read-only, immutable, or opened read-only)."""
    return isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_READONLY


def read_only_error(path: Path, exc: BaseException) -> StorageError:
    """The one-line refusal of a database file this server cannot write."""
    return StorageError(f"cannot write the arena database {path} ({exc}): make the file and its folder writable "
                        "by the user running kalah serve, or name another file with --db")


def check_sound(db: sqlite3.Connection, path: Path) -> None:
    """Raise `StorageError` naming the first problems unless `PRAGMA quick_check` finds the file sound."""
    try:
        rows = [str(row[0]) for row in db.execute(f"PRAGMA quick_check({PROBLEMS_SHOWN})").fetchall()]
    except sqlite3.DatabaseError as exc:  # too damaged to check at all
        if is_read_only(exc):
            raise
        rows = [str(exc)]
    if rows == ["ok"]:
        return
    findings = [line for row in rows for line in row.splitlines() if line and not line.startswith("***")]
    raise StorageError(f"the arena database {path} fails SQLite's integrity check ({'; '.join(findings)}): "
                       f"restore a backup (kalah restore BACKUP --db {path} --replace) or name another file with --db")


def check_writable(db: sqlite3.Connection, path: Path) -> None:
    """Write a row in a transaction that is rolled back; `StorageError` naming the fix if the file refuses it."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(WRITE_PROBE)
    except sqlite3.Error as exc:
        if is_read_only(exc):
            raise read_only_error(path, exc) from None
        raise
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")

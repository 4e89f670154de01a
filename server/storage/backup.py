"""Copies of a SQLite store taken while a server plays, and putting one back (SQLite's online backup API).

A backup copies the whole database inside one read transaction of the source: in WAL mode the
server's writer goes on committing beside it, and the copy is the database as it was when the
read began (every commit acknowledged before then is in it, nothing committed after). The copy
is written to a `.partial` file, checked with `integrity_check` and only then renamed into place.

A restore refuses a copy that is damaged, is not an arena database, or has a schema newer than
this version knows; it refuses to write over a database a server has open (it takes SQLite's
exclusive lock first, and holds it while it writes) and over any existing database unless asked.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from server.storage.migrations_sqlite import SQLITE_MIGRATIONS

BUSY_TIMEOUT_S = 10.0


class BackupError(Exception):
    """A backup or restore that was refused or failed; the message says why and what to do."""


@dataclass(frozen=True)
class Summary:
    """What a database copy holds: its schema version and how many matches and actions."""

    version: int
    matches: int
    actions: int
    seconds: float = 0.0


def latest_version() -> int:
    """The newest schema version this code knows."""
    return SQLITE_MIGRATIONS[-1][0]


def summarize(db: sqlite3.Connection, where: str) -> Summary:
    """The schema version and row counts of an arena database; raises `BackupError` if it is not one."""
    try:
        version = int(db.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])
        matches = int(db.execute("SELECT count(*) FROM matches").fetchone()[0])
        actions = int(db.execute("SELECT count(*) FROM actions").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{where} is not a kalah arena database ({exc})") from None
    return Summary(version, matches, actions)


def check_integrity(db: sqlite3.Connection, where: str) -> None:
    """Raise `BackupError` unless SQLite's `integrity_check` finds `db` sound."""
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{where} is damaged or not a SQLite database ({exc})") from None
    if rows != ["ok"]:
        raise BackupError(f"{where} fails SQLite's integrity check: {'; '.join(rows[:3])}")


def _open_existing(path: Path) -> sqlite3.Connection:
    """Open an existing SQLite file for reading and writing (never creating one)."""
    if not path.is_file():
        raise BackupError(f"{path}: no such database file")
    try:
        return sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise BackupError(f"{path}: cannot open ({exc})") from None


TIMESTAMPED = re.compile(r"arena-\d{8}T\d{6}Z\.sqlite3")
"""The name of a backup written into a directory (`arena-20261126T143000Z.sqlite3`): what `prune` may remove."""


def prune(folder: Path, keep: int) -> list[Path]:
    """Remove all but the newest `keep` timestamped backups in `folder` (other files are left alone); the removed."""
    made = sorted(path for path in folder.iterdir() if TIMESTAMPED.fullmatch(path.name) and path.is_file())
    old = made[:max(0, len(made) - keep)]
    for path in old:
        path.unlink(missing_ok=True)
    return old


def backup_target(dest: Path) -> Path:
    """The file a backup writes: `dest` itself, or a new timestamped file when `dest` is a directory."""
    if dest.is_dir():
        return dest / time.strftime("arena-%Y%m%dT%H%M%SZ.sqlite3", time.gmtime())
    return dest


def backup(source: Path, dest: Path) -> tuple[Path, Summary]:
    """Copy the live database `source` to `dest` (a new file, or a directory to put one in); returns it."""
    target = backup_target(dest)
    if target.exists():
        raise BackupError(f"{target} exists: name a new file (a backup never overwrites one)")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent}: no such directory")
    partial = target.with_name(target.name + ".partial")
    started = time.perf_counter()
    src = _open_existing(source)
    try:
        summarize(src, str(source))  # an arena database, before anything is written
        out = sqlite3.connect(partial, isolation_level=None)
        try:
            src.backup(out)  # every page in one step: one read transaction, one consistent moment
            check_integrity(out, str(partial))
            summary = summarize(out, str(partial))
        finally:
            out.close()
    except sqlite3.Error as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"backup of {source} failed: {exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    partial.rename(target)
    return target, Summary(summary.version, summary.matches, summary.actions, time.perf_counter() - started)


def _lock_exclusively(path: Path) -> sqlite3.Connection:
    """A connection to `path` that holds SQLite's exclusive lock until closed; refused while a server has it open."""
    db = _open_existing(path)
    try:
        db.execute("PRAGMA busy_timeout=0")
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("COMMIT")  # the lock stays held in exclusive locking mode
    except sqlite3.OperationalError:
        db.close()
        raise BackupError(f"{path} is in use (a running server has it open): stop the server first") from None
    return db


def restore(source: Path, dest: Path, replace: bool = False) -> Summary:
    """Write the backup `source` into the database `dest`; refuses a newer schema, a live or (unless `replace`) any
    existing `dest`."""
    started = time.perf_counter()
    src = _open_existing(source)
    try:
        check_integrity(src, str(source))
        summary = summarize(src, str(source))
        if summary.version > latest_version():
            raise BackupError(f"{source} is at schema version {summary.version}, newer than this kalah-arena knows "
                              f"({latest_version()}): restore it with a newer kalah-arena")
        if summary.version < 1:
            raise BackupError(f"{source} is not a kalah arena database (no schema version)")
        if dest.exists() and not replace:
            raise BackupError(f"{dest} exists: add --replace to write the backup over it (its data is lost)")
        if dest.exists():
            out = _lock_exclusively(dest)
        else:
            if not dest.parent.is_dir():
                raise BackupError(f"{dest.parent}: no such directory")
            out = sqlite3.connect(dest, isolation_level=None)
        try:
            src.backup(out)
            check_integrity(out, str(dest))
        finally:
            out.close()
    except sqlite3.Error as exc:
        raise BackupError(f"restore of {source} into {dest} failed: {exc}") from None
    finally:
        src.close()
    return Summary(summary.version, summary.matches, summary.actions, time.perf_counter() - started)

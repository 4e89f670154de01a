"""Reading stored games back for replay and export, without a running server (plain sqlite3)."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored match: who opened as South and North, its record, and how it ended."""

    match_id: str
    variant: str
    south: str | None
    north: str | None
    status: str
    record: str
    ply: int
    result: int | None
    winner: str | None
    reason: str | None
    created_at: datetime
    finished_at: datetime | None


_SELECT = """
SELECT m.id, m.variant, p0.name, p1.name, m.status, m.result, m.winner_seat, m.reason,
       m.created_at, m.finished_at,
       (SELECT group_concat(action, ' ') FROM (SELECT action FROM actions a WHERE a.match_id = m.id
        ORDER BY a.ply)) AS record,
       (SELECT count(*) FROM actions a WHERE a.match_id = m.id) AS ply
FROM matches m LEFT JOIN players p0 ON p0.id = m.seat0 LEFT JOIN players p1 ON p1.id = m.seat1
"""


def _stamp(value: float | None) -> datetime | None:
    """A stored UNIX time as an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _game(row: sqlite3.Row | tuple[object, ...]) -> StoredGame:
    """A `StoredGame` from one row of `_SELECT`."""
    (mid, variant, south, north, status, result, winner_seat, reason, created, finished, record, ply) = row
    names = (south, north)
    winner = None if winner_seat is None else names[int(str(winner_seat))]
    created_at = _stamp(float(str(created)))
    assert created_at is not None
    return StoredGame(str(mid), str(variant), None if south is None else str(south),
                      None if north is None else str(north), str(status), str(record or ""),
                      int(str(ply)), None if result is None else int(str(result)),
                      None if winner is None else str(winner), None if reason is None else str(reason),
                      created_at, _stamp(None if finished is None else float(str(finished))))


def _connect(db_path: str | Path) -> sqlite3.Connection:
    """A read-only connection to an existing database."""
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"no arena database at {path}")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)


def list_games(db_path: str | Path, limit: int = 50, offset: int = 0, status: str | None = "finished",
               player: str | None = None, variant: str | None = None) -> list[StoredGame]:
    """Stored games, newest first, optionally only of one status, player name or variant text."""
    clauses: list[str] = []
    params: list[object] = []
    if status is not None:
        clauses.append("m.status = ?")
        params.append(status)
    if player is not None:
        clauses.append("(p0.name = ? OR p1.name = ?)")
        params += [player, player]
    if variant is not None:
        clauses.append("m.variant = ?")
        params.append(variant)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    with closing(_connect(db_path)) as db:
        rows = db.execute(f"{_SELECT} {where} ORDER BY m.created_at DESC LIMIT ? OFFSET ?",
                          (*params, limit, offset)).fetchall()
    return [game for game in map(_readable, rows) if game is not None]


def _readable(row: sqlite3.Row | tuple[object, ...]) -> StoredGame | None:
    """The stored game of a row, or None if the row cannot be read (it is skipped, not fatal)."""
    try:
        return _game(row)
    except (TypeError, ValueError, IndexError, AssertionError, OverflowError):
        return None


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A match set aside because it could not be loaded: when, and why."""

    match_id: str
    reason: str
    at: datetime


def list_quarantined(db_path: str | Path) -> list[Quarantined]:
    """Every quarantined match, oldest first."""
    with closing(_connect(db_path)) as db:
        try:
            rows = db.execute("SELECT match_id, reason, at FROM quarantine ORDER BY at").fetchall()
        except sqlite3.OperationalError:  # a database from before quarantine existed
            return []
    return [Quarantined(str(mid), str(reason), datetime.fromtimestamp(float(at), UTC)) for mid, reason, at in rows]


def fetch_game(db_path: str | Path, match_id: str) -> StoredGame | None:
    """One stored game by id, or None."""
    with closing(_connect(db_path)) as db:
        row = db.execute(f"{_SELECT} WHERE m.id = ?", (match_id,)).fetchone()
    return None if row is None else _readable(row)


async def alist_games(db_path: str | Path, limit: int = 50, offset: int = 0, status: str | None = "finished",
                      player: str | None = None, variant: str | None = None) -> list[StoredGame]:
    """`list_games` off the event loop."""
    return await asyncio.to_thread(list_games, db_path, limit, offset, status, player, variant)


async def afetch_game(db_path: str | Path, match_id: str) -> StoredGame | None:
    """`fetch_game` off the event loop."""
    return await asyncio.to_thread(fetch_game, db_path, match_id)

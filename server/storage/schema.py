"""The SQLite schema of the arena, its pragmas, and the default database location."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "kalah-arena"

SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT,
    bot TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    rated INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL,
    seat0 TEXT REFERENCES players(id),
    seat1 TEXT REFERENCES players(id),
    creator_seat INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    finished_at REAL,
    result INTEGER,
    winner_seat INTEGER,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS matches_by_status ON matches(status, created_at);
CREATE TABLE IF NOT EXISTS actions (
    match_id TEXT NOT NULL REFERENCES matches(id),
    ply INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    seat0_ms INTEGER NOT NULL,
    seat1_ms INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (match_id, ply)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ratings (
    player_id TEXT PRIMARY KEY REFERENCES players(id),
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS quarantine (
    match_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""


def pragmas(synchronous: str = "FULL") -> list[str]:
    """Pragmas for the server's writing connection: WAL, durable commits, a busy timeout."""
    if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
        raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}")
    return ["PRAGMA journal_mode=WAL", f"PRAGMA synchronous={synchronous.upper()}",
            "PRAGMA busy_timeout=5000", "PRAGMA foreign_keys=OFF"]


def default_db_path() -> Path:
    """The per-user database file: `<user data dir>/kalah-arena/arena.sqlite3` (platformdirs)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "arena.sqlite3"

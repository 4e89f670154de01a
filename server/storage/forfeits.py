"""Why engines forfeited, as stored with the end of each match they lost so (`engine_forfeits`, SQLite files)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Forfeit:
    """Why the engine in `seat` lost `match_id` by forfeit (an illegal move, no pong, a lost connection...)."""

    match_id: str
    seat: int
    player_id: str
    detail: str


def forfeits(db_path: Path, match_id: str | None = None) -> list[Forfeit]:
    """The stored forfeits (of one match, or all), oldest first; none when no gateway ever ran on the database."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5.0) as db:
        try:
            rows = db.execute("SELECT match_id, seat, player_id, detail FROM engine_forfeits"
                              " WHERE ?1 IS NULL OR match_id = ?1 ORDER BY at", (match_id,)).fetchall()
        except sqlite3.OperationalError:
            rows = []
    db.close()
    return [Forfeit(r[0], r[1], r[2], r[3]) for r in rows]

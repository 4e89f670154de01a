"""Reading stored games back for replay, export and standings: the reads every backend serves.

`GameReads` is what the router and the command line ask of any database. The SQL is written
once with `?` placeholders (`numbered` turns them into PostgreSQL's `$n`); only the record's
aggregate differs between dialects. The plain-sqlite3 functions read a database file without a
running server or an event loop.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from protocol.outcome import seat_score
from server.storage.explore import EXPLORED, PLAYER_ID
from server.storage.reviews import REVIEW

Dialect = Literal["sqlite", "postgres"]
RatedResult = tuple[str, str, float, str, str]
"""(seat 0 id, seat 1 id, seat 0's score, seat 0 name, seat 1 name) of a finished rated game."""


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
    detail: str | None = None
    """Why an engine forfeited the game (`engine exited with status 3 ...`), if it did."""


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A match set aside because it could not be loaded: when, and why."""

    match_id: str
    reason: str
    at: datetime


_RECORD = {
    "sqlite": "(SELECT group_concat(action, ' ') FROM (SELECT action FROM actions a WHERE a.match_id = m.id"
              " ORDER BY a.ply))",
    "postgres": "(SELECT string_agg(a.action, ' ' ORDER BY a.ply) FROM actions a WHERE a.match_id = m.id)",
}


def select_games(dialect: Dialect) -> str:
    """The SELECT of stored games (without WHERE) in `dialect`: one row per match, `_game` reads it."""
    return f"""
SELECT m.id, m.variant, p0.name, p1.name, m.status, m.result, m.winner_seat, m.reason,
       m.created_at, m.finished_at, {_RECORD[dialect]} AS record,
       (SELECT count(*) FROM actions a WHERE a.match_id = m.id) AS ply,
       (SELECT f.detail FROM engine_forfeits f WHERE f.match_id = m.id) AS detail
FROM matches m LEFT JOIN players p0 ON p0.id = m.seat0 LEFT JOIN players p1 ON p1.id = m.seat1
"""


def games_query(dialect: Dialect, limit: int, offset: int, status: str | None, player: str | None,
                variant: str | None) -> tuple[str, list[object]]:
    """The query listing stored games newest first with its filters, and its parameters (`?` placeholders)."""
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
    return f"{select_games(dialect)} {where} ORDER BY m.created_at DESC LIMIT ? OFFSET ?", [*params, limit, offset]


QUARANTINE_LIST = "SELECT match_id, reason, at FROM quarantine ORDER BY at"
_PLAYED_IN_SEAT = """
SELECT 1 FROM matches m
WHERE m.{seat} = ? AND m.status IN ('live', 'finished')
  AND (SELECT count(*) FROM actions a WHERE a.match_id = m.id) >= ?"""
PLAYED = f"""{_PLAYED_IN_SEAT.format(seat="seat0")}
UNION ALL{_PLAYED_IN_SEAT.format(seat="seat1")}
LIMIT 1
"""
"""Whether a player holds a seat in a live or finished match of at least so many plies (player, plies, player,
plies): each seat apart, so that each is read from its index (`matches_by_seat0/1`) rather than every finished
match from the status index."""
RATED_RESULTS = """
SELECT m.seat0, m.seat1, m.winner_seat, p0.name, p1.name
FROM matches m JOIN players p0 ON p0.id = m.seat0 JOIN players p1 ON p1.id = m.seat1
WHERE m.status = 'finished' AND m.rated
ORDER BY m.finished_at, m.id
"""


def numbered(sql: str) -> str:
    """`sql` with its `?` placeholders numbered for PostgreSQL (`$1`, `$2`, ...)."""
    count = 0

    def next_number(_: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"${count}"

    return re.sub(r"\?", next_number, sql)


def _stamp(value: float | None) -> datetime | None:
    """A stored UNIX time as an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _game(row: Sequence[object]) -> StoredGame:
    """A `StoredGame` from one row of `select_games`."""
    (mid, variant, south, north, status, result, winner_seat, reason, created, finished, record, ply, detail) = row
    names = (south, north)
    winner = None if winner_seat is None else names[int(str(winner_seat))]
    created_at = _stamp(float(str(created)))
    assert created_at is not None
    return StoredGame(str(mid), str(variant), None if south is None else str(south),
                      None if north is None else str(north), str(status), str(record or ""),
                      int(str(ply)), None if result is None else int(str(result)),
                      None if winner is None else str(winner), None if reason is None else str(reason),
                      created_at, _stamp(None if finished is None else float(str(finished))),
                      None if detail is None else str(detail))


def readable(row: Sequence[object]) -> StoredGame | None:
    """The stored game of a row, or None if the row cannot be read (it is skipped, not fatal)."""
    try:
        return _game(row)
    except (TypeError, ValueError, IndexError, AssertionError, OverflowError):
        return None


def quarantined_of(rows: Iterable[Sequence[object]]) -> list[Quarantined]:
    """`Quarantined` values from rows of `QUARANTINE_LIST`."""
    return [Quarantined(str(mid), str(reason), datetime.fromtimestamp(float(str(at)), UTC)) for mid, reason, at in rows]


def results_of(rows: Iterable[Sequence[object]]) -> list[RatedResult]:
    """Rated results from rows of `RATED_RESULTS`: seat 0's score from the winner seat."""
    out = []
    for seat0, seat1, winner, name0, name1 in rows:
        score = seat_score(None if winner is None else int(str(winner)))
        out.append((str(seat0), str(seat1), score, str(name0), str(name1)))
    return out


class GameReads(ABC):
    """The stored-game reads of a database, whatever its backend: listings, one game, quarantine, results."""

    @abstractmethod
    async def list_games(self, limit: int = 50, offset: int = 0, status: str | None = "finished",
                         player: str | None = None, variant: str | None = None) -> list[StoredGame]:
        """Stored games, newest first, optionally only of one status, player name or variant text."""

    @abstractmethod
    async def fetch_game(self, match_id: str) -> StoredGame | None:
        """One stored game by id, or None (also for a row that cannot be read)."""

    @abstractmethod
    async def list_quarantined(self) -> list[Quarantined]:
        """Every quarantined match, oldest first."""

    @abstractmethod
    async def rated_results(self) -> list[RatedResult]:
        """Every finished rated game in the order it finished."""

    @abstractmethod
    async def played(self, player_id: str, plies: int) -> bool:
        """Whether `player_id` holds a seat in a live or finished match of at least `plies` plies."""

    @abstractmethod
    async def fetch_review(self, match_id: str) -> str | None:
        """The stored review of a match (its `game_review` JSON), or None."""

    @abstractmethod
    async def explored(self, key: int, player_key: str | None) -> list[tuple[object, ...]]:
        """The opening explorer's rows of a position (`EXPLORED`): of every game, or of the games of the player
        holding a name's canonical form (none if no one holds it, or the database has no index)."""


# --- SQLite, by file path, without an event loop ---------------------------------------------


def _connect(db_path: str | Path) -> sqlite3.Connection:
    """A read-only connection to an existing database."""
    path = Path(db_path)
    if not path.exists():
        raise FileNotFoundError(f"no arena database at {path}: nothing was stored there yet (`kalah play` or "
                                "`kalah serve` makes it), or name another with --db")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)


def list_games(db_path: str | Path, limit: int = 50, offset: int = 0, status: str | None = "finished",
               player: str | None = None, variant: str | None = None) -> list[StoredGame]:
    """Stored games of a database file, newest first, optionally only of one status, player name or variant."""
    sql, params = games_query("sqlite", limit, offset, status, player, variant)
    with closing(_connect(db_path)) as db:
        rows = db.execute(sql, params).fetchall()
    return [game for game in map(readable, rows) if game is not None]


def fetch_game(db_path: str | Path, match_id: str) -> StoredGame | None:
    """One stored game of a database file by id, or None."""
    with closing(_connect(db_path)) as db:
        row = db.execute(f"{select_games('sqlite')} WHERE m.id = ?", (match_id,)).fetchone()
    return None if row is None else readable(row)


def list_quarantined(db_path: str | Path) -> list[Quarantined]:
    """Every quarantined match of a database file, oldest first."""
    with closing(_connect(db_path)) as db:
        try:
            rows = db.execute(QUARANTINE_LIST).fetchall()
        except sqlite3.OperationalError:  # a database from before quarantine existed
            return []
    return quarantined_of(rows)


def played(db_path: str | Path, player_id: str, plies: int) -> bool:
    """Whether `player_id` holds a seat in a live or finished match of at least `plies` plies (a database file)."""
    with closing(_connect(db_path)) as db:
        return db.execute(PLAYED, (player_id, plies, player_id, plies)).fetchone() is not None


def rated_results(db_path: str | Path) -> list[RatedResult]:
    """Every finished rated game of a database file in order."""
    with closing(_connect(db_path)) as db:
        rows = db.execute(RATED_RESULTS).fetchall()
    return results_of(rows)


def fetch_review(db_path: str | Path, match_id: str) -> str | None:
    """The stored review of a match in a database file (its `game_review` JSON), or None."""
    with closing(_connect(db_path)) as db:
        try:
            row = db.execute(REVIEW, (match_id,)).fetchone()
        except sqlite3.OperationalError:  # a database from before reviews were stored
            return None
    return None if row is None else str(row[0])


def explored(db_path: str | Path, key: int, player_key: str | None) -> list[tuple[object, ...]]:
    """The opening explorer's rows of a position in a database file (see `GameReads.explored`)."""
    with closing(_connect(db_path)) as db:
        try:
            player = ""
            if player_key is not None:
                found = db.execute(PLAYER_ID, (player_key,)).fetchone()
                if found is None:
                    return []
                player = str(found[0])
            return [tuple(row) for row in db.execute(EXPLORED, (key, player)).fetchall()]
        except sqlite3.OperationalError:  # a database from before the index
            return []


class SQLiteReads(GameReads):
    """The stored-game reads of a SQLite file, each on its own read-only connection off the event loop."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def list_games(self, limit: int = 50, offset: int = 0, status: str | None = "finished",
                         player: str | None = None, variant: str | None = None) -> list[StoredGame]:
        """Stored games, newest first, optionally only of one status, player name or variant text."""
        return await asyncio.to_thread(list_games, self.path, limit, offset, status, player, variant)

    async def fetch_game(self, match_id: str) -> StoredGame | None:
        """One stored game by id, or None."""
        return await asyncio.to_thread(fetch_game, self.path, match_id)

    async def list_quarantined(self) -> list[Quarantined]:
        """Every quarantined match, oldest first."""
        return await asyncio.to_thread(list_quarantined, self.path)

    async def rated_results(self) -> list[RatedResult]:
        """Every finished rated game in the order it finished."""
        return await asyncio.to_thread(rated_results, self.path)

    async def played(self, player_id: str, plies: int) -> bool:
        """Whether `player_id` holds a seat in a live or finished match of at least `plies` plies."""
        return await asyncio.to_thread(played, self.path, player_id, plies)

    async def fetch_review(self, match_id: str) -> str | None:
        """The stored review of a match (its `game_review` JSON), or None."""
        return await asyncio.to_thread(fetch_review, self.path, match_id)

    async def explored(self, key: int, player_key: str | None) -> list[tuple[object, ...]]:
        """The opening explorer's rows of a position."""
        return await asyncio.to_thread(explored, self.path, key, player_key)

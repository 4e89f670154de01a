"""The SQLite backend: one aiosqlite connection in WAL mode, group commits in its thread, reads for resume.

A commit returns only once it is durable (`synchronous=FULL` by default), so `kill -9` loses
nothing acknowledged. Stored-game reads open their own read-only connections off the event
loop (WAL lets them run beside the writer).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from functools import partial
from pathlib import Path
from typing import Any

import aiosqlite

from bots.file_lock import LockHeldError, hold_alone
from protocol.errors import ConflictError
from server.storage.accounts import ACCOUNT_SQL
from server.storage.errors import StorageError
from server.storage.explore import EXPLORE_SQL
from server.storage.games import SQLiteReads
from server.storage.moderation import MODERATION_SQL
from server.storage.ops import Op, OpKind, plan_batch
from server.storage.passkeys import PASSKEY_SQL
from server.storage.puzzles import PUZZLE_SQL
from server.storage.reviews import REVIEW_SQL
from server.storage.schema import migrate_sqlite, pragmas
from server.storage.soundness import check_sound, check_writable
from server.storage.tournaments import TOURNAMENT_SQL
from server.storage.writer import (
    MATCH,
    MATCH_ACTIONS,
    MAX_BATCH,
    PLAYER,
    PLAYERS,
    QUARANTINED,
    RATINGS,
    SEATED,
    STORE_ID,
    UNFINISHED,
    UNFINISHED_ACTIONS,
    Pending,
    Storage,
    StoredMatch,
    StoredPlayer,
    match_of,
    unfinished_of,
)

NOW = "((julianday('now') - 2440587.5) * 86400.0)"
"""SQLite's clock (this machine's), in UNIX seconds: the time an action is stored at, and a match is read at."""

SQL: dict[OpKind, str] = {
    OpKind.GUARD_SWEEP: "DELETE FROM guards WHERE expires_at IS NOT NULL AND expires_at <= ?",
    OpKind.GUARD_LAPSED: "DELETE FROM guards WHERE key = ? AND expires_at IS NOT NULL AND expires_at <= ?",
    OpKind.GUARD: "INSERT INTO guards (key, expires_at) VALUES (?, ?)",
    OpKind.OWN: "INSERT OR REPLACE INTO match_owners (match_id, node) VALUES (?, ?)",
    OpKind.DISOWN: "DELETE FROM match_owners WHERE match_id = ?",
    OpKind.PLAYER: "INSERT INTO players (id, name, name_key, token_hash, bot, created_at) VALUES (?, ?, ?, ?, ?, ?)"
                   " ON CONFLICT (id) DO NOTHING",
    OpKind.CREATE: "INSERT INTO matches (id, variant, rated, status, creator_seat, created_at, creator_network,"
                   " creator_address) VALUES (?, ?, ?, 'open', ?, ?, ?, ?)",
    OpKind.JOIN: "UPDATE matches SET seat0 = CASE ?1 WHEN 0 THEN ?2 ELSE seat0 END,"
                 " seat1 = CASE ?1 WHEN 1 THEN ?2 ELSE seat1 END, status = ?3,"
                 " creator_network = CASE ?3 WHEN 'open' THEN creator_network END,"
                 " creator_address = CASE ?3 WHEN 'open' THEN creator_address END WHERE id = ?4",
    OpKind.ACTION: "INSERT INTO actions (match_id, ply, seat, action, seat0_ms, seat1_ms, at)"
                   f" VALUES (?, ?, ?, ?, ?, ?, {NOW})",
    OpKind.FINISH: "UPDATE matches SET status = 'finished', result = ?, winner_seat = ?, reason = ?, finished_at = ?,"
                   " creator_network = NULL, creator_address = NULL WHERE id = ?",
    OpKind.RATING: "INSERT INTO ratings (player_id, rating, rd, volatility, games) VALUES (?, ?, ?, ?, ?)"
                   " ON CONFLICT(player_id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,"
                   " volatility = excluded.volatility, games = excluded.games",
    OpKind.CANCEL: "UPDATE matches SET status = 'cancelled', finished_at = ?, creator_network = NULL,"
                   " creator_address = NULL WHERE id = ?",
    OpKind.QUARANTINE: "INSERT OR REPLACE INTO quarantine (match_id, reason, at) VALUES (?, ?, ?)",
    OpKind.SET_ASIDE: "UPDATE matches SET status = 'quarantined' WHERE id = ?",
    OpKind.FORFEIT: "INSERT OR REPLACE INTO engine_forfeits (match_id, seat, player_id, detail, at)"
                    " VALUES (?, ?, ?, ?, ?)",
    **TOURNAMENT_SQL,
    **MODERATION_SQL,
    **ACCOUNT_SQL,
    **REVIEW_SQL,
    **EXPLORE_SQL,
    **PUZZLE_SQL,
    **PASSKEY_SQL,
}
"""SQLite's statement for each kind of `Op` (parameters in the order the op builders give them)."""

MAX_ROWS_PER_INSERT = 500


def _multi_row(sql: str, rows: int) -> bool:
    """Whether `_execute_group` runs `rows` rows of `sql` as one multi-row INSERT statement."""
    return sql.startswith("INSERT") and " VALUES " in sql and " ON CONFLICT" not in sql and rows <= MAX_ROWS_PER_INSERT


def _execute_group(db: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """Run one statement for many rows: an INSERT as multi-row VALUES (one step, one GIL release)."""
    head, values, tuple_sql = sql.partition(" VALUES ")
    if not values or not sql.startswith("INSERT") or " ON CONFLICT" in tuple_sql or len(rows) == 1:
        db.executemany(sql, rows)
        return
    for start in range(0, len(rows), MAX_ROWS_PER_INSERT):
        chunk = rows[start : start + MAX_ROWS_PER_INSERT]
        db.execute(f"{head} VALUES {', '.join([tuple_sql] * len(chunk))}", [v for row in chunk for v in row])


def _run_batch(db: sqlite3.Connection, items: list[list[Op]]) -> list[BaseException | None]:
    """Commit every item in one transaction; on failure commit them one by one."""
    plan = [(SQL[kind], rows) for kind, rows in plan_batch(items)]
    try:
        if len(plan) == 1 and (len(plan[0][1]) == 1 or _multi_row(plan[0][0], len(plan[0][1]))):
            _execute_group(db, *plan[0])  # one statement: its own transaction, one hand-over of the GIL
            return [None] * len(items)
        db.execute("BEGIN IMMEDIATE")
        for sql, rows in plan:
            _execute_group(db, sql, rows)
        db.execute("COMMIT")
        return [None] * len(items)
    except sqlite3.Error:
        if db.in_transaction:
            db.execute("ROLLBACK")
    results: list[BaseException | None] = []
    for ops in items:
        try:
            db.execute("BEGIN IMMEDIATE")
            for kind, params in ops:
                db.execute(SQL[kind], params)
            db.execute("COMMIT")
            results.append(None)
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            results.append(exc)
    return results



def _conflicts(results: list[BaseException | None]) -> list[BaseException | None]:
    """Outcomes of a batch with each constraint failure (a key taken) as `ConflictError`."""
    return [ConflictError(str(error)) if isinstance(error, sqlite3.IntegrityError) else error for error in results]


def store_id_of(path: Path) -> str | None:
    """The identity of a SQLite database file, read without changing it (the client files tokens under it); None
    when it has none: no such file, or one that no server of this version has opened yet."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute(STORE_ID).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])

SERVER_LOCK_SUFFIX = "-server"
"""The file beside a SQLite database that the one server process using it holds a lock on (`hold_database`)."""


def hold_database(path: Path) -> int:
    """Take the lock that makes this process the only server on the database at `path` (on the file beside it,
    `<file>-server`, so that SQLite's own locks and the offline tools' reads are untouched); the open descriptor
    that holds it. `StorageError` naming the holder if another process has it."""
    try:
        return hold_alone(path.with_name(path.name + SERVER_LOCK_SUFFIX))
    except LockHeldError as held:
        raise StorageError(f"another kalah server (process {held.holder}) is using {path}: play on that one "
                           "(--server), stop it, or name another file with --db") from None


def _opens(path: str | Path) -> None:
    """Open and close the database at `path` (creating the file if it is missing); `sqlite3.Error` if it cannot."""
    sqlite3.connect(str(path)).close()


class SQLiteStorage(SQLiteReads, Storage):
    """The arena's SQLite file: the group-committing writer on one connection, plus the reads."""

    def __init__(self, conn: aiosqlite.Connection, path: Path, alone: int) -> None:
        SQLiteReads.__init__(self, path)
        Storage.__init__(self)
        self._conn = conn
        self._alone = alone
        """The descriptor of the file whose lock makes this the only server on the database (`hold_database`)."""
        self.where = str(path)

    @classmethod
    async def connect(cls, path: str | Path, synchronous: str = "FULL") -> SQLiteStorage:
        """Open (creating and migrating if needed) the database at `path`, check that it is sound and can be written,
        and start the writer."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(_opens, path)  # a path aiosqlite cannot open leaves its thread to fail after the loop
        alone = hold_database(path)
        try:
            conn = await aiosqlite.connect(str(path), isolation_level=None)
        except BaseException:
            os.close(alone)
            raise
        try:
            for pragma in pragmas(synchronous):
                await conn.execute(pragma)
            self = cls(conn, path, alone)
            await self._in_thread(check_sound, path)
            await self._in_thread(migrate_sqlite)
            await self._in_thread(check_writable, path)
        except BaseException:
            await conn.close()
            os.close(alone)
            raise
        self.start_writer()
        return self

    async def commit_batch(self, items: list[list[Op]]) -> list[BaseException | None]:
        """Commit in the connection's thread; a constraint failure (a key taken) becomes `ConflictError`."""
        return _conflicts(await self._in_thread(_run_batch, items))

    async def commit_and_settle(self, batch: list[Pending]) -> None:
        """Commit in the connection's thread, which hands the outcome to the event loop to settle the writers at once;
        writes queued meanwhile are committed next from that same turn, until none are left.

        Through an awaited future the writers would resume three turns of the loop after the commit
        ended (the future's result, the writer task, then theirs), and the next commit would start a
        turn late; settled in the turn the outcome arrives, they resume in the next, and under load
        a turn of the loop can take 10 ms or more.
        """
        drained: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._commit_then_settle(batch, drained)
        await drained

    def _commit_then_settle(self, batch: list[Pending], drained: asyncio.Future[None]) -> None:
        """Queue the commit of `batch` in the connection's thread; its outcome settles it on the loop and starts the
        next batch, or marks the queue `drained`."""
        loop = asyncio.get_running_loop()
        items = [ops for ops, _ in batch]
        started = time.perf_counter()

        def settle(results: list[BaseException | None]) -> None:
            """On the loop: settle the writers, then commit what was queued meanwhile (or let the writer task go on)."""
            self.settle(batch, _conflicts(results), time.perf_counter() - started)
            if self._pending:
                following = self._pending[:MAX_BATCH]
                del self._pending[:MAX_BATCH]
                self._commit_then_settle(following, drained)
            elif not drained.done():
                drained.set_result(None)

        def commit(db: sqlite3.Connection) -> None:
            """In the connection's thread: commit (a failure of the connection fails every item), then hand over."""
            try:
                results = _run_batch(db, items)
            except Exception as exc:
                results = [exc] * len(items)
            loop.call_soon_threadsafe(settle, results)

        conn = self._conn
        if not conn._running or conn._connection is None:  # closed: nothing would ever run the commit
            self.settle(batch, [ConnectionError("the database connection is closed")] * len(batch), 0.0)
            if not drained.done():
                drained.set_result(None)
            return
        # aiosqlite's thread sets the future it is handed (0.20 and 0.21 fail on none); nobody awaits this one
        conn._tx.put_nowait((loop.create_future(), partial(commit, conn._connection)))

    async def _in_thread(self, fn: Any, *args: Any) -> Any:
        """Run `fn(sqlite3_connection, *args)` in the connection's own thread."""
        conn = self._conn
        return await conn._execute(fn, conn._conn, *args)  # type: ignore[no-untyped-call]

    async def disconnect(self) -> None:
        """Close the connection, and let another server use the database."""
        try:
            await self._conn.close()
        finally:
            with contextlib.suppress(OSError):
                os.close(self._alone)

    # --- reads for start-up -----------------------------------------------------------------

    async def players(self, limit: int) -> list[StoredPlayer]:
        """The `limit` stored players made last, oldest first."""
        rows = await self._conn.execute_fetchall(PLAYERS, (limit,))
        return [StoredPlayer(r[0], r[1], r[2], r[3]) for r in reversed(list(rows))]

    async def unfinished(self) -> list[StoredMatch]:
        """Every open or live match with its actions, oldest first."""
        rows = list(await self._conn.execute_fetchall(UNFINISHED))
        actions = list(await self._conn.execute_fetchall(UNFINISHED_ACTIONS)) if rows else []
        return unfinished_of(rows, actions)

    async def stored_match(self, match_id: str) -> StoredMatch | None:
        """One match of any status with its actions and end, or None."""
        rows = list(await self._conn.execute_fetchall(MATCH.format(now=NOW), (match_id,)))
        if not rows:
            return None
        return match_of(rows[0], list(await self._conn.execute_fetchall(MATCH_ACTIONS, (match_id,))))

    async def quarantined(self) -> int:
        """How many matches are set aside as unreadable."""
        rows = list(await self._conn.execute_fetchall(QUARANTINED))
        return int(rows[0][0])

    async def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Every player's Glicko-2 rating, deviation, volatility and number of rated games."""
        rows = await self._conn.execute_fetchall(RATINGS)
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    async def player(self, player_id: str) -> StoredPlayer | None:
        """One stored player, or None."""
        rows = list(await self._conn.execute_fetchall(PLAYER, (player_id,)))
        return None if not rows else StoredPlayer(rows[0][0], rows[0][1], rows[0][2], rows[0][3])

    async def fetch_rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of one read."""
        return [tuple(r) for r in await self._conn.execute_fetchall(sql, params)]

    async def seated(self, player_id: str) -> list[str]:
        """The ids of the open or live matches where `player_id` holds a seat, oldest first."""
        return [r[0] for r in await self._conn.execute_fetchall(SEATED, (player_id, player_id))]

    async def store_id(self) -> str:
        """The database's random identity."""
        rows = list(await self._conn.execute_fetchall(STORE_ID))
        return str(rows[0][0])

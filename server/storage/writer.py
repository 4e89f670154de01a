"""The server's storage: one aiosqlite connection, group commits, and loading for resume.

`Storage.write(ops)` queues a list of SQL statements and returns once they are committed
(WAL, `synchronous=FULL` by default): the caller acknowledges or broadcasts only then.
A single writer task drains everything queued into one transaction, so many matches share
one commit; a failing item is retried alone so it cannot sink the others.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite

from protocol.outcome import EndReason
from server.storage.schema import SCHEMA, pragmas

Op = tuple[str, tuple[Any, ...]]


class ConflictError(Exception):
    """A write refused because it would store a key twice (a match id or a (match, ply) taken)."""
MAX_BATCH = 2000


@dataclass(frozen=True, slots=True)
class StoredPlayer:
    """A player row: id, name, token hash (None for bots), bot name."""

    player_id: str
    name: str
    token_hash: str | None
    bot: str | None


@dataclass(slots=True)
class StoredMatch:
    """An unfinished match as stored: enough to rebuild it after a restart."""

    match_id: str
    variant: str
    rated: bool
    seats: tuple[str | None, str | None]
    creator_seat: int
    actions: list[tuple[int, int, str, int, int]] = field(default_factory=list)
    """(ply, seat, action token, seat0 ms, seat1 ms) in ply order."""
    status: str = "live"
    end: tuple[int | None, int | None, EndReason] | None = None
    """(result, winner seat, reason) of a finished match."""


# Statement kinds in the order a batch runs them. Within one write the statements already come
# in this order (a match is created before it is joined, an action stored before the end it
# causes), and writes of one batch never depend on each other, so a batch can run each kind
# as one `executemany`: a few calls per commit instead of one per row, which matters because
# every call hands the GIL back and forth with the busy event loop.
PHASES = (
    "INSERT OR IGNORE INTO players",
    "INSERT INTO matches",
    "UPDATE matches SET seat",
    "INSERT INTO actions",
    "UPDATE matches SET status = 'finished'",
    "INSERT INTO ratings",
    "UPDATE matches SET status = 'cancelled'",
    "INSERT OR REPLACE INTO quarantine",
    "UPDATE matches SET status = 'quarantined'",
)


def _phase(sql: str) -> int:
    """Where a statement runs in a batch (unknown statements last, in their order)."""
    for index, prefix in enumerate(PHASES):
        if sql.startswith(prefix):
            return index
    return len(PHASES)


def plan_batch(items: list[list[Op]]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements of many writes grouped into one `executemany` per statement, in phase order."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for ops in items:
        for sql, params in ops:
            groups.setdefault(sql, []).append(params)
    return sorted(groups.items(), key=lambda group: _phase(group[0]))


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
    plan = plan_batch(items)
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
            for sql, params in ops:
                db.execute(sql, params)
            db.execute("COMMIT")
            results.append(None)
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            results.append(exc)
    return results


class Storage:
    """The arena's database: group-committing writer plus the reads a restart needs."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._queue: asyncio.Queue[tuple[list[Op], asyncio.Future[None]] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.commits = 0
        self.items = 0
        self.commit_seconds = 0.0

    @classmethod
    async def open(cls, path: str | Path, synchronous: str = "FULL") -> Storage:
        """Open (creating if needed) the database at `path` and start the writer."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path), isolation_level=None)
        for pragma in pragmas(synchronous):
            await conn.execute(pragma)
        await conn.executescript(SCHEMA)
        self = cls(conn, Path(path))
        self._task = asyncio.create_task(self._writer(), name="storage-writer")
        return self

    async def write(self, ops: list[Op]) -> None:
        """Commit `ops` in one transaction (shared with other writers); raises on failure."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((ops, fut))
        await fut

    async def _writer(self) -> None:
        """Drain the queue into group commits until the closing sentinel."""
        while True:
            first = await self._queue.get()
            if first is None:
                return
            batch = [first]
            closing = False
            while not self._queue.empty() and len(batch) < MAX_BATCH:
                item = self._queue.get_nowait()
                if item is None:
                    closing = True
                    break
                batch.append(item)
            started = time.perf_counter()
            try:
                results = await self._in_thread(_run_batch, [ops for ops, _ in batch])
            except Exception as exc:  # the connection itself failed: fail every waiter
                results = [exc] * len(batch)
            self.commit_seconds += time.perf_counter() - started
            self.commits += 1
            self.items += len(batch)
            for (_, fut), error in zip(batch, results, strict=True):
                if fut.done():
                    continue
                if error is None:
                    fut.set_result(None)
                elif isinstance(error, sqlite3.IntegrityError):
                    fut.set_exception(ConflictError(str(error)))
                else:
                    fut.set_exception(error)
            if closing:
                return

    async def _in_thread(self, fn: Any, *args: Any) -> Any:
        """Run `fn(sqlite3_connection, *args)` in the connection's own thread."""
        conn = self._conn
        return await conn._execute(fn, conn._conn, *args)  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Finish every queued write, then close the database."""
        if self._task is not None:
            self._queue.put_nowait(None)
            await self._task
            self._task = None
        await self._conn.close()

    # --- reads for startup -----------------------------------------------------------------

    async def players(self) -> list[StoredPlayer]:
        """Every stored player."""
        rows = await self._conn.execute_fetchall("SELECT id, name, token_hash, bot FROM players")
        return [StoredPlayer(r[0], r[1], r[2], r[3]) for r in rows]

    async def unfinished(self) -> list[StoredMatch]:
        """Every open or live match with its actions, oldest first."""
        rows = await self._conn.execute_fetchall(
            "SELECT id, variant, rated, seat0, seat1, creator_seat FROM matches"
            " WHERE status IN ('open', 'live') ORDER BY created_at")
        found = {r[0]: StoredMatch(r[0], r[1], bool(r[2]), (r[3], r[4]), r[5]) for r in rows}
        if found:
            acts = await self._conn.execute_fetchall(
                "SELECT a.match_id, a.ply, a.seat, a.action, a.seat0_ms, a.seat1_ms FROM actions a"
                " JOIN matches m ON m.id = a.match_id WHERE m.status IN ('open', 'live')"
                " ORDER BY a.match_id, a.ply")
            for a in acts:
                found[a[0]].actions.append((a[1], a[2], a[3], a[4], a[5]))
        return list(found.values())

    async def stored_match(self, match_id: str) -> StoredMatch | None:
        """One match of any status with its actions and end, or None."""
        rows = list(await self._conn.execute_fetchall(
            "SELECT id, variant, rated, seat0, seat1, creator_seat, status, result, winner_seat, reason"
            " FROM matches WHERE id = ?", (match_id,)))
        if not rows:
            return None
        r = rows[0]
        found = StoredMatch(r[0], r[1], bool(r[2]), (r[3], r[4]), r[5], status=r[6],
                            end=None if r[9] is None else (r[7], r[8], EndReason(r[9])))
        acts = await self._conn.execute_fetchall(
            "SELECT ply, seat, action, seat0_ms, seat1_ms FROM actions WHERE match_id = ? ORDER BY ply", (match_id,))
        found.actions = [(a[0], a[1], a[2], a[3], a[4]) for a in acts]
        return found

    async def quarantined(self) -> int:
        """How many matches are set aside as unreadable."""
        rows = list(await self._conn.execute_fetchall("SELECT count(*) FROM quarantine"))
        return int(rows[0][0])

    async def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Every player's Glicko-2 rating, deviation, volatility and number of rated games."""
        rows = await self._conn.execute_fetchall("SELECT player_id, rating, rd, volatility, games FROM ratings")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


# --- statements ------------------------------------------------------------------------


def op_player(player_id: str, name: str, token_hash: str | None, bot: str | None = None) -> Op:
    """Store a new player (a hosted bot's row is kept as it is)."""
    return ("INSERT OR IGNORE INTO players (id, name, token_hash, bot, created_at) VALUES (?, ?, ?, ?, ?)",
            (player_id, name, token_hash, bot, time.time()))


def op_create(match_id: str, variant: str, rated: bool, creator_seat: int) -> Op:
    """Store a new open match."""
    return ("INSERT INTO matches (id, variant, rated, status, creator_seat, created_at) VALUES (?, ?, ?, 'open', ?, ?)",
            (match_id, variant, int(rated), creator_seat, time.time()))


def op_join(match_id: str, seat: int, player_id: str, live: bool) -> Op:
    """Store a player taking a seat (and the match going live)."""
    column = "seat0" if seat == 0 else "seat1"
    return (f"UPDATE matches SET {column} = ?, status = ? WHERE id = ?",
            (player_id, "live" if live else "open", match_id))


def op_action(match_id: str, ply: int, seat: int, token: str, clocks_ms: tuple[int, int]) -> Op:
    """Store one action; (match, ply) is unique, so an action is never stored twice."""
    return ("INSERT INTO actions (match_id, ply, seat, action, seat0_ms, seat1_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (match_id, ply, seat, token, clocks_ms[0], clocks_ms[1], time.time()))


def op_finish(match_id: str, result: int | None, winner_seat: int | None, reason: EndReason) -> Op:
    """Store the end of a match."""
    return ("UPDATE matches SET status = 'finished', result = ?, winner_seat = ?, reason = ?, finished_at = ?"
            " WHERE id = ?", (result, winner_seat, reason, time.time(), match_id))


def op_cancel(match_id: str) -> Op:
    """Mark an open match its creator left before anyone joined."""
    return ("UPDATE matches SET status = 'cancelled', finished_at = ? WHERE id = ?", (time.time(), match_id))


def op_rating(player_id: str, rating: float, rd: float, volatility: float, games: int) -> Op:
    """Store a player's Glicko-2 rating after a rated game."""
    return ("INSERT INTO ratings (player_id, rating, rd, volatility, games) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(player_id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,"
            " volatility = excluded.volatility, games = excluded.games",
            (player_id, rating, rd, volatility, games))


def op_quarantine(match_id: str, reason: str) -> list[Op]:
    """Set aside a match that cannot be loaded: noted with the reason, and never loaded again."""
    return [("INSERT OR REPLACE INTO quarantine (match_id, reason, at) VALUES (?, ?, ?)",
             (match_id, reason[:1000], time.time())),
            ("UPDATE matches SET status = 'quarantined' WHERE id = ?", (match_id,))]

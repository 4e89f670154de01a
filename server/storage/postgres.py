"""The PostgreSQL backend (asyncpg): the same tables, group commits and reads as SQLite, for several nodes.

A batch runs as one `executemany` per statement kind in one transaction on the writer's own
connection; if it fails, each write is retried alone in its own transaction, and a unique
violation (a match id or a (match, ply) taken) is reported as `ConflictError`, as on SQLite.
A write is acknowledged only after its COMMIT returns, with `synchronous_commit` never off for
the arena's sessions. Reads use a separate small pool, so they never wait behind a commit.
"""

from __future__ import annotations

import time
from typing import Any

import asyncpg

from protocol.errors import ConflictError
from server.storage.accounts import ACCOUNT_SQL
from server.storage.explore import EXPLORE_SQL, EXPLORED, FILL_EXPLORE, PLAYER_ID, STORED_GAMES, stored_ops
from server.storage.games import (
    PLAYED,
    QUARANTINE_LIST,
    RATED_RESULTS,
    GameReads,
    Quarantined,
    RatedResult,
    StoredGame,
    games_query,
    numbered,
    quarantined_of,
    readable,
    results_of,
    select_games,
)
from server.storage.migrations_postgres import POSTGRES_MIGRATIONS
from server.storage.moderation import MODERATION_SQL
from server.storage.ops import Op, OpKind, plan_batch
from server.storage.passkeys import PASSKEY_SQL
from server.storage.puzzles import PUZZLE_SQL
from server.storage.reviews import REVIEW, REVIEW_SQL
from server.storage.schema import VERSION_TABLE, pending
from server.storage.schema_steps import FILL_NAME_KEYS, PLAYER_NAMES, Migration, name_keys
from server.storage.tournaments import TOURNAMENT_SQL
from server.storage.writer import (
    MATCH,
    MATCH_ACTIONS,
    PLAYER,
    PLAYERS,
    QUARANTINED,
    RATINGS,
    SEATED,
    STORE_ID,
    UNFINISHED,
    UNFINISHED_ACTIONS,
    Storage,
    StoredMatch,
    StoredPlayer,
    match_of,
    unfinished_of,
)

NOW = "extract(epoch FROM clock_timestamp())::double precision"
"""The database server's clock in UNIX seconds: one clock for every node (an action is stored at it, a match read
at it), so a step of a node's own clock, or skew between nodes, never comes into a match's clocks."""

SQL: dict[OpKind, str] = {
    OpKind.GUARD_SWEEP: "DELETE FROM guards WHERE expires_at IS NOT NULL AND expires_at <= $1",
    OpKind.GUARD_LAPSED: "DELETE FROM guards WHERE key = $1 AND expires_at IS NOT NULL AND expires_at <= $2",
    OpKind.GUARD: "INSERT INTO guards (key, expires_at) VALUES ($1, $2)",
    OpKind.OWN: "INSERT INTO match_owners (match_id, node) VALUES ($1, $2)"
                " ON CONFLICT (match_id) DO UPDATE SET node = excluded.node",
    OpKind.DISOWN: "DELETE FROM match_owners WHERE match_id = $1",
    OpKind.PLAYER: "INSERT INTO players (id, name, name_key, token_hash, bot, created_at)"
                   " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
    OpKind.CREATE: "INSERT INTO matches (id, variant, rated, status, creator_seat, created_at, creator_network,"
                   " creator_address) VALUES ($1, $2, $3, 'open', $4, $5, $6, $7)",
    OpKind.JOIN: "UPDATE matches SET seat0 = CASE $1::integer WHEN 0 THEN $2 ELSE seat0 END,"
                 " seat1 = CASE $1::integer WHEN 1 THEN $2 ELSE seat1 END, status = $3::text,"
                 " creator_network = CASE $3::text WHEN 'open' THEN creator_network END,"
                 " creator_address = CASE $3::text WHEN 'open' THEN creator_address END WHERE id = $4",
    OpKind.ACTION: "INSERT INTO actions (match_id, ply, seat, action, seat0_ms, seat1_ms, at)"
                   f" VALUES ($1, $2, $3, $4, $5, $6, {NOW})",
    OpKind.FINISH: "UPDATE matches SET status = 'finished', result = $1, winner_seat = $2, reason = $3,"
                   " finished_at = $4, creator_network = NULL, creator_address = NULL WHERE id = $5",
    OpKind.RATING: "INSERT INTO ratings (player_id, rating, rd, volatility, games) VALUES ($1, $2, $3, $4, $5)"
                   " ON CONFLICT (player_id) DO UPDATE SET rating = excluded.rating, rd = excluded.rd,"
                   " volatility = excluded.volatility, games = excluded.games",
    OpKind.CANCEL: "UPDATE matches SET status = 'cancelled', finished_at = $1, creator_network = NULL,"
                   " creator_address = NULL WHERE id = $2",
    OpKind.QUARANTINE: "INSERT INTO quarantine (match_id, reason, at) VALUES ($1, $2, $3)"
                       " ON CONFLICT (match_id) DO UPDATE SET reason = excluded.reason, at = excluded.at",
    OpKind.SET_ASIDE: "UPDATE matches SET status = 'quarantined' WHERE id = $1",
    OpKind.FORFEIT: "INSERT INTO engine_forfeits (match_id, seat, player_id, detail, at) VALUES ($1, $2, $3, $4, $5)"
                    " ON CONFLICT (match_id) DO UPDATE SET seat = excluded.seat, player_id = excluded.player_id,"
                    " detail = excluded.detail, at = excluded.at",
    **{kind: numbered(sql) for kind, sql in TOURNAMENT_SQL.items()},
    **{kind: numbered(sql) for kind, sql in MODERATION_SQL.items()},
    **{kind: numbered(sql) for kind, sql in ACCOUNT_SQL.items()},
    **{kind: numbered(sql) for kind, sql in REVIEW_SQL.items()},
    **{kind: numbered(sql) for kind, sql in EXPLORE_SQL.items()},
    **{kind: numbered(sql) for kind, sql in PUZZLE_SQL.items()},
    **{kind: numbered(sql) for kind, sql in PASSKEY_SQL.items()},
}
"""PostgreSQL's statement for each kind of `Op` (parameters in the order the op builders give them)."""

MIGRATION_LOCK = int.from_bytes(b"kalahmig")
"""The advisory lock that lets one node at a time migrate a shared database."""
SERVER_LOCK = int.from_bytes(b"kalahsrv")
"""The advisory lock the writer's session holds: a single server holds it alone, cluster nodes share it."""


class DatabaseBusyError(Exception):
    """Another server is writing this database alone, or cluster nodes share it with a single server."""


async def connect_writer(url: str, shared: bool = False) -> asyncpg.Connection:
    """The writer's own session (not pooled: a pool's reset would drop its lock and settings).

    `synchronous_commit=off` would acknowledge before the flush, so it is turned back on. The
    session-level SERVER_LOCK keeps a second single server from loading and playing the same
    matches: a single server takes it exclusively, the nodes of a cluster (`shared`, with a bus)
    take it shared, so nodes run together but never beside a single server. It goes with the
    session, so a reconnecting writer takes it again or fails its writes.
    """
    conn = await asyncpg.connect(url)
    try:
        if await conn.fetchval("SELECT current_setting('synchronous_commit')") == "off":
            await conn.execute("SET synchronous_commit = on")
        take = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
        if not await conn.fetchval(f"SELECT {take}($1)", SERVER_LOCK):
            raise DatabaseBusyError("another kalah server is using this database alone (several nodes need "
                                    "--bus on every node)" if shared else
                                    "another kalah server is using this database: run every node with --bus "
                                    "to share it")
    except BaseException:
        await conn.close()
        raise
    return conn


async def migrate(conn: asyncpg.Connection, migrations: tuple[Migration, ...] = POSTGRES_MIGRATIONS) -> int:
    """Bring the database to the latest schema version in one transaction (one node at a time); returns it."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await conn.execute(VERSION_TABLE["postgres"])
        current = int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))
        for version, statements in pending(current, migrations):
            for statement in statements:
                if statement == FILL_NAME_KEYS:
                    keys = name_keys([(r[0], r[1]) for r in await conn.fetch(PLAYER_NAMES)])
                    await conn.executemany("UPDATE players SET name_key = $1 WHERE id = $2", keys)
                elif statement == FILL_EXPLORE:
                    for ops in stored_ops(tuple(r) for r in await conn.fetch(STORED_GAMES["postgres"])):
                        await conn.executemany(SQL[OpKind.EXPLORE], [params for _, params in ops])
                else:
                    await conn.execute(statement)
            await conn.execute("INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)",
                               version, time.time())
            current = version
    return current


class PostgresReads(GameReads):
    """The stored-game reads of a PostgreSQL database, on a small pool of their own."""

    def __init__(self, reads: asyncpg.Pool, where: str) -> None:
        self._reads = reads
        self.where = where

    @classmethod
    async def connect_reads(cls, url: str, where: str) -> PostgresReads:
        """A reader of the database at `url` (no writer, no migration): for offline tools."""
        return cls(await asyncpg.create_pool(url, min_size=1, max_size=2), where)

    async def aclose(self) -> None:
        """Close the read pool."""
        await self._reads.close()

    async def list_games(self, limit: int = 50, offset: int = 0, status: str | None = "finished",
                         player: str | None = None, variant: str | None = None) -> list[StoredGame]:
        """Stored games, newest first, optionally only of one status, player name or variant text."""
        sql, params = games_query("postgres", limit, offset, status, player, variant)
        rows = await self._reads.fetch(numbered(sql), *params)
        return [game for game in (readable(tuple(r)) for r in rows) if game is not None]

    async def fetch_game(self, match_id: str) -> StoredGame | None:
        """One stored game by id, or None."""
        row = await self._reads.fetchrow(f"{select_games('postgres')} WHERE m.id = $1", match_id)
        return None if row is None else readable(tuple(row))

    async def list_quarantined(self) -> list[Quarantined]:
        """Every quarantined match, oldest first."""
        return quarantined_of(tuple(r) for r in await self._reads.fetch(QUARANTINE_LIST))

    async def rated_results(self) -> list[RatedResult]:
        """Every finished rated game in the order it finished."""
        return results_of(tuple(r) for r in await self._reads.fetch(RATED_RESULTS))

    async def played(self, player_id: str, plies: int) -> bool:
        """Whether `player_id` holds a seat in a live or finished match of at least `plies` plies."""
        return await self._reads.fetchval(numbered(PLAYED), player_id, plies, player_id, plies) is not None

    async def fetch_review(self, match_id: str) -> str | None:
        """The stored review of a match (its `game_review` JSON), or None."""
        try:
            text = await self._reads.fetchval(numbered(REVIEW), match_id)
        except asyncpg.UndefinedTableError:  # a database from before reviews were stored
            return None
        return None if text is None else str(text)


    async def explored(self, key: int, player_key: str | None) -> list[tuple[object, ...]]:
        """The opening explorer's rows of a position."""
        try:
            player = ""
            if player_key is not None:
                found = await self._reads.fetchval(numbered(PLAYER_ID), player_key)
                if found is None:
                    return []
                player = str(found)
            return [tuple(r) for r in await self._reads.fetch(numbered(EXPLORED), key, player)]
        except asyncpg.UndefinedTableError:  # a database from before the index
            return []


class PostgresStorage(PostgresReads, Storage):
    """The arena's PostgreSQL database: one writer session for group commits, and a read pool."""

    def __init__(self, url: str, writer: asyncpg.Connection, reads: asyncpg.Pool, where: str,
                 shared: bool = False) -> None:
        PostgresReads.__init__(self, reads, where)
        Storage.__init__(self)
        self._url = url
        self._writer_conn = writer
        self.shared = shared

    @property
    def pool(self) -> asyncpg.Pool:
        """The read pool (the cluster's node registry runs its short statements on it too)."""
        return self._reads

    @classmethod
    async def connect(cls, url: str, where: str, read_connections: int = 4, shared: bool = False) -> PostgresStorage:
        """Connect to the database at `url` (refused if another server holds it), migrate it, start the writer.

        `shared`: this server is one node of several on this database (see `connect_writer`).
        """
        writer = await connect_writer(url, shared)
        try:
            await migrate(writer)
            reads = await asyncpg.create_pool(url, min_size=1, max_size=read_connections)
        except BaseException:
            await writer.close()
            raise
        self = cls(url, writer, reads, where, shared)
        self.start_writer()
        return self

    async def commit_batch(self, items: list[list[Op]]) -> list[BaseException | None]:
        """One transaction of one `executemany` per kind; if it fails, each write alone in its own.

        A writer session that was lost (the database restarted, say) is opened again first; the
        batch that saw it fail was reported failed, never acknowledged.
        """
        plan = [(SQL[kind], rows) for kind, rows in plan_batch(items)]
        if self._writer_conn.is_closed():
            self._writer_conn = await connect_writer(self._url, self.shared)
        conn = self._writer_conn
        try:
            async with conn.transaction():
                for sql, rows in plan:
                    await conn.executemany(sql, rows)
            return [None] * len(items)
        except asyncpg.PostgresError:
            pass
        results: list[BaseException | None] = []
        for ops in items:
            try:
                async with conn.transaction():
                    for kind, params in ops:
                        await conn.execute(SQL[kind], *params)
                results.append(None)
            except asyncpg.UniqueViolationError as exc:
                results.append(ConflictError(str(exc)))
            except asyncpg.PostgresError as exc:
                results.append(exc)
        return results

    async def disconnect(self) -> None:
        """Close the writer's session and the read pool."""
        await self._writer_conn.close()
        await self._reads.close()

    # --- reads for start-up -----------------------------------------------------------------

    async def players(self, limit: int) -> list[StoredPlayer]:
        """The `limit` stored players made last, oldest first."""
        rows = await self._reads.fetch(numbered(PLAYERS), limit)
        return [StoredPlayer(r[0], r[1], r[2], r[3]) for r in reversed(rows)]

    async def unfinished(self) -> list[StoredMatch]:
        """Every open or live match with its actions, oldest first."""
        rows: list[Any] = await self._reads.fetch(UNFINISHED)
        actions: list[Any] = await self._reads.fetch(UNFINISHED_ACTIONS) if rows else []
        return unfinished_of(rows, actions)

    async def stored_match(self, match_id: str) -> StoredMatch | None:
        """One match of any status with its actions and end, or None."""
        row = await self._reads.fetchrow(numbered(MATCH.format(now=NOW)), match_id)
        if row is None:
            return None
        return match_of(row, await self._reads.fetch(numbered(MATCH_ACTIONS), match_id))

    async def quarantined(self) -> int:
        """How many matches are set aside as unreadable."""
        return int(await self._reads.fetchval(QUARANTINED))

    async def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Every player's Glicko-2 rating, deviation, volatility and number of rated games."""
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in await self._reads.fetch(RATINGS)}

    async def player(self, player_id: str) -> StoredPlayer | None:
        """One stored player, or None."""
        r = await self._reads.fetchrow(numbered(PLAYER), player_id)
        return None if r is None else StoredPlayer(r[0], r[1], r[2], r[3])

    async def fetch_rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of one read, on the read pool."""
        return [tuple(r) for r in await self._reads.fetch(numbered(sql), *params)]

    async def seated(self, player_id: str) -> list[str]:
        """The ids of the open or live matches where `player_id` holds a seat, oldest first."""
        return [r[0] for r in await self._reads.fetch(numbered(SEATED), player_id, player_id)]

    async def store_id(self) -> str:
        """The database's random identity."""
        return str(await self._reads.fetchval(STORE_ID))

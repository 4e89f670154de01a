"""The arena's schema versions (each dialect's steps: `server.storage.migrations_sqlite`, `migrations_postgres`),
how SQLite's are applied, SQLite's pragmas, and the default file.

Each migration is a tuple of statements; the `schema_version` table holds one row per applied
version. Version 1 is the schema every release before versions had, written with
`IF NOT EXISTS`, so a file made by one of them opens, gets what it lacks and is marked 1;
version 2 adds the engine gateway's `engine_forfeits` (which the gateway used to create when
it started); version 3 adds what several nodes on one database need (`guards`, one row per change
that would conflict with another, `nodes` with their heartbeats, and `match_owners`); version 4
adds `store`, one row holding the database's random identity, which the server announces so a
client finds the token it was given by this database whatever address it came in by; version 5
adds moderation: `bans` (a player id or a network address, why, by whom, when; read by every node)
and `audit`, one row per moderation act; version 6 adds events (`events`, `event_entrants`,
`event_pairings`: see `server.storage.tournaments`); version 7 gives
each player its name's canonical form (`name_key`, computed in Python: NFKC and case folding) under a
UNIQUE index, so no two nodes can store one name twice (a name stored twice before keeps its oldest
holder; the later ones keep their rows and tokens with no key); version 8 gives each event entrant
its `seed`, its place in the event's starting order; version 9 gives each event its `version` (how many
changes were stored, claimed in `guards` by nodes racing on one change) and `event_owners`, the node
that pairs and drives each open or running event of a cluster; version 10 indexes matches by creation
time; version 11 gives each match the network (IPv4 /24, IPv6 /64) and the address of the client that
opened it to anyone, kept while it is open (every node lists open matches in turns by them; the rows
stored before have none and each counts as its own creator); version 12 indexes matches by each seat,
so finding a player's matches (has it played here, which seats does it hold) reads only them; version 13 indexes
players by creation; version 14 adds accounts: `credentials` (a player's password as an argon2id hash, its one-time
recovery and reset codes as SHA-256, and later its passkeys' public keys: one row each, by kind) and
`account_sessions` (each sign-in: the SHA-256 of its secret, the client, the address, when it began, was last seen
and ended). See `server.storage.accounts`; version 15 adds `reviews`, each finished game's review
(`server.storage.reviews`); version 16 adds `passkey_challenges`, the WebAuthn ceremonies begun and not yet finished
(`server.storage.passkeys`); version 17 adds `explore`, the opening explorer's index of every finished game's moves
by position, and fills it from the games already stored (`server.storage.explore`); version 18 adds puzzles:
`puzzles` (each proved puzzle as the wire's JSON, with its Glicko-2 rating), `puzzle_players` (each player's puzzle
rating) and `puzzle_attempts` (a player's first answer to each puzzle, the one that is rated); see
`server.storage.puzzles`; version 19 indexes the proved puzzles by rating (the next puzzle near a rating is found
by walking it); version 20 gives each claim in `guards` the time it lapses (`expires_at`; none: kept for good), so a
claim of a node that died is taken over (the reviews' claims stored before lapse at once), and each stored review
the number of times it was made again (`redone`: an estimate is redone when the server has room, a few times at most);
version 21 gives the claims that only settle a race between nodes (a recovery code's use, a passkey's counter or
ceremony: `server.storage.writer.race_claim`) an hour to lapse, after which the server's sweep deletes them with every
other lapsed claim.
A database whose version is newer than the code knows is refused, never written.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import platformdirs

from server.storage.explore import EXPLORE_SQL, FILL_EXPLORE, STORED_GAMES, stored_ops
from server.storage.migrations_sqlite import SQLITE_MIGRATIONS
from server.storage.ops import OpKind
from server.storage.schema_steps import FILL_NAME_KEYS, PLAYER_NAMES, Migration, name_keys

APP_NAME = "kalah-arena"

VERSION_TABLE = {
    "sqlite": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)",
    "postgres": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
                " applied_at DOUBLE PRECISION NOT NULL)",
}

SCHEMA = ";\n".join(statement for _, statements in SQLITE_MIGRATIONS for statement in statements
                    if not statement.startswith("-- fill")) + ";\n"
"""SQLite's whole current schema as one script (for tests and tools that build a database by hand)."""


class SchemaError(Exception):
    """The database's schema is newer than this version of the arena knows: it is not touched."""


def pending(current: int, migrations: tuple[Migration, ...]) -> list[Migration]:
    """The migrations a database at version `current` still needs, in order; raises if it is newer than all."""
    latest = migrations[-1][0]
    if current > latest:
        raise SchemaError(f"the database is at schema version {current}, newer than this kalah-arena knows "
                          f"({latest}): upgrade kalah-arena")
    return [m for m in migrations if m[0] > current]


ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+) ")


def column_added(db: sqlite3.Connection, statement: str) -> bool:
    """Whether `statement` adds a column the table already has (SQLite has no `ADD COLUMN IF NOT EXISTS`): a step
    run again over a database that has it, as PostgreSQL's steps may be, then changes nothing."""
    added = ADD_COLUMN.match(statement)
    if added is None:
        return False
    table, column = added.groups()
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))


def migrate_sqlite(db: sqlite3.Connection, migrations: tuple[Migration, ...] = SQLITE_MIGRATIONS) -> int:
    """Bring a SQLite database (autocommit connection) to the latest version in one transaction; returns it."""
    db.execute("BEGIN IMMEDIATE")  # one opener at a time: another waits, then finds the work done
    try:
        db.execute(VERSION_TABLE["sqlite"])
        current = int(db.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])
        for version, statements in pending(current, migrations):
            for statement in statements:
                if statement == FILL_NAME_KEYS:
                    keys = name_keys(db.execute(PLAYER_NAMES).fetchall())
                    db.executemany("UPDATE players SET name_key = ? WHERE id = ?", keys)
                elif statement == FILL_EXPLORE:
                    for ops in stored_ops(db.execute(STORED_GAMES["sqlite"]).fetchall()):
                        db.executemany(EXPLORE_SQL[OpKind.EXPLORE], [params for _, params in ops])
                elif not column_added(db, statement):
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)", (version, time.time()))
            current = version
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return current


def pragmas(synchronous: str = "FULL") -> list[str]:
    """Pragmas for the server's writing connection: WAL, durable commits, a busy timeout."""
    if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
        raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}")
    return ["PRAGMA journal_mode=WAL", f"PRAGMA synchronous={synchronous.upper()}",
            "PRAGMA busy_timeout=5000", "PRAGMA foreign_keys=OFF"]


def default_db_path() -> Path:
    """The per-user database file: `<user data dir>/kalah-arena/arena.sqlite3` (platformdirs)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "arena.sqlite3"

"""The arena's schema in both dialects as numbered migrations, SQLite's pragmas, and the default file.

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

from protocol.names import name_key
from server.storage.explore import EXPLORE_SQL, FILL_EXPLORE, STORED_GAMES, stored_ops
from server.storage.ops import OpKind

APP_NAME = "kalah-arena"

Migration = tuple[int, tuple[str, ...]]

VERSION_TABLE = {
    "sqlite": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)",
    "postgres": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
                " applied_at DOUBLE PRECISION NOT NULL)",
}

FILL_NAME_KEYS = "-- fill players.name_key"
"""A migration step run in Python, not as SQL: give each stored player its name's canonical form."""
PLAYER_NAMES = "SELECT id, name FROM players ORDER BY created_at, id"
"""Every player's id and name, oldest first (the first to hold a name keeps it)."""

MATCHES_BY_CREATION = "CREATE INDEX IF NOT EXISTS matches_by_creation ON matches(created_at)"
"""Pages of stored games of every status, newest first, read in order instead of sorting every match."""
MATCHES_BY_SEAT = (
    "CREATE INDEX IF NOT EXISTS matches_by_seat0 ON matches(seat0)",
    "CREATE INDEX IF NOT EXISTS matches_by_seat1 ON matches(seat1)",
)
"""A player's matches found from its seats (whether it played here, its open and live seats) instead of reading
every match."""
PLAYERS_BY_CREATION = "CREATE INDEX IF NOT EXISTS players_by_creation ON players(created_at, id)"
"""The players made last, read at start-up without reading (or sorting) every stored player."""


def name_keys(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(key, id) to store for each player row (id, name), oldest first: a name's first holder gets its canonical
    form; a later holder of the same form (stored before names were unique in the schema) gets none."""
    seen: set[str] = set()
    keys = []
    for player_id, name in rows:
        key = name_key(name)
        if key not in seen:
            seen.add(key)
            keys.append((key, player_id))
    return keys


SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    (1, (
        """CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT,
    bot TEXT,
    created_at REAL NOT NULL
)""",
        """CREATE TABLE IF NOT EXISTS matches (
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
)""",
        "CREATE INDEX IF NOT EXISTS matches_by_status ON matches(status, created_at)",
        """CREATE TABLE IF NOT EXISTS actions (
    match_id TEXT NOT NULL REFERENCES matches(id),
    ply INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    seat0_ms INTEGER NOT NULL,
    seat1_ms INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (match_id, ply)
) WITHOUT ROWID""",
        """CREATE TABLE IF NOT EXISTS ratings (
    player_id TEXT PRIMARY KEY REFERENCES players(id),
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL
)""",
        """CREATE TABLE IF NOT EXISTS quarantine (
    match_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
)""",
    )),
    (2, (
        """CREATE TABLE IF NOT EXISTS engine_forfeits (
    match_id TEXT PRIMARY KEY,
    seat INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    detail TEXT NOT NULL,
    at REAL NOT NULL
)""",
    )),
    (3, (
        "CREATE TABLE IF NOT EXISTS guards (key TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    started_at REAL NOT NULL,
    beat_at REAL NOT NULL
)""",
        "CREATE TABLE IF NOT EXISTS match_owners (match_id TEXT PRIMARY KEY, node TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS match_owners_by_node ON match_owners(node)",
    )),
    (4, (
        "CREATE TABLE IF NOT EXISTS store (id TEXT PRIMARY KEY)",
        "INSERT INTO store (id) SELECT lower(hex(randomblob(12))) WHERE NOT EXISTS (SELECT 1 FROM store)",
    )),
    (5, (
        """CREATE TABLE IF NOT EXISTS bans (
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (kind, target)
)""",
        """CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL
)""",
    )),
    (6, (
        """CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    creator TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    started_at REAL
)""",
        "CREATE INDEX IF NOT EXISTS events_by_status ON events(status, created_at)",
        """CREATE TABLE IF NOT EXISTS event_entrants (
    event_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    active INTEGER NOT NULL,
    joined_at REAL NOT NULL,
    PRIMARY KEY (event_id, name)
)""",
        """CREATE TABLE IF NOT EXISTS event_pairings (
    event_id TEXT NOT NULL,
    rnd INTEGER NOT NULL,
    tbl INTEGER NOT NULL,
    south TEXT NOT NULL,
    north TEXT,
    match_id TEXT UNIQUE,
    score REAL,
    PRIMARY KEY (event_id, rnd, tbl)
)""",
    )),
    (7, (
        "ALTER TABLE players ADD COLUMN name_key TEXT",
        FILL_NAME_KEYS,
        "CREATE UNIQUE INDEX IF NOT EXISTS players_by_name_key ON players(name_key)",
    )),
    (8, (
        "ALTER TABLE event_entrants ADD COLUMN seed INTEGER",
    )),
    (9, (
        "ALTER TABLE events ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
        "CREATE TABLE IF NOT EXISTS event_owners (event_id TEXT PRIMARY KEY, node TEXT NOT NULL)",
    )),
    (10, (
        MATCHES_BY_CREATION,
    )),
    (11, (
        "ALTER TABLE matches ADD COLUMN creator_network TEXT",
        "ALTER TABLE matches ADD COLUMN creator_address TEXT",
    )),
    (12, MATCHES_BY_SEAT),
    (13, (PLAYERS_BY_CREATION,)),
    (14, (
        """CREATE TABLE IF NOT EXISTS credentials (
    id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    secret TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    used_at REAL
)""",
        "CREATE INDEX IF NOT EXISTS credentials_by_player ON credentials(player_id, kind)",
        """CREATE TABLE IF NOT EXISTS account_sessions (
    id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    client TEXT NOT NULL,
    address TEXT NOT NULL,
    created_at REAL NOT NULL,
    seen_at REAL NOT NULL,
    ended_at REAL
)""",
        "CREATE INDEX IF NOT EXISTS account_sessions_by_player ON account_sessions(player_id, ended_at)",
    )),
    (15, (
        """CREATE TABLE IF NOT EXISTS reviews (
    match_id TEXT PRIMARY KEY,
    review TEXT NOT NULL,
    exact INTEGER NOT NULL,
    at REAL NOT NULL
)""",
    )),
    (16, (
        """CREATE TABLE IF NOT EXISTS passkey_challenges (
    id TEXT PRIMARY KEY,
    challenge TEXT NOT NULL,
    purpose TEXT NOT NULL,
    session_id TEXT NOT NULL,
    rp_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    expires_at REAL NOT NULL
)""",
        "CREATE INDEX IF NOT EXISTS passkey_challenges_by_expiry ON passkey_challenges(expires_at)",
    )),
    (17, (
        """CREATE TABLE IF NOT EXISTS explore (
    position INTEGER NOT NULL,
    player TEXT NOT NULL,
    action TEXT NOT NULL,
    rated INTEGER NOT NULL,
    band INTEGER NOT NULL,
    bot INTEGER NOT NULL,
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    rating_sum REAL NOT NULL,
    last_at REAL NOT NULL,
    last_match TEXT NOT NULL,
    PRIMARY KEY (position, player, action, rated, band, bot)
) WITHOUT ROWID""",
        FILL_EXPLORE,
    )),
    (18, (
        """CREATE TABLE IF NOT EXISTS puzzles (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    puzzle TEXT NOT NULL,
    exact INTEGER NOT NULL,
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    plays INTEGER NOT NULL DEFAULT 0,
    solved INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
)""",
        "CREATE INDEX IF NOT EXISTS puzzles_by_rating ON puzzles(variant, rating)",
        """CREATE TABLE IF NOT EXISTS puzzle_players (
    player_id TEXT PRIMARY KEY,
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    solved INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0
)""",
        """CREATE TABLE IF NOT EXISTS puzzle_attempts (
    player_id TEXT NOT NULL,
    puzzle_id TEXT NOT NULL,
    correct INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (player_id, puzzle_id)
)""",
    )),
    (19, (
        "CREATE INDEX IF NOT EXISTS puzzles_by_exact_rating ON puzzles(exact, rating, id)",
        "CREATE INDEX IF NOT EXISTS puzzles_by_variant_rating ON puzzles(variant, exact, rating, id)",
        "DROP INDEX IF EXISTS puzzles_by_rating",
    )),
    (20, (
        "ALTER TABLE guards ADD COLUMN expires_at REAL",
        "UPDATE guards SET expires_at = 0 WHERE key LIKE 'review:%'",
        "ALTER TABLE reviews ADD COLUMN redone INTEGER NOT NULL DEFAULT 0",
    )),
    (21, (
        "UPDATE guards SET expires_at = (julianday('now') - 2440587.5) * 86400.0 + 3600"
        " WHERE expires_at IS NULL AND (key LIKE 'code:%' OR key LIKE 'passkey-%')",
    )),
)

# The same tables with PostgreSQL's types: times stay UNIX seconds (DOUBLE PRECISION), clocks
# 64-bit milliseconds, `rated` a boolean. No foreign keys: SQLite declares its references but does
# not enforce them (foreign_keys=OFF), so a write that commits on one backend commits on the other;
# the arena orders its writes (a player before its seat, a match before its actions) and reads
# tolerate a missing player, as they do on SQLite.
POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    (1, (
        """CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT,
    bot TEXT,
    created_at DOUBLE PRECISION NOT NULL
)""",
        """CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    rated BOOLEAN NOT NULL DEFAULT TRUE,
    status TEXT NOT NULL,
    seat0 TEXT,
    seat1 TEXT,
    creator_seat INTEGER NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION,
    result INTEGER,
    winner_seat INTEGER,
    reason TEXT
)""",
        "CREATE INDEX IF NOT EXISTS matches_by_status ON matches(status, created_at)",
        """CREATE TABLE IF NOT EXISTS actions (
    match_id TEXT NOT NULL,
    ply INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    seat0_ms BIGINT NOT NULL,
    seat1_ms BIGINT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (match_id, ply)
)""",
        """CREATE TABLE IF NOT EXISTS ratings (
    player_id TEXT PRIMARY KEY,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    games INTEGER NOT NULL
)""",
        """CREATE TABLE IF NOT EXISTS quarantine (
    match_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
)""",
    )),
    (2, (
        """CREATE TABLE IF NOT EXISTS engine_forfeits (
    match_id TEXT PRIMARY KEY,
    seat INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    detail TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
)""",
    )),
    (3, (
        "CREATE TABLE IF NOT EXISTS guards (key TEXT PRIMARY KEY)",
        """CREATE TABLE IF NOT EXISTS nodes (
    id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    beat_at DOUBLE PRECISION NOT NULL
)""",
        "CREATE TABLE IF NOT EXISTS match_owners (match_id TEXT PRIMARY KEY, node TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS match_owners_by_node ON match_owners(node)",
    )),
    (4, (
        "CREATE TABLE IF NOT EXISTS store (id TEXT PRIMARY KEY)",
        "INSERT INTO store (id) SELECT substr(md5(random()::text || clock_timestamp()::text), 1, 24)"
        " WHERE NOT EXISTS (SELECT 1 FROM store)",
    )),
    (5, (
        """CREATE TABLE IF NOT EXISTS bans (
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (kind, target)
)""",
        """CREATE TABLE IF NOT EXISTS audit (
    id BIGSERIAL PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL
)""",
    )),
    (6, (
        """CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    settings TEXT NOT NULL,
    creator TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    started_at DOUBLE PRECISION
)""",
        "CREATE INDEX IF NOT EXISTS events_by_status ON events(status, created_at)",
        """CREATE TABLE IF NOT EXISTS event_entrants (
    event_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    active BOOLEAN NOT NULL,
    joined_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (event_id, name)
)""",
        """CREATE TABLE IF NOT EXISTS event_pairings (
    event_id TEXT NOT NULL,
    rnd INTEGER NOT NULL,
    tbl INTEGER NOT NULL,
    south TEXT NOT NULL,
    north TEXT,
    match_id TEXT UNIQUE,
    score DOUBLE PRECISION,
    PRIMARY KEY (event_id, rnd, tbl)
)""",
    )),
    (7, (
        "ALTER TABLE players ADD COLUMN IF NOT EXISTS name_key TEXT",
        FILL_NAME_KEYS,
        "CREATE UNIQUE INDEX IF NOT EXISTS players_by_name_key ON players(name_key)",
    )),
    (8, (
        "ALTER TABLE event_entrants ADD COLUMN IF NOT EXISTS seed INTEGER",
    )),
    (9, (
        "ALTER TABLE events ADD COLUMN IF NOT EXISTS version INTEGER NOT NULL DEFAULT 0",
        "CREATE TABLE IF NOT EXISTS event_owners (event_id TEXT PRIMARY KEY, node TEXT NOT NULL)",
    )),
    (10, (
        MATCHES_BY_CREATION,
    )),
    (11, (
        "ALTER TABLE matches ADD COLUMN IF NOT EXISTS creator_network TEXT",
        "ALTER TABLE matches ADD COLUMN IF NOT EXISTS creator_address TEXT",
    )),
    (12, MATCHES_BY_SEAT),
    (13, (PLAYERS_BY_CREATION,)),
    (14, (
        """CREATE TABLE IF NOT EXISTS credentials (
    id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    secret TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    created_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION
)""",
        "CREATE INDEX IF NOT EXISTS credentials_by_player ON credentials(player_id, kind)",
        """CREATE TABLE IF NOT EXISTS account_sessions (
    id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    client TEXT NOT NULL,
    address TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION
)""",
        "CREATE INDEX IF NOT EXISTS account_sessions_by_player ON account_sessions(player_id, ended_at)",
    )),
    (15, (
        """CREATE TABLE IF NOT EXISTS reviews (
    match_id TEXT PRIMARY KEY,
    review TEXT NOT NULL,
    exact BOOLEAN NOT NULL,
    at DOUBLE PRECISION NOT NULL
)""",
    )),
    (16, (
        """CREATE TABLE IF NOT EXISTS passkey_challenges (
    id TEXT PRIMARY KEY,
    challenge TEXT NOT NULL,
    purpose TEXT NOT NULL,
    session_id TEXT NOT NULL,
    rp_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
)""",
        "CREATE INDEX IF NOT EXISTS passkey_challenges_by_expiry ON passkey_challenges(expires_at)",
    )),
    (17, (
        """CREATE TABLE IF NOT EXISTS explore (
    position BIGINT NOT NULL,
    player TEXT NOT NULL,
    action TEXT NOT NULL,
    rated INTEGER NOT NULL,
    band INTEGER NOT NULL,
    bot INTEGER NOT NULL,
    games INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    draws INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    rating_sum DOUBLE PRECISION NOT NULL,
    last_at DOUBLE PRECISION NOT NULL,
    last_match TEXT NOT NULL,
    PRIMARY KEY (position, player, action, rated, band, bot)
)""",
        FILL_EXPLORE,
    )),
    (18, (
        """CREATE TABLE IF NOT EXISTS puzzles (
    id TEXT PRIMARY KEY,
    variant TEXT NOT NULL,
    puzzle TEXT NOT NULL,
    exact BOOLEAN NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    plays INTEGER NOT NULL DEFAULT 0,
    solved INTEGER NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL
)""",
        "CREATE INDEX IF NOT EXISTS puzzles_by_rating ON puzzles(variant, rating)",
        """CREATE TABLE IF NOT EXISTS puzzle_players (
    player_id TEXT PRIMARY KEY,
    rating DOUBLE PRECISION NOT NULL,
    rd DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    solved INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0
)""",
        """CREATE TABLE IF NOT EXISTS puzzle_attempts (
    player_id TEXT NOT NULL,
    puzzle_id TEXT NOT NULL,
    correct BOOLEAN NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (player_id, puzzle_id)
)""",
    )),
    (19, (
        "CREATE INDEX IF NOT EXISTS puzzles_by_exact_rating ON puzzles(exact, rating, id)",
        "CREATE INDEX IF NOT EXISTS puzzles_by_variant_rating ON puzzles(variant, exact, rating, id)",
        "DROP INDEX IF EXISTS puzzles_by_rating",
    )),
    (20, (
        "ALTER TABLE guards ADD COLUMN IF NOT EXISTS expires_at DOUBLE PRECISION",
        "UPDATE guards SET expires_at = 0 WHERE key LIKE 'review:%'",
        "ALTER TABLE reviews ADD COLUMN IF NOT EXISTS redone INTEGER NOT NULL DEFAULT 0",
    )),
    (21, (
        "UPDATE guards SET expires_at = extract(epoch FROM clock_timestamp()) + 3600"
        " WHERE expires_at IS NULL AND (key LIKE 'code:%' OR key LIKE 'passkey-%')",
    )),
)

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

"""PostgreSQL's schema as numbered migrations, the same versions as SQLite's (`server.storage.schema`)."""

from __future__ import annotations

from server.storage.explore import FILL_EXPLORE
from server.storage.schema_steps import (
    FILL_NAME_KEYS,
    MATCHES_BY_CREATION,
    MATCHES_BY_SEAT,
    PLAYERS_BY_CREATION,
    Migration,
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

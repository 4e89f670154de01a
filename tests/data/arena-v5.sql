-- An arena database made by kalah-arena at schema version 5 (before names were unique in the schema), dumped
-- with sqlite3's iterdump after real play: Ana and bob in a live match; then, written by that code's own
-- storage writer, the duplicates two cluster nodes could store (ANA beside Ana, Engine:Racer beside engine:racer).
BEGIN TRANSACTION;
CREATE TABLE actions (
    match_id TEXT NOT NULL REFERENCES matches(id),
    ply INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    seat0_ms INTEGER NOT NULL,
    seat1_ms INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (match_id, ply)
) WITHOUT ROWID;
INSERT INTO "actions" VALUES('mfacc12dbf80',0,0,'1',0,0,1.79570410600935554505e+09);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE bans (
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (kind, target)
);
CREATE TABLE engine_forfeits (
    match_id TEXT PRIMARY KEY,
    seat INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    detail TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE guards (key TEXT PRIMARY KEY);
CREATE TABLE match_owners (match_id TEXT PRIMARY KEY, node TEXT NOT NULL);
CREATE TABLE matches (
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
INSERT INTO "matches" VALUES('mfacc12dbf80','kalah(4,3)',1,'live','pd2286d54eec','p5cb9b348827',0,1.79570410599036359784e+09,NULL,NULL,NULL,NULL);
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    started_at REAL NOT NULL,
    beat_at REAL NOT NULL
);
CREATE TABLE players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT,
    bot TEXT,
    created_at REAL NOT NULL
);
INSERT INTO "players" VALUES('pd2286d54eec','Ana','cac792b523cd13bfbc1fd91e5424af2d48c774a559d5a407d00379673fc89b46',NULL,1.79570410598800849909e+09);
INSERT INTO "players" VALUES('p5cb9b348827','bob','dffdbd23ed12bd9ed54f7d3d8e7589fe8adf6e7def6bca397faade84012ebddd',NULL,1.79570410599545073502e+09);
INSERT INTO "players" VALUES('pdup0000ana1','ANA',NULL,NULL,1.79570410601308035848e+09);
INSERT INTO "players" VALUES('edup00engine','engine:racer',NULL,NULL,1.7957041060177893638e+09);
INSERT INTO "players" VALUES('pdup00racer1','Engine:Racer',NULL,NULL,1.79570410602051639551e+09);
CREATE TABLE quarantine (
    match_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE ratings (
    player_id TEXT PRIMARY KEY REFERENCES players(id),
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL
);
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL);
INSERT INTO "schema_version" VALUES(1,1.79570410596974539755e+09);
INSERT INTO "schema_version" VALUES(2,1.79570410596979284289e+09);
INSERT INTO "schema_version" VALUES(3,1.7957041059699306488e+09);
INSERT INTO "schema_version" VALUES(4,1.79570410597005510324e+09);
INSERT INTO "schema_version" VALUES(5,1.79570410597017216685e+09);
CREATE TABLE store (id TEXT PRIMARY KEY);
INSERT INTO "store" VALUES('f9094112eaf94a37cde5981e');
CREATE INDEX matches_by_status ON matches(status, created_at);
CREATE INDEX match_owners_by_node ON match_owners(node);
DELETE FROM "sqlite_sequence";
COMMIT;

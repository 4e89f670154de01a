-- An arena database made by kalah-arena before schema versions (its schema is version 1), dumped with
-- sqlite3's iterdump after real play: a finished rated game, a live match, an open one, a quarantined row.
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
INSERT INTO "actions" VALUES('m3ffaba6598c',0,0,'3',0,0,1.79544243801209259031e+09);
INSERT INTO "actions" VALUES('m3ffaba6598c',1,0,'1',0,0,1.79544243802410531047e+09);
INSERT INTO "actions" VALUES('m8b40b348969',0,0,'1',0,0,1.79544243804664278027e+09);
INSERT INTO "actions" VALUES('m8b40b348969',1,1,'6',0,0,1.79544243804755020146e+09);
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
INSERT INTO "matches" VALUES('m3ffaba6598c','kalah(6,4)',1,'finished','p66fef1616e2','p81712830d4a',0,1.79544243800006985659e+09,1.79544243802730464935e+09,NULL,0,'resign');
INSERT INTO "matches" VALUES('m8b40b348969','kalah(4,3)',1,'live','pf3e8da994d8','p6102d20c713',0,1.7954424380357842445e+09,NULL,NULL,NULL,NULL);
INSERT INTO "matches" VALUES('m2f4ed243085','kalah(6,5)',1,'open',NULL,'p138e2e850dc',1,1.79544243805367064476e+09,NULL,NULL,NULL,NULL);
INSERT INTO "matches" VALUES('m-broken','nosuch(1,1)',0,'quarantined',NULL,NULL,0,1700000000.0,NULL,NULL,NULL,NULL);
CREATE TABLE players (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT,
    bot TEXT,
    created_at REAL NOT NULL
);
INSERT INTO "players" VALUES('p66fef1616e2','alice','238b4868c3a816869ee43e054f0c8cb0a8ee62d55fc49fe50953d0898ff8cb99',NULL,1.79544243797462844849e+09);
INSERT INTO "players" VALUES('p81712830d4a','bob','4cbaca0cb4715676d5e0fa71798211063f7590c2cbe2025eee1dfca229d25eea',NULL,1.79544243800546169274e+09);
INSERT INTO "players" VALUES('pf3e8da994d8','carol','ac838d1a63a0ddd6b855f1e7add3a94142667c76be9e3b4139ef00a0db07757b',NULL,1.7954424380302071571e+09);
INSERT INTO "players" VALUES('p6102d20c713','dave','845ef415e21e960556c8b5f84628103cf804ea4c2201b60503c7080bcaff3292',NULL,1.79544243803807187075e+09);
INSERT INTO "players" VALUES('p138e2e850dc','erin','70acaca1e93aa3df2e2a074f3b8c9b63dd550587968c8ad83b07b408d8806953',NULL,1.79544243804942250247e+09);
CREATE TABLE quarantine (
    match_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
INSERT INTO "quarantine" VALUES('m-broken','VariantError: bad variant ''nosuch(1,1)'': expected kalah(H,S[,option=value...])',1.79544243807902216916e+09);
CREATE TABLE ratings (
    player_id TEXT PRIMARY KEY REFERENCES players(id),
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL
);
INSERT INTO "ratings" VALUES('p66fef1616e2',1.66231089390629767875e+03,2.90318963717980466293e+02,5.99996753723381417988e-02,1);
INSERT INTO "ratings" VALUES('p81712830d4a',1.33768910609370232124e+03,2.90318963717980466293e+02,5.99996753723381417988e-02,1);
CREATE INDEX matches_by_status ON matches(status, created_at);
COMMIT;

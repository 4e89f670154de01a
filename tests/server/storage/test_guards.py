"""Claims in `guards` (schema versions 3, 20 and 21) on both backends: claims with a time lapse and are swept, claims
kept for good stay, and the race claims stored before they had a time get one."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

from server.storage import open_storage
from server.storage.migrations_sqlite import SQLITE_MIGRATIONS
from server.storage.schema import migrate_sqlite
from server.storage.writer import RACE_S, op_guard, op_guard_sweep, race_claim

CLAIMS = "SELECT key FROM guards WHERE key NOT LIKE 'kalah:%'"
"""The claims stored (not the probe that checks the file can be written)."""


async def test_a_sweep_deletes_the_lapsed_claims_and_only_them(any_db: str | Path) -> None:
    """Lapsed leases and race claims go; live ones and claims kept for good stay."""
    now = time.time()
    storage = await open_storage(any_db)
    try:
        await storage.write([op_guard("review:lapsed", now - 1), op_guard("review:live", now + 600),
                             op_guard("m:g1:3"), race_claim("code:old", now - RACE_S - 1), race_claim("code:new", now)])
        before = {str(r[0]) for r in await storage.fetch_rows(CLAIMS)}
        await storage.write([op_guard_sweep(now)])
        after = {str(r[0]) for r in await storage.fetch_rows(CLAIMS)}
    finally:
        await storage.close()
    assert before - after == {"review:lapsed", "code:old"}
    assert {"review:live", "m:g1:3", "code:new"} <= after


def test_race_claims_stored_before_they_had_a_time_get_an_hour(tmp_path: Path) -> None:
    """Version 21 gives the recovery-code and passkey claims stored without a time an hour from the migration; other
    claims without one are kept for good."""
    path = tmp_path / "arena.sqlite3"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        migrate_sqlite(db, SQLITE_MIGRATIONS[:-1])
        db.executemany("INSERT INTO guards (key) VALUES (?)",
                       [("code:c1",), ("passkey-count:ab:3",), ("passkey-challenge:w1",), ("m:g1:3",), ("e:t1:2",)])
        start = time.time()
        migrate_sqlite(db)
        times = dict(db.execute("SELECT key, expires_at FROM guards").fetchall())
    for key in ("code:c1", "passkey-count:ab:3", "passkey-challenge:w1"):
        assert start + 3500 < times[key] < time.time() + 3700, key
    assert times["m:g1:3"] is None and times["e:t1:2"] is None

"""Versioned migrations on both backends: a file from before versions opens and resumes, a newer schema is refused,
pending steps apply once and in order, a failed step changes nothing, and nodes starting together migrate once."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from server.storage import ConflictError, SchemaError, is_postgres, open_storage
from server.storage.games import PLAYED
from server.storage.migrations_postgres import POSTGRES_MIGRATIONS
from server.storage.migrations_sqlite import SQLITE_MIGRATIONS
from server.storage.schema import migrate_sqlite
from server.storage.schema_steps import Migration
from server.storage.writer import PLAYERS, op_player
from tests.conftest import Serve
from tests.helpers.paths import ROOT_DIR
from tests.helpers.wire import Client

DATA = ROOT_DIR / "tests" / "data"
LATEST = SQLITE_MIGRATIONS[-1][0]


async def query(source: str | Path, sql: str) -> list[tuple[Any, ...]]:
    """Run one statement on a database of either backend with a connection of its own; its rows."""
    if not is_postgres(source):
        with closing(sqlite3.connect(source, isolation_level=None)) as db:
            return [tuple(r) for r in db.execute(sql).fetchall()]
    import asyncpg

    conn = await asyncpg.connect(str(source))
    try:
        return [tuple(r) for r in await conn.fetch(sql)]
    finally:
        await conn.close()


async def versions(source: str | Path) -> list[int]:
    """The schema versions recorded in a database."""
    return [int(v) for (v,) in await query(source, "SELECT version FROM schema_version ORDER BY version")]


async def migrate(source: str | Path, migrations: tuple[Migration, ...]) -> int:
    """Apply `migrations` to a database of either backend with the backend's own migrator."""
    if not is_postgres(source):
        with closing(sqlite3.connect(source, isolation_level=None)) as db:
            return migrate_sqlite(db, migrations)
    import asyncpg

    from server.storage.postgres import migrate as migrate_postgres

    conn = await asyncpg.connect(str(source))
    try:
        return await migrate_postgres(conn, migrations)
    finally:
        await conn.close()


def test_both_backends_have_the_same_numbered_steps() -> None:
    """SQLite and PostgreSQL migrations have the same versions, 1 up, each with as many statements."""
    assert [(v, len(s)) for v, s in SQLITE_MIGRATIONS] == [(v, len(s)) for v, s in POSTGRES_MIGRATIONS]
    assert [v for v, _ in SQLITE_MIGRATIONS] == list(range(1, LATEST + 1))


async def test_a_file_from_before_versions_opens_migrates_and_resumes(serve: Serve, tmp_path: Path) -> None:
    """A database made by the release before schema versions (a dump of real play) is marked version 1, gets
    version 2, and the server resumes its live and open matches, lists its finished game and keeps its quarantine."""
    db = tmp_path / "arena.sqlite3"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript((DATA / "arena-unversioned.sql").read_text())
    assert await query(db, "SELECT name FROM sqlite_master WHERE name = 'schema_version'") == []
    running = await serve(db)
    assert await versions(db) == list(range(1, LATEST + 1))
    rooms = {m.match_id: (m.status, m.ply) for m in (r.match for r in running.arena.rooms.values())}
    assert rooms == {"m8b40b348969": ("live", 2), "m2f4ed243085": ("open", 0)}
    assert running.arena.quarantined == 1
    [game] = await running.arena.storage.list_games()
    assert (game.match_id, game.south, game.north, game.record, game.winner, game.reason) == (
        "m3ffaba6598c", "alice", "bob", "3 1", "alice", "resign")
    assert running.arena.ratings["p66fef1616e2"][0].rating > 1500
    await running.close()
    running = await serve(db)
    assert await versions(db) == list(range(1, LATEST + 1)) and len(running.arena.rooms) == 2


async def test_a_version_5_file_gets_unique_canonical_names_and_resumes(serve: Serve, tmp_path: Path) -> None:
    """A database made by the code before names were unique in the schema, holding two names stored twice, is
    migrated: every player keeps its row, the oldest holder of a name keeps it, a new claim of it is refused,
    and its live match resumes."""
    db = tmp_path / "arena.sqlite3"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript((DATA / "arena-v5.sql").read_text())
    assert await versions(db) == [1, 2, 3, 4, 5]
    running = await serve(db)
    assert await versions(db) == list(range(1, LATEST + 1))
    keys = dict(await query(db, "SELECT name, name_key FROM players"))
    assert keys == {"Ana": "ana", "bob": "bob", "ANA": None, "engine:racer": "engine:racer", "Engine:Racer": None}
    [room] = running.arena.rooms.values()
    assert (room.match.status, room.match.ply, [s.name for s in room.match.seats if s]) == ("live", 1, ["Ana", "bob"])
    newcomer = await Client.open(running.url, None)
    assert (await newcomer.request("error", type="hello", name="ANA"))["code"] == "name_taken"
    with pytest.raises(ConflictError):
        await running.arena.storage.write([op_player("p-other-bob", "BOB", None)])


async def test_the_schema_refuses_a_second_player_of_one_canonical_name(any_db: str | Path) -> None:
    """Two rows whose names are one after NFKC and case folding cannot both be stored (ConflictError); the same
    id stored again is kept as it is (a hosted bot's row comes with each of its first joins)."""
    storage = await open_storage(any_db)
    try:
        await storage.write([op_player("p1", "Zoë", None)])
        with pytest.raises(ConflictError):
            await storage.write([op_player("p2", "ＺＯË", None)])
        await storage.write([op_player("p1", "Zoë", None)])
    finally:
        await storage.close()
    assert await query(any_db, "SELECT id, name, name_key FROM players") == [("p1", "Zoë", "zoë")]


async def test_a_fresh_database_is_created_at_the_latest_version(any_db: str | Path) -> None:
    """Opening an empty database creates every table at the latest version; opening it again changes nothing."""
    for _ in range(2):
        storage = await open_storage(any_db)
        await storage.close()
    assert await versions(any_db) == list(range(1, LATEST + 1))
    assert await query(any_db, "SELECT count(*) FROM engine_forfeits") == [(0,)]


async def test_a_database_keeps_one_random_identity(any_db: str | Path, tmp_path: Path) -> None:
    """A database is given a random identity with its schema; it stays through reopening, another file has another."""
    seen = []
    for source in (any_db, any_db, tmp_path / "other.sqlite3"):
        storage = await open_storage(source)
        seen.append(await storage.store_id())
        await storage.close()
    assert seen[0] == seen[1] != seen[2] and len(seen[0]) == 24
    assert await query(any_db, "SELECT count(*) FROM store") == [(1,)]


async def test_a_database_newer_than_this_code_is_refused_and_left_alone(any_db: str | Path) -> None:
    """A schema version this code does not know stops the open with SchemaError; nothing is written."""
    await (await open_storage(any_db)).close()
    await query(any_db, f"INSERT INTO schema_version (version, applied_at) VALUES ({LATEST + 7}, 0)")
    with pytest.raises(SchemaError, match=f"version {LATEST + 7}"):
        await open_storage(any_db)
    assert await versions(any_db) == [*range(1, LATEST + 1), LATEST + 7]


async def test_pending_steps_apply_once_in_order_and_a_failed_step_changes_nothing(any_db: str | Path) -> None:
    """A database at the latest version takes the next two steps in order, once; a step that fails rolls back
    with every step of its run, leaving the version and the tables as they were."""
    base = POSTGRES_MIGRATIONS if is_postgres(any_db) else SQLITE_MIGRATIONS
    await (await open_storage(any_db)).close()
    grown = (*base, (LATEST + 1, ("CREATE TABLE extra (x INTEGER)",)),
             (LATEST + 2, ("INSERT INTO extra (x) VALUES (7)",)))
    assert await migrate(any_db, grown) == LATEST + 2
    assert await migrate(any_db, grown) == LATEST + 2
    assert await query(any_db, "SELECT x FROM extra") == [(7,)]
    broken = (*grown, (LATEST + 3, ("CREATE TABLE more (y INTEGER)",)),
              (LATEST + 4, ("CREATE TABLE extra (x INTEGER)",)))
    with pytest.raises(Exception, match="extra"):
        await migrate(any_db, broken)
    assert await versions(any_db) == list(range(1, LATEST + 3))
    with pytest.raises(Exception, match="more"):
        await query(any_db, "SELECT y FROM more")


async def test_steps_run_again_over_a_database_that_has_them_change_nothing(any_db: str | Path) -> None:
    """Every step from version 17 on, run again over a database that already took it (its versions forgotten), adds
    no column twice and fails nowhere, on both backends: the database comes back to the latest version as it was."""
    storage = await open_storage(any_db)
    await storage.close()
    before = await query(any_db, "SELECT count(*) FROM guards")
    await query(any_db, "DELETE FROM schema_version WHERE version >= 17")
    base = POSTGRES_MIGRATIONS if is_postgres(any_db) else SQLITE_MIGRATIONS
    assert await migrate(any_db, base) == LATEST
    assert await versions(any_db) == list(range(1, LATEST + 1))
    assert await query(any_db, "SELECT count(*) FROM guards") == before


async def test_nodes_starting_together_on_one_postgres_database_migrate_it_once(pg_url: str) -> None:
    """Several nodes migrating one new PostgreSQL database at once all succeed; each version is applied once."""
    assert await asyncio.gather(*(migrate(pg_url, POSTGRES_MIGRATIONS) for _ in range(4))) == [LATEST] * 4
    assert await versions(pg_url) == list(range(1, LATEST + 1))


async def plan(source: str | Path, sql: str) -> str:
    """The query plan of `sql` (no placeholders), PostgreSQL's with sequential scans priced out so that an index
    is used wherever one can be."""
    if not is_postgres(source):
        return "\n".join(str(row[-1]) for row in await query(source, f"EXPLAIN QUERY PLAN {sql}"))
    import asyncpg

    conn = await asyncpg.connect(str(source))
    try:
        await conn.execute("SET enable_seqscan = off")
        return "\n".join(row[0] for row in await conn.fetch(f"EXPLAIN {sql}"))
    finally:
        await conn.close()


async def test_whether_a_player_played_here_is_read_from_its_seats_not_every_match(any_db: str | Path) -> None:
    """Whether an identity played here (asked for each analysis of a fresh identity) is answered from the seat
    indexes; reading every finished match of a large store instead, each lookup was a cost
    a flood of new identities could multiply."""
    storage = await open_storage(any_db)
    await storage.close()
    found = await plan(any_db, PLAYED.replace("?", "'p1'", 1).replace("?", "10", 1)
                       .replace("?", "'p1'", 1).replace("?", "10", 1))
    assert "matches_by_seat0" in found and "matches_by_seat1" in found, found
    assert "matches_by_status" not in found and "SCAN m\n" not in f"{found}\n", found


async def test_a_start_reads_the_players_made_last_by_their_index(any_db: str | Path) -> None:
    """A server starts with the players made last read by the index on their creation (schema version 13), not
    by reading and sorting every stored player: identities are made by the thousand an hour, and each start
    read them all into memory."""
    storage = await open_storage(any_db)
    try:
        for i in range(5):
            await storage.write([op_player(f"p{i}", f"name{i}", None)])
        assert [p.player_id for p in await storage.players(3)] == ["p2", "p3", "p4"]
        assert [p.name for p in await storage.players(9)] == [f"name{i}" for i in range(5)]
    finally:
        await storage.close()
    found = await plan(any_db, PLAYERS.replace("?", "3"))
    assert "players_by_creation" in found, found
    assert "TEMP B-TREE" not in found and "Sort" not in found, found

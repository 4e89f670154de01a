"""`kalah backup` and `kalah restore`: a copy taken while a real server plays holds every acknowledged action."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import subprocess
import urllib.request
from contextlib import closing
from pathlib import Path

from protocol import Game, Variant
from server.storage import fetch_game
from server.storage.migrations_sqlite import SQLITE_MIGRATIONS
from server.storage.schema import SCHEMA
from tests.conftest import Serve
from tests.helpers.cluster_play import loopback, start_node, stop_nodes
from tests.helpers.pg import PostgresServer, query
from tests.helpers.processes import KALAH, spawn
from tests.helpers.wire import Client, action_msg, eventually, live_match

VARIANT = "kalah(6,4)"
PAIRS = 6


async def kalah(*args: str) -> tuple[int, str]:
    """Run `kalah ARGS...` in a child process; its exit status and its output and errors together."""
    proc = await spawn(*KALAH, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def keep_playing(url: str, index: int, acked: dict[str, list[str]], stop: asyncio.Event) -> None:
    """Play random actions as fast as acks come back, match after match, noting each acknowledged one, until
    `stop` (an action sent is always waited for, so at the end every stored action was acknowledged)."""
    rng = random.Random(index)
    game_no = 0
    while not stop.is_set():
        source = loopback(index, per=1)  # each pair from an address of its own: under the per-address rate
        south = await Client.open(url, f"s{index}g{game_no}", source=source)
        reply = await south.request("snapshot", type="create", variant=VARIANT, seat="south")
        match_id = str(reply["match_id"])
        north = await Client.open(url, f"n{index}g{game_no}", source=source)
        await north.request("snapshot", type="join", match_id=match_id)
        game_no += 1
        acked[match_id] = []
        game = Game(Variant.parse(VARIANT))
        seats = {"SOUTH": south, "NORTH": north}
        while not game.over and not stop.is_set():
            mover = seats[game.position.to_move.name]
            action = rng.choice(game.position.legal_actions())
            await mover.send(**action_msg(action, match_id, game.ply))
            ack = await mover.expect("ack", timeout=20)
            assert ack["ply"] == game.ply
            acked[match_id].append(action.token())
            game.play(action)
        await south.close()
        await north.close()


async def test_backup_under_load_restores_every_acknowledged_action(tmp_path: Path) -> None:
    """A backup taken while six pairs play holds every action acknowledged before it began, nothing that was not
    acknowledged, passes integrity_check, restores, and a server resumes from the restored file."""
    db, copy, restored = tmp_path / "arena.sqlite3", tmp_path / "copy.sqlite3", tmp_path / "restored.sqlite3"
    proc, url = await start_node(str(db), None, "backup")
    acked: dict[str, list[str]] = {}
    stop = asyncio.Event()
    players: list[asyncio.Task[None]] = []
    try:
        players = [asyncio.create_task(keep_playing(url, i, acked, stop)) for i in range(PAIRS)]
        await eventually(lambda: len(acked) >= PAIRS and sum(map(len, acked.values())) >= 100, timeout=60,
                         what="a hundred acknowledged actions")
        before = {match_id: list(tokens) for match_id, tokens in acked.items()}
        status, out = await kalah("backup", "--db", str(db), str(copy))
        assert status == 0, out
        assert "integrity ok" in out
        total = sum(map(len, acked.values()))
        await eventually(lambda: any(t.done() for t in players) or sum(map(len, acked.values())) >= total + 50,
                         timeout=60, what="play going on after the backup")
        stop.set()
        await asyncio.wait_for(asyncio.gather(*players), 60)
    finally:
        stop.set()
        for task in players:
            task.cancel()
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()

    with closing(sqlite3.connect(copy)) as check:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    status, out = await kalah("restore", str(copy), "--db", str(restored))
    assert status == 0, out
    with closing(sqlite3.connect(restored)) as check:
        stored_ids = {row[0] for row in check.execute("SELECT id FROM matches")}
        unfinished = check.execute("SELECT count(*) FROM matches WHERE status IN ('open', 'live')").fetchone()[0]
    assert set(before) <= stored_ids <= set(acked)
    for match_id, tokens in acked.items():
        stored = fetch_game(restored, match_id)
        record = [] if stored is None else stored.record.split()
        assert record[: len(before.get(match_id, []))] == before.get(match_id, [])  # every action acked before
        assert tokens[: len(record)] == record  # and only acknowledged actions, in order

    proc, url = await start_node(str(restored), None, "restored")
    try:
        health = await asyncio.to_thread(read_health, url)
        assert (health["matches"], health["quarantined"]) == (unfinished, 0)  # every match resumed
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 15) == 0


def read_health(url: str) -> dict[str, int]:
    """The `/health` answer of the server at websocket `url`."""
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=10) as response:
        found: dict[str, int] = json.loads(response.read())
    return found


async def test_restore_refuses_a_newer_schema(tmp_path: Path) -> None:
    """A backup from a newer kalah-arena is refused in one line, and nothing is written."""
    newer, target = tmp_path / "newer.sqlite3", tmp_path / "arena.sqlite3"
    with closing(sqlite3.connect(newer, isolation_level=None)) as db:
        db.executescript(SCHEMA)
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at REAL)")
        db.execute("INSERT INTO schema_version VALUES (?, 0)", (SQLITE_MIGRATIONS[-1][0] + 1,))
    status, out = await kalah("restore", str(newer), "--db", str(target))
    assert status == 1
    assert "newer than this kalah-arena knows" in out and out.count("\n") == 1
    assert not target.exists()


async def test_restore_refuses_a_live_database_and_an_existing_one_without_replace(tmp_path: Path) -> None:
    """Restoring over a database is refused unless --replace, and refused even then while a server has it open;
    once the server stops, --replace puts the backup's matches back."""
    db, copy = tmp_path / "arena.sqlite3", tmp_path / "copy.sqlite3"
    proc, url = await start_node(str(db), None, "live")
    try:
        south, north, match_id = await live_match(url, VARIANT)
        status, out = await kalah("backup", "--db", str(db), str(copy))
        assert status == 0, out
        status, out = await kalah("backup", "--db", str(db), str(copy))
        assert status == 1 and "exists" in out
        status, out = await kalah("restore", str(copy), "--db", str(db))
        assert status == 1 and "--replace" in out
        status, out = await kalah("restore", str(copy), "--db", str(db), "--replace")
        assert status == 1 and "stop the server first" in out and out.count("\n") == 1
        await south.close()
        await north.close()
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 15)
    with closing(sqlite3.connect(db, isolation_level=None)) as damage:  # a change the restore takes away
        damage.execute("DELETE FROM matches")
    status, out = await kalah("restore", str(copy), "--db", str(db), "--replace")
    assert status == 0, out
    stored = fetch_game(db, match_id)
    assert stored is not None and stored.status == "live"


async def test_backup_of_postgres_points_at_pg_dump() -> None:
    """A PostgreSQL URL is refused in one line naming pg_dump."""
    status, out = await kalah("backup", "--db", "postgresql://kalah@localhost/kalah", "/tmp/never")
    assert status == 2 and "pg_dump" in out and out.count("\n") == 1


async def test_backup_into_a_directory_and_a_damaged_backup_refused(tmp_path: Path) -> None:
    """A directory as DEST gets a new timestamped file; a file that is not a database is refused by restore in one
    line, and nothing is written."""
    db, shelf = tmp_path / "arena.sqlite3", tmp_path / "backups"
    shelf.mkdir()
    proc, url = await start_node(str(db), None, "shelf")
    try:
        status, out = await kalah("backup", "--db", str(db), str(shelf))
        assert status == 0, out
    finally:
        await stop_nodes([(proc, url)])
    [made] = list(shelf.iterdir())
    assert made.name.startswith("arena-") and made.suffix == ".sqlite3"
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"not a database at all" * 100)
    status, out = await kalah("restore", str(damaged), "--db", str(tmp_path / "target.sqlite3"))
    assert status == 1 and "damaged or not a SQLite database" in out and out.count("\n") == 1
    assert not (tmp_path / "target.sqlite3").exists()


async def test_the_documented_pg_dump_and_pg_restore_recipe_keeps_every_acknowledged_action(
        postgres: PostgresServer, pg_url: str, tmp_path: Path) -> None:
    """docs/operations.md's PostgreSQL recipe: pg_dump beside a running server, pg_restore into a new database, and a
    server on it resumes the match with every acknowledged action."""
    dump = tmp_path / "kalah.dump"
    proc, url = await start_node(pg_url, None, "pg")
    try:
        south, north, match_id = await live_match(url)
        for ply, (mover, bin_) in enumerate([(south, 1), (north, 9), (south, 2)]):
            assert (await mover.request("ack", type="move", match_id=match_id, ply=ply, bin=bin_))["ply"] == ply
        done = await asyncio.to_thread(subprocess.run, ["pg_dump", "--format=custom", f"--file={dump}", pg_url],
                                       capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    finally:
        await stop_nodes([(proc, url)])
    restored = postgres.new_database()
    done = await asyncio.to_thread(subprocess.run, ["pg_restore", "--no-owner", f"--dbname={restored}", str(dump)],
                                   capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = await query(restored, "SELECT ply, action FROM actions WHERE match_id = $1 ORDER BY ply", match_id)
    assert [(r["ply"], r["action"]) for r in rows] == [(0, "1"), (1, "9"), (2, "2")]
    proc, url = await start_node(restored, None, "pg-restored")
    try:
        back = await Client.open(url, "alice", token=south.welcome["token"])
        assert back.welcome["seats"] == [match_id]
        await back.close()
    finally:
        await stop_nodes([(proc, url)])


async def test_backup_keep_leaves_the_newest_n_timestamped_copies(serve: Serve, tmp_path: Path) -> None:
    """`--keep N` into a directory removes the oldest timestamped backups beyond N, and nothing else; with a file as
    DEST it is refused in one line."""
    db, shelf = tmp_path / "arena.sqlite3", tmp_path / "backups"
    await (await serve(db)).close()
    shelf.mkdir()
    for day in (1, 2, 3):
        (shelf / f"arena-202001{day:02d}T000000Z.sqlite3").write_bytes(b"old")
    (shelf / "arena-before-upgrade.sqlite3").write_bytes(b"kept by hand")
    (shelf / "notes.txt").write_text("mine")
    status, out = await kalah("backup", "--db", str(db), "--keep", "2", str(shelf))
    assert status == 0, out
    assert "removed 2 older backups, keeping the newest 2: arena-20200101T000000Z.sqlite3, " \
           "arena-20200102T000000Z.sqlite3" in out
    names = sorted(path.name for path in shelf.iterdir())
    assert names == ["arena-20200103T000000Z.sqlite3", names[1], "arena-before-upgrade.sqlite3", "notes.txt"]
    assert names[1].startswith("arena-2") and names[1] != names[0]
    status, out = await kalah("backup", "--db", str(db), "--keep", "2", str(tmp_path / "one.sqlite3"))
    assert status == 2 and "--keep needs DEST to be a directory" in out and out.count("\n") == 1

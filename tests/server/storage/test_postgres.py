"""The server on PostgreSQL over real sockets: play, resume after a restart, stored-game reads, standings,
quarantine, the offline tools, `kill -9` durability of `kalah serve --db postgresql://`, and clear errors."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from typing import Any

import asyncpg
import pytest

from cli.main import main
from cli.stored_games import get_game, query_games
from protocol import Game, Variant
from server.storage import StorageError, open_storage, read_offline
from server.storage.writer import op_player
from tests.conftest import Serve
from tests.helpers.cluster_play import start_node
from tests.helpers.pg import _free_port
from tests.helpers.wire import Client, Json, action_msg, eventually, is_game_over, live_match
from tests.server.test_e2e_crash import hammer


async def execute(url: str, sql: str, *args: Any) -> None:
    """Run one statement on the database with a connection of its own."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql, *args)
    finally:
        await conn.close()


async def play_to_end(clients: dict[str, Client], snapshot: Json, rng: random.Random) -> Game:
    """Play random legal actions from a snapshot to the end of its match; each is acknowledged once."""
    mid = snapshot["match_id"]
    game = Game.from_record(Variant.parse(snapshot["variant"]), " ".join(snapshot["record"]))
    seats = {"SOUTH": clients[snapshot["south"]], "NORTH": clients[snapshot["north"]]}
    while not game.over:
        action = rng.choice(game.position.legal_actions())
        mover = seats[game.position.to_move.name]
        ack = await mover.request("ack", **action_msg(action, mid, game.ply))
        assert ack["ply"] == game.ply and not ack["duplicate"]
        game.play(action)
    return game


async def test_a_match_is_played_resumed_after_a_restart_and_read_back(serve: Serve, pg_url: str) -> None:
    """On PostgreSQL a rated match is played, a resent action is acknowledged as a duplicate, a restart resumes
    it with every event, and once finished it is listed, fetched and counted in the standings."""
    running = await serve(pg_url)
    alice, bob, mid = await live_match(running.url, "kalah(4,3)")
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    assert (await alice.request("ack", type="move", match_id=mid, ply=0, bin=1))["duplicate"]
    await running.close()

    running = await serve(pg_url)
    assert running.arena.storage.where == pg_url
    alice = await Client.open(running.url, "alice", token=alice.welcome["token"])
    bob = await Client.open(running.url, "bob", token=bob.welcome["token"])
    assert alice.welcome["seats"] == bob.welcome["seats"] == [mid]
    caught = await bob.request("catch_up", type="sync", match_id=mid, since=0)
    assert [e["kind"] for e in caught["events"]] == ["joined", "joined", "action"]
    await alice.request("snapshot", type="sync", match_id=mid)  # a reconnected seat follows its match again
    snapshot = await bob.request("snapshot", type="sync", match_id=mid)
    game = await play_to_end({"alice": alice, "bob": bob}, snapshot, random.Random(5))
    over = await alice.expect("event", where=is_game_over)
    assert over["result"] == game.result

    reader = await Client.open(running.url, None)
    [listed] = (await reader.request("game_list", type="games"))["games"]
    assert (listed["match_id"], listed["record"], listed["south"], listed["north"]) == (
        mid, game.record().split(), "alice", "bob")
    record = (await reader.request("game_record", type="game", match_id=mid))["game"]
    assert record == listed
    await reader.send(type="game", match_id="nosuch")
    assert await reader.error() == "unknown_match"
    table = await reader.request("standings_table", type="standings", limit=10)
    assert sorted(row["name"] for row in table["rows"]) == ["alice", "bob"]
    assert sum(row["games"] for row in table["rows"]) == 2
    await running.close()
    stored = await asyncio.to_thread(get_game, pg_url, mid)
    assert stored is not None and " ".join(stored.record) == game.record()
    assert [g.match_id for g in await asyncio.to_thread(query_games, pg_url, 10)] == [mid]


async def test_an_unreadable_match_is_quarantined_and_listed_offline(serve: Serve, pg_url: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A match damaged by hand is set aside at start-up on PostgreSQL as on SQLite; the rest resume, and
    `kalah quarantine --db URL` lists it."""
    running = await serve(pg_url)
    _, _, good = await live_match(running.url, names=("alice", "bob"))
    carol, _, bad = await live_match(running.url, names=("carol", "dave"))
    await carol.request("ack", type="move", match_id=bad, ply=0, bin=1)
    await running.close()
    await execute(pg_url, "UPDATE actions SET action = 'zz' WHERE match_id = $1", bad)
    again = await serve(pg_url)
    assert good in again.arena.rooms and bad not in again.arena.rooms and again.arena.quarantined == 1
    await again.close()
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["quarantine", "--db", pg_url]) == 0
    listed = capsys.readouterr().out
    assert bad in listed and "zz" in listed and good not in listed
    third = await serve(pg_url)
    assert third.arena.quarantined == 1 and bad not in third.arena.rooms


async def test_sigkill_of_kalah_serve_on_postgres_loses_no_acknowledged_action(pg_url: str) -> None:
    """`kalah serve --db postgresql://...` killed with SIGKILL mid-play: every acknowledged action is stored, and
    a restarted server resumes the match."""
    proc, url = await start_node(pg_url, None, "crash")
    try:
        south, north, mid = await live_match(url, "kalah(6,4,pie=on)")
        acked: list[tuple[int, str]] = []
        task = asyncio.create_task(hammer(south, north, mid, 3, acked))
        while len(acked) < 8:
            await asyncio.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await asyncio.wait_for(task, 15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    stored = await asyncio.to_thread(read_offline, pg_url, lambda reads: reads.fetch_game(mid))
    assert stored is not None
    record = stored.record.split()
    assert [(ply, record[ply]) for ply, _ in acked] == acked
    proc, url = await start_node(pg_url, None, "crash")
    try:
        back = await Client.open(url, south.welcome["name"], token=south.welcome["token"])
        snapshot = await back.request("snapshot", type="sync", match_id=mid)
        assert snapshot["record"] == record
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0


async def test_an_unreachable_database_is_reported_without_its_password(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listening, or a database that does not exist: a StorageError naming the URL with `***` for the
    password, from the server's open and from the offline tools."""
    url = f"postgresql://kalah:s3cret@127.0.0.1:{_free_port()}/arena"
    with pytest.raises(StorageError) as refused:
        await open_storage(url)
    assert "s3cret" not in str(refused.value) and "kalah:***@127.0.0.1" in str(refused.value)
    assert await asyncio.to_thread(main, ["quarantine", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "kalah:***@" in err and "s3cret" not in err


async def test_a_missing_database_or_one_without_the_arena_tables_is_a_storage_error(pg_url: str) -> None:
    """The offline tools refuse a database that does not exist, or has no arena tables, with a StorageError."""
    with pytest.raises(StorageError, match="does not exist"):
        await asyncio.to_thread(read_offline, pg_url + "-nosuch", lambda reads: reads.list_quarantined())
    with pytest.raises(StorageError, match="quarantine"):
        await asyncio.to_thread(read_offline, pg_url, lambda reads: reads.list_quarantined())


async def test_one_server_writes_a_database_at_a_time(serve: Serve, pg_url: str) -> None:
    """A second server on a database another one is using is refused (it would play the same matches); once the
    first has stopped, it starts."""
    first = await serve(pg_url)
    with pytest.raises(StorageError, match="another kalah server is using this database"):
        await serve(pg_url)
    assert await asyncio.to_thread(main, ["quarantine", "--db", pg_url]) == 0  # offline reads are not writes
    await first.close()
    second = await serve(pg_url)
    assert second.arena.storage.where == pg_url


async def test_the_writer_commits_durably_and_reopens_a_lost_session(pg_url: str) -> None:
    """A database set to `synchronous_commit=off` still gets durable commits from the writer; when the writer's
    session is killed, the next write opens a new one (taking the server's lock again) and commits."""
    database = pg_url.rsplit("/", 1)[1]
    await execute(pg_url, f"ALTER DATABASE {database} SET synchronous_commit = off")
    storage = await open_storage(pg_url)
    try:
        writer: asyncpg.Connection = storage._writer_conn  # type: ignore[attr-defined]
        assert await writer.fetchval("SHOW synchronous_commit") == "on"
        await storage.write([op_player("p1", "ann", None)])
        await execute(pg_url, "SELECT pg_terminate_backend($1)", writer.get_server_pid())
        await eventually(writer.is_closed, what="the writer's session to be seen closed")
        await storage.write([op_player("p2", "bob", None)])
        assert sorted(p.name for p in await storage.players(10)) == ["ann", "bob"]
        with pytest.raises(StorageError, match="another kalah server"):
            await open_storage(pg_url)
    finally:
        await storage.close()

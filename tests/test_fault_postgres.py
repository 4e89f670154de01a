"""PostgreSQL stops under a game and comes back: moves are refused `unavailable` while it is down (nothing that was
not committed is acknowledged), and play resumes by itself when it is back. The test runs its own PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from protocol import Position, Sow, Variant
from tests.conftest import Serve
from tests.pg import PostgresServer, find_bindir, query
from tests.wire import Client, Json, live_match


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test alone (it is stopped and started again), removed at the end."""
    pytest.importorskip("asyncpg", reason="asyncpg is not installed (pip install -e '.[test]')")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


async def move(client: Client, match_id: str, ply: int, house: int) -> Json:
    """Send a move; its ack or its refusal."""
    await client.send(type="move", match_id=match_id, ply=ply, bin=house)
    while True:
        reply = await client.next(timeout=60)
        if reply["type"] in ("ack", "error"):
            return reply


async def test_moves_are_refused_while_postgres_is_down_and_play_resumes(serve: Serve,
                                                                         own_postgres: PostgresServer) -> None:
    """With PostgreSQL stopped mid-game a move is refused `unavailable` (retry hint) and not stored, `list` is
    still answered and `games` is refused `unavailable`; started again, the same move is acknowledged and the
    game goes on; the database holds exactly the acknowledged moves."""
    url = own_postgres.new_database()
    server = await serve(url)
    alice, bob, match_id = await live_match(server.url)
    position = Position.initial(Variant())
    acked: list[str] = []

    async def play(ply: int) -> Json:
        """The side to move plays its first legal house."""
        mover = alice if position.to_move.name == "SOUTH" else bob
        return await move(mover, match_id, ply, position.legal_bins()[0])

    for ply in range(4):
        assert (await play(ply))["type"] == "ack"
        acked.append(str(position.legal_bins()[0]))
        position = position.apply(Sow(position.legal_bins()[0]))
    own_postgres.halt()
    try:
        for _ in range(2):  # the lost session, then a database that refuses connections
            refused = await play(4)
            assert refused["code"] == "unavailable" and refused["retry_ms"] >= 1, refused
        await alice.request("matches", type="list")
        assert (await alice.request("error", type="games"))["code"] == "unavailable"
    finally:
        own_postgres.resume()
    reply = await play(4)
    assert reply["type"] == "ack", reply
    acked.append(str(position.legal_bins()[0]))
    position = position.apply(Sow(position.legal_bins()[0]))
    assert (await play(5))["type"] == "ack"
    acked.append(str(position.legal_bins()[0]))
    rows = await query(url, "SELECT action FROM actions WHERE match_id = $1 ORDER BY ply", match_id)
    assert [row["action"] for row in rows] == acked
    for client in (alice, bob):
        await client.close()

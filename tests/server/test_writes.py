"""Batched socket writes, on a real server and a real websocket client: after a connection's first write in a turn of
the event loop, what it is sent goes out together at the turn's end, in order, before any frame of websockets' own,
and the send limit still drops a reader that stopped."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

from server.assembly import RunningServer
from server.edge.session import frame, push_frames
from server.edge.writes import BatchedConnection
from tests.conftest import Serve
from tests.helpers.wire import eventually


async def connected(serve: Serve) -> tuple[RunningServer, ClientConnection, BatchedConnection]:
    """A server, a client connected to it, and the server's side of that connection."""
    server = await serve()
    client = await connect(server.url)
    await eventually(lambda: len(server.server.connections) == 1, what="the server to hold the connection")
    conn = next(iter(server.server.connections))
    assert isinstance(conn, BatchedConnection)
    return server, client, conn


async def test_frames_sent_in_one_turn_go_out_together_and_in_order(serve: Serve) -> None:
    """The first message pushed in a turn is written at once; the next three are held and written together when the
    turn ends; all arrive in the order pushed."""
    _, client, conn = await connected(serve)
    try:
        assert push_frames(conn, [frame(b'"one"')])
        assert conn.held == []  # written at once
        assert push_frames(conn, [frame(b'"two"'), frame(b'"three"')])
        assert push_frames(conn, [frame(b'"four"')])
        assert len(conn.held) == 3  # one write at the end of the turn, not two
        assert [await client.recv() for _ in range(4)] == ['"one"', '"two"', '"three"', '"four"']
        assert conn.held == []
        assert push_frames(conn, [frame(b'"five"')])  # a new turn: at once again
        assert conn.held == []
        assert await client.recv() == '"five"'
    finally:
        await client.close()


async def test_websockets_own_writes_follow_the_frames_held_before_them(serve: Serve) -> None:
    """A close started in the same turn as three pushes (two of them held) reaches the client after all three."""
    _, client, conn = await connected(serve)
    assert push_frames(conn, [frame(b'"a"')])
    assert push_frames(conn, [frame(b'"b"')])
    assert push_frames(conn, [frame(b'"c"')])
    assert len(conn.held) == 2
    await conn.close(1000, "bye")
    assert [await client.recv() for _ in range(3)] == ['"a"', '"b"', '"c"']
    with pytest.raises(ConnectionClosedOK) as closed:
        await client.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000


async def test_frames_held_past_the_send_limit_drop_the_connection(serve: Serve) -> None:
    """Held bytes count toward the send limit: a push that takes them past it aborts the connection, and nothing held
    is written."""
    server, client, conn = await connected(serve)
    big = frame(b"x" * 40_000)
    assert push_frames(conn, [big], limit=64 * 1024)  # written at once
    assert push_frames(conn, [big], limit=64 * 1024)  # held: 40,000 bytes unsent
    assert not push_frames(conn, [big], limit=64 * 1024)  # 80,000
    assert await client.recv() == "x" * 40_000  # what was written before
    with pytest.raises(ConnectionClosed):
        await client.recv()  # and nothing held
    await eventually(lambda: server.admission.connections == 0, what="the dropped connection to be cleaned up")

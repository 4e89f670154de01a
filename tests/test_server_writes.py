"""Batched socket writes, on a real server and a real websocket client: what a connection is sent in one turn of the
event loop goes out together, in order, before any frame of websockets' own, and the send limit still drops a reader
that stopped."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

from server.app import RunningServer
from server.session import frame, push_frames
from server.writes import BatchedConnection
from tests.conftest import Serve
from tests.wire import eventually


async def connected(serve: Serve) -> tuple[RunningServer, ClientConnection, BatchedConnection]:
    """A server, a client connected to it, and the server's side of that connection."""
    server = await serve()
    client = await connect(server.url)
    await eventually(lambda: len(server.server.connections) == 1, what="the server to hold the connection")
    conn = next(iter(server.server.connections))
    assert isinstance(conn, BatchedConnection)
    return server, client, conn


async def test_frames_sent_in_one_turn_go_out_together_and_in_order(serve: Serve) -> None:
    """Three messages pushed in one turn are held (nothing written yet), then arrive in the order pushed."""
    _, client, conn = await connected(serve)
    try:
        assert push_frames(conn, [frame(b'"one"')])
        assert push_frames(conn, [frame(b'"two"'), frame(b'"three"')])
        assert len(conn.held) == 3  # one write at the end of the turn, not three
        assert [await client.recv() for _ in range(3)] == ['"one"', '"two"', '"three"']
        assert conn.held == []
    finally:
        await client.close()


async def test_websockets_own_writes_follow_the_frames_held_before_them(serve: Serve) -> None:
    """A close started in the same turn as two pushes reaches the client after both messages."""
    _, client, conn = await connected(serve)
    assert push_frames(conn, [frame(b'"a"')])
    assert push_frames(conn, [frame(b'"b"')])
    await conn.close(1000, "bye")
    assert [await client.recv(), await client.recv()] == ['"a"', '"b"']
    with pytest.raises(ConnectionClosedOK) as closed:
        await client.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000


async def test_frames_held_past_the_send_limit_drop_the_connection(serve: Serve) -> None:
    """Held bytes count toward the send limit: a push that takes them past it aborts the connection, and nothing held
    is written."""
    server, client, conn = await connected(serve)
    big = frame(b"x" * 40_000)
    assert push_frames(conn, [big], limit=64 * 1024)
    assert not push_frames(conn, [big], limit=64 * 1024)
    with pytest.raises(ConnectionClosed):
        await client.recv()
    await eventually(lambda: server.admission.connections == 0, what="the dropped connection to be cleaned up")

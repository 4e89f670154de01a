"""The client's link: a first connection that gives up with one clear reason, and a dropped one that comes back."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve

from client.app import KalahApp, Launch
from client.connection import FIRST_ATTEMPTS, Connection
from protocol.messages import ErrorMessage, ServerMessage, Welcome
from server.assembly import RunningServer, start_server
from tests.helpers.client_hosts import until
from tests.helpers.wire import Client

FAST = (0.01, 0.02)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class Recorder:
    """A connection to `url` whose messages and status lines are kept."""

    def __init__(self, url: str, name: str = "ann", **kw: object) -> None:
        self.messages: list[ServerMessage] = []
        self.status: list[tuple[bool, str]] = []
        self.link = Connection(url, name, on_message=self.messages.append,
                               on_status=lambda ok, text: self.status.append((ok, text)),
                               retry_delays=FAST, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A real server with a fresh database on a free loopback port."""
    running = await start_server(tmp_path / "arena.sqlite3")
    try:
        yield running
    finally:
        await running.close()


async def test_unreachable_server_is_tried_a_bounded_number_of_times() -> None:
    """Nothing listening: the first connection is tried FIRST_ATTEMPTS times, then `run` says why it gave up."""
    url = f"ws://127.0.0.1:{closed_port()}"
    rec = Recorder(url)
    reason = await asyncio.wait_for(rec.link.run(), 10)
    tried = f"tried {FIRST_ATTEMPTS} times"
    assert reason == (f"Could not reach a Kalah Arena server at {url} (connection refused; {tried}): start one "
                      "there with `kalah serve`, or name another with --server.")
    tries = [text for ok, text in rec.status if "Trying again" in text]
    assert len(tries) == FIRST_ATTEMPTS - 1 and tries[0].endswith(f"(2 of {FIRST_ATTEMPTS})…")


async def test_a_websocket_server_that_is_not_kalah_is_left_at_once() -> None:
    """A websocket server that echoes the hello back is not a Kalah server: one attempt, no validation dump."""

    async def echo(ws: ServerConnection) -> None:
        async for data in ws:
            await ws.send(data)

    async with serve(echo, "127.0.0.1", 0) as srv:
        port = srv.sockets[0].getsockname()[1]
        rec = Recorder(f"ws://127.0.0.1:{port}")
        reason = await asyncio.wait_for(rec.link.run(), 10)
    assert reason == (f"ws://127.0.0.1:{port} is not a Kalah Arena server "
                      "(its answer to hello is not a Kalah Arena message): name one with --server (`kalah serve` "
                      "prints its address).")
    assert rec.status == []


async def test_an_http_server_is_not_a_kalah_server() -> None:
    """An HTTP server that answers 404 to the websocket handshake is named as such, without retrying."""

    async def not_found(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(not_found, "127.0.0.1", 0)
    async with srv:
        port = srv.sockets[0].getsockname()[1]
        reason = await asyncio.wait_for(Recorder(f"ws://127.0.0.1:{port}").link.run(), 10)
    assert reason == (f"ws://127.0.0.1:{port} is not a Kalah Arena server (it answered HTTP 404): name one with "
                      "--server (`kalah serve` prints its address).")


async def test_a_refused_name_ends_the_first_connection(server: RunningServer) -> None:
    """A name someone else holds is refused by the server: the client gives up with the server's words, which say
    what to do (before: "say hello with its token")."""
    holder = await Client.open(server.url, "ann")
    try:
        reason = await asyncio.wait_for(Recorder(server.url, "ann").link.run(), 10)
    finally:
        await holder.close()
    assert reason is not None and reason.startswith(f"{server.url} refused to let you in as 'ann': ")
    assert "taken" in reason and reason.endswith("(--name NAME plays under another name)")
    assert "say hello" not in reason  # what to do, not the protocol's words:
    assert ("if it is yours, play with its key (the token it was given): kalah play --token KEY, or “Use a key” on "
            "the web page") in reason


async def test_a_refused_new_name_goes_back_to_the_last_identity(server: RunningServer) -> None:
    """Renamed to a taken name, the client passes the refusal on and says hello again as before."""
    holder = await Client.open(server.url, "ann")
    rec = Recorder(server.url, "bob")
    task = asyncio.create_task(rec.link.run())
    try:
        await asyncio.wait_for(until_welcomed(rec, 1), 10)
        rec.link.name, rec.link.token = "ann", None
        await rec.link.drop()
        await asyncio.wait_for(until_welcomed(rec, 2), 10)
        refusals = [m for m in rec.messages if isinstance(m, ErrorMessage)]
        assert len(refusals) == 1 and refusals[0].request == "hello" and "taken" in refusals[0].message
        assert rec.link.name == "bob" and rec.link.connected
    finally:
        await rec.link.close()
        assert await asyncio.wait_for(task, 10) is None
        await holder.close()


async def until_welcomed(rec: Recorder, times: int) -> None:
    """Wait until the connection has been welcomed `times` times."""
    while sum(isinstance(m, Welcome) for m in rec.messages) < times or not rec.link.connected:
        await asyncio.sleep(0.01)


async def test_a_dropped_connection_is_retried_past_the_first_bound(server: RunningServer) -> None:
    """Once welcomed, a lost server is retried beyond FIRST_ATTEMPTS times, and the session comes back."""
    rec = Recorder(server.url, "ann", first_attempts=2)
    task = asyncio.create_task(rec.link.run())
    port = int(server.url.rsplit(":", 1)[1])
    try:
        await asyncio.wait_for(until_welcomed(rec, 1), 10)
        rec.link.url = f"ws://127.0.0.1:{closed_port()}"  # the server is gone for a while
        await rec.link.drop()
        while sum("Reconnecting" in text for _, text in rec.status) < 4:
            await asyncio.sleep(0.01)
        assert not task.done()
        rec.link.url = f"ws://127.0.0.1:{port}"
        await asyncio.wait_for(until_welcomed(rec, 2), 10)
    finally:
        await rec.link.close()
        await asyncio.wait_for(task, 10)


async def test_the_app_exits_with_status_1_and_the_reason() -> None:
    """`kalah play ws://nowhere`: the app shows the retries, then exits non-zero with one line to print."""
    url = f"ws://127.0.0.1:{closed_port()}"
    app = KalahApp(Launch(url=url, animate=False, retry_delays=FAST))
    async with app.run_test(size=(80, 24)) as pilot:
        banner = app.lobby.query_one("#connection")
        await until(pilot, lambda: "Trying again" in str(banner.render()))
        await until(pilot, lambda: app.return_code is not None)
        said = [str(r) for r in app._exit_renderables]  # what Textual prints once the screen is restored
    assert app.return_code == 1
    assert said == [f"kalah: Could not reach a Kalah Arena server at {url} (connection refused; "
                    f"tried {FIRST_ATTEMPTS} times): start one there with `kalah serve`, or name another with "
                    "--server."]

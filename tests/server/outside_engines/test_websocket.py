"""KGP agents over a websocket at `/kgp` on the main port: the same gateway, the same limits as over TCP."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol.kgp import Board, Line, parse_line
from server.front.outside_engines.ws_link import MAX_FRAME
from server.storage import list_games
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, gateway, port_of
from tests.helpers.wire import FirstLegal, eventually


class WsKgp:
    """A KGP client on a websocket: one line per frame, every frame kept as received."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[str] = []
        self.next_id = 1

    @classmethod
    async def open(cls, url: str) -> WsKgp:
        """Connect to `/kgp` of the server at `url`."""
        return cls(await connect(url + "/kgp", max_size=1 << 20))

    async def send(self, text: str | bytes) -> None:
        """Send one frame as it is."""
        await self.ws.send(text)

    async def command(self, text: str, ref: int | None = None) -> None:
        """Send one command with the next odd id, one frame with CRLF (as KWARC's pykgp does)."""
        head = str(self.next_id) + ("" if ref is None else f"@{ref}")
        self.next_id += 2
        await self.send(f"{head} {text}\r\n")

    async def next(self, timeout: float = 5.0) -> Line:
        """The next line the server sent (one frame each)."""
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        assert isinstance(raw, str)
        self.frames.append(raw)
        line = parse_line(raw.rstrip("\r\n"))
        assert line is not None, raw
        return line

    async def expect(self, name: str, timeout: float = 5.0) -> Line:
        """Skip ahead to the next command called `name`."""
        while (line := await self.next(timeout)).name != name:
            pass
        return line

    async def hello(self, name: str, token: str | None = None) -> None:
        """Read the greeting, say who this is, ask for freeplay, read the `ok`."""
        await self.expect("kgp")
        await self.command(f'set info:name "{name}"')
        if token is not None:
            await self.command(f'set auth:token "{token}"')
        await self.command("mode freeplay")
        await self.expect("ok")

    async def play(self, timeout: float = 10.0) -> str:
        """Answer states (first legal pit) and pings until the result; returns it."""
        while True:
            line = await self.next(timeout)
            if line.name == "ping":
                await self.command("pong", ref=line.id)
            elif line.name == "state":
                board = line.args[0]
                assert isinstance(board, Board)
                await self.command(f"move {next(i + 1 for i, s in enumerate(board.south) if s)}", ref=line.id)
                await self.command("yield", ref=line.id)
            elif line.name == "set" and line.args[0] == "arena:result":
                return str(line.args[1])


async def test_an_agent_on_the_websocket_plays_a_stored_rated_game(serve: Serve, tmp_path: Path) -> None:
    """An agent at `/kgp` is greeted, plays the hosted bot, gets its result; each server line is one CRLF frame."""
    running = await gateway(serve)
    agent = await WsKgp.open(running.url)
    await agent.hello("websocketeer", token="ws-agent-token")
    result = await agent.play()
    assert result.split()[0] in ("win", "loss", "draw")
    assert agent.frames[0] == "2 kgp 1 1 0\r\n"
    assert all(frame.endswith("\r\n") and frame.count("\n") == 1 for frame in agent.frames)
    games = await eventually(lambda: list_games(tmp_path / "arena.sqlite3", player="engine:websocketeer"),
                             what="the stored game")
    assert "bot:first" in (games[0].south, games[0].north)
    await agent.ws.close()


async def test_a_websocket_agent_and_a_tcp_agent_meet_in_the_same_queue(serve: Serve) -> None:
    """The websocket endpoint feeds the gateway's one queue: its agent is paired with a TCP agent."""
    running = await gateway(serve, kgp_pair_wait_s=30.0, bot_factory=FirstLegal.make)
    tcp = await KgpClient.open(port_of(running))
    ws = await WsKgp.open(running.url)
    await tcp.hello("over-tcp", token="tcp-agent-token")
    await ws.hello("over-ws", token="ws-agent-token")
    results = await asyncio.gather(tcp.play(), ws.play())
    assert sorted(r.split()[0] for r in results) in (["loss", "win"], ["draw", "draw"])
    assert running.kgp is not None and running.kgp.games == 1
    await tcp.close()
    await ws.ws.close()


async def test_garbage_and_over_long_lines_are_answered_and_ignored(serve: Serve) -> None:
    """Garbage, a 20 KiB line and an unknown command each get an `error`; several lines in one frame and
    a frame without a line break are read; the agent then still plays its game."""
    running = await gateway(serve)
    agent = await WsKgp.open(running.url)
    await agent.expect("kgp")
    await agent.send("\x00\x01 this is not <kgp")
    assert "malformed" in str((await agent.expect("error")).args[0])
    await agent.send("1 set info:comment " + "x" * 20_000)
    assert "bytes ignored" in str((await agent.expect("error")).args[0])
    await agent.send(b"3 frobnicate\r\n")
    assert (await agent.expect("error")).args[0] == "Unknown command"
    await agent.send('5 set info:name "multi"\r\n7 set auth:token "multi-line-token"\r\n9 mode freeplay')
    ok = await agent.expect("ok")
    assert ok.ref == 9
    assert (await agent.play()).split()[0] in ("win", "loss", "draw")
    await agent.ws.close()


async def test_a_frame_beyond_the_frame_limit_closes_the_connection(serve: Serve) -> None:
    """A frame larger than a few lines' limit is refused by the websocket layer (1009), as any oversized message."""
    running = await gateway(serve)
    agent = await WsKgp.open(running.url)
    await agent.expect("kgp")
    await agent.send("x" * (MAX_FRAME + 1))
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await agent.next()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_without_a_gateway_the_endpoint_says_so_and_closes(serve: Serve) -> None:
    """A server started without `kgp_port` answers `/kgp` with one error line and goodbye."""
    running = await serve()
    agent = await WsKgp.open(running.url)
    error = await agent.next()
    assert error.name == "error" and "no KGP gateway" in str(error.args[0])
    assert (await agent.next()).name == "goodbye"
    with pytest.raises(ConnectionClosed):
        await agent.next()


async def test_the_gateway_limits_hold_on_the_websocket(serve: Serve) -> None:
    """One address's second agent is refused (per-address limit), and a flood of lines closes the connection."""
    running = await gateway(serve, kgp_max_per_address=1, kgp_rate=1.0, kgp_burst=5)
    first = await WsKgp.open(running.url)
    await first.expect("kgp")
    second = await WsKgp.open(running.url)
    refusal = await second.next()
    assert refusal.name == "error" and "too many connections" in str(refusal.args[0])
    assert (await second.next()).name == "goodbye"
    await first.send("\n".join(["pong"] * 1100))
    assert "flooding" in str((await first.expect("error")).args[0])
    assert (await first.next()).name == "goodbye"
    with pytest.raises(ConnectionClosed):
        await first.next()


async def test_a_server_shutting_down_says_goodbye_on_the_websocket(serve: Serve) -> None:
    """Closing the server tells a websocket agent goodbye and closes its connection; the close does not wait on it."""
    running = await gateway(serve, kgp_pair_wait_s=30.0)
    agent = await WsKgp.open(running.url)
    await agent.hello("leaver")
    await asyncio.wait_for(running.close(), 10)
    assert (await agent.expect("goodbye")).name == "goodbye"
    with pytest.raises(ConnectionClosed):
        await agent.next()

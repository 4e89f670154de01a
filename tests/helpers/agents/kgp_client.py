"""A scripted KGP client for in-process tests: it sends raw lines and keeps every command it receives."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from protocol.kgp import Board, Line, parse_line
from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.wire import FirstLegal


class KgpClient:
    """One TCP connection to the gateway, read line by line."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.seen: list[Line] = []
        self._pos = 0
        self.next_id = 1
        self.games: list[str] = []
        """The `game:id` of every game announced so far."""

    @classmethod
    async def open(cls, port: int, host: str = "127.0.0.1") -> KgpClient:
        """Connect to the gateway."""
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
        return cls(reader, writer)

    async def send(self, text: str | bytes) -> None:
        """Send one raw line (CRLF added)."""
        data = text.encode() if isinstance(text, str) else text
        self.writer.write(data + b"\r\n")
        await self.writer.drain()

    async def command(self, text: str, ref: int | None = None) -> None:
        """Send a command with the next odd id (and a reference)."""
        head = str(self.next_id) + ("" if ref is None else f"@{ref}")
        self.next_id += 2
        await self.send(f"{head} {text}")

    async def next(self, timeout: float = 5.0) -> Line:
        """The next command not yet consumed; AssertionError if the connection ends first."""
        if self._pos >= len(self.seen):
            raw = await asyncio.wait_for(self.reader.readline(), timeout)
            if not raw:
                raise AssertionError(f"connection closed; last lines {[x.text() for x in self.seen[-5:]]}")
            line = parse_line(raw.decode().rstrip("\r\n"))
            assert line is not None, raw
            self.seen.append(line)
            if line.name == "set" and line.args[:1] == ("game:id",):
                self.games.append(str(line.args[1]))
        self._pos += 1
        return self.seen[self._pos - 1]

    async def expect(self, name: str, timeout: float = 5.0, where: Callable[[Line], bool] | None = None) -> Line:
        """Skip ahead to the next command called `name` (and matching `where`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            line = await self.next(max(0.001, deadline - loop.time()))
            if line.name == name and (where is None or where(line)):
                return line

    async def closed(self, timeout: float = 5.0) -> list[Line]:
        """Read until the server closes the connection; the commands received meanwhile."""
        rest: list[Line] = []
        while True:
            raw = await asyncio.wait_for(self.reader.readline(), timeout)
            if not raw:
                return rest
            line = parse_line(raw.decode().rstrip("\r\n"))
            if line is not None:
                self.seen.append(line)
                rest.append(line)

    def received(self, name: str) -> list[Line]:
        """Every command called `name` received so far."""
        return [line for line in self.seen if line.name == name]

    async def hello(self, name: str = "tester", token: str | None = None) -> Line:
        """Read the greeting, say who this is and ask for freeplay; the `ok` answer."""
        await self.expect("kgp")
        await self.command(f'set info:name "{name}"')
        if token is not None:
            await self.command(f'set auth:token "{token}"')
        await self.command("mode freeplay")
        return await self.expect("ok")

    async def until_game(self, timeout: float = 10.0) -> str:
        """Answer pings until a game is announced; its `game:id`."""
        count = len(self.games)
        while len(self.games) == count:
            line = await self.next(timeout)
            if line.name == "ping":
                await self.command("pong", ref=line.id)
        return self.games[-1]

    async def play(self, choose: Callable[[Board], int | None] | None = None, timeout: float = 10.0) -> str:
        """Answer states (first legal pit unless `choose` says), pings and all, until the result; returns it."""
        while True:
            line = await self.next(timeout)
            if line.name == "ping":
                await self.command("pong", ref=line.id)
            elif line.name == "state":
                board = line.args[0]
                assert isinstance(board, Board)
                pit = choose(board) if choose else next(i + 1 for i, s in enumerate(board.south) if s)
                if pit is not None:
                    await self.command(f"move {pit}", ref=line.id)
                await self.command("yield", ref=line.id)
            elif line.name == "set" and line.args[0] == "arena:result":
                return str(line.args[1])

    async def close(self) -> None:
        """Close the connection."""
        self.writer.close()
        await self.writer.wait_closed()


class KgpClients:
    """Opens clients and closes every one at the end (a test's fixture holds one)."""

    def __init__(self) -> None:
        self.clients: list[KgpClient] = []

    async def open(self, port: int) -> KgpClient:
        """A new client connected to the gateway on `port`."""
        client = await KgpClient.open(port)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        """Close every client opened (those the server closed too)."""
        for client in self.clients:
            client.writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await client.writer.wait_closed()


async def gateway(serve: Serve, **options: Any) -> RunningServer:
    """A server with the KGP gateway on a free port; a lone agent meets the stand-in bot `first` at once."""
    options.setdefault("kgp_port", 0)
    options.setdefault("bot_factory", FirstLegal.make)
    options.setdefault("kgp_bots", ("first",))
    options.setdefault("kgp_pair_wait_s", 0.0)
    options.setdefault("kgp_seed", 7)
    return await serve(**options)


def port_of(running: RunningServer) -> int:
    """The gateway's port."""
    assert running.kgp is not None
    return running.kgp.port

"""A TCP proxy for the tests: one server reached through it can be cut off (its connections closed, new ones
refused) and let through again, as a network partition between one process and a database; or frozen (connections
stay open, nothing passes), as a server that is unreachable without saying so."""

from __future__ import annotations

import asyncio
import contextlib


class TcpProxy:
    """Forwards connections to 127.0.0.1 on a free port to `host:port`, unless cut."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.cut_off = False
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.flowing = asyncio.Event()
        """Cleared while frozen: bytes wait in the proxy."""
        self.flowing.set()

    @property
    def port(self) -> int:
        """The proxy's own port."""
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Listen on a free loopback port."""
        self.server = await asyncio.start_server(self.connected, "127.0.0.1", 0)

    async def connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Forward one connection both ways until either side closes (or the proxy is cut)."""
        if self.cut_off:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}
        try:
            await asyncio.gather(self.pump(reader, up_writer), self.pump(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                self.writers.discard(w)
                w.close()

    async def pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy bytes from `reader` to `writer` until the end."""
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        writer.close()

    def cut(self) -> None:
        """Close every connection through the proxy and refuse new ones."""
        self.cut_off = True
        for writer in list(self.writers):
            writer.transport.abort()

    def freeze(self) -> None:
        """Hold every byte from now on (connections, old and new, stay open and silent)."""
        self.flowing.clear()

    def thaw(self) -> None:
        """Pass the bytes held, and those that follow."""
        self.flowing.set()

    def restore(self) -> None:
        """Let new connections through again."""
        self.cut_off = False

    async def close(self) -> None:
        """Stop listening and close every connection."""
        self.thaw()
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

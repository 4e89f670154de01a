"""What carries an agent's bytes: a TCP stream, or a websocket (`server.front.outside_engines.ws_link`), behind
one interface.

The agent (`server.front.outside_engines.agent`) reads with `read()` (empty bytes: the end) and writes whole
lines with `write()` without waiting; it checks `buffered()` against its send limit and
`abort()`s an agent that stopped reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from server.edge.client_address import peer_host, peer_remote


class Link:
    """A connection to one agent: the bytes it sends, the lines written to it, its address."""

    host: str
    """The peer's network address alone (the unit of per-address limits)."""
    remote: str
    """The peer's address and port, for logs."""

    async def read(self) -> bytes:
        """The next bytes the agent sent; empty at the end of the connection."""
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        """Queue one or more whole lines without waiting."""
        raise NotImplementedError

    def buffered(self) -> int:
        """Bytes written but not yet sent."""
        raise NotImplementedError

    def is_closing(self) -> bool:
        """Whether the connection is closed or closing."""
        raise NotImplementedError

    def abort(self) -> None:
        """Drop the connection at once, unsent bytes and all."""
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection after what was written (without waiting)."""
        raise NotImplementedError


def split_address(peer: object) -> tuple[str, str]:
    """The host alone and `host:port` of a TCP peer address (the KGP port takes no proxy's word: its peer is the
    client)."""
    return peer_host(peer), peer_remote(peer)


class TcpLink(Link):
    """An agent on a TCP connection (the gateway's own port), with keepalive on as go-kgp has it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.host, self.remote = split_address(writer.get_extra_info("peername"))
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)

    async def read(self) -> bytes:
        """Up to 64 KiB of what the agent sent; empty at the end (or on a connection error)."""
        try:
            return await self.reader.read(65536)
        except (ConnectionError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        """Queue the bytes on the transport."""
        self.writer.transport.write(data)

    def buffered(self) -> int:
        """The transport's write buffer."""
        return self.writer.transport.get_write_buffer_size()

    def is_closing(self) -> bool:
        """Whether the transport is closing."""
        return self.writer.transport.is_closing()

    def abort(self) -> None:
        """Abort the transport."""
        self.writer.transport.abort()

    def close(self) -> None:
        """Close the writer (the reader then sees the end). The end is sent at once behind the last line written: a
        line of the agent's still unread here makes the close a reset, which must not cost the agent the lines
        before it (an `error` and `goodbye` it would otherwise never read)."""
        with contextlib.suppress(Exception):
            self.writer.write_eof()
        with contextlib.suppress(Exception):
            self.writer.close()

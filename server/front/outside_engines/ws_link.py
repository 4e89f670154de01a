"""KGP over a websocket at `/kgp` on the server's main port, as go-kgp serves it at `/socket`.

go-kgp wraps the websocket as a byte stream (`websocket.NetConn`): each line it sends is one
text message ending in CRLF, and what the agent sends is read as a stream of lines. Here
each line the gateway sends is one text frame (CRLF included, as go-kgp does), and a frame
the agent sends holds one line or several separated by line breaks; the end of a frame ends
a line, so a client may send one line per frame with or without the break (KWARC's pykgp
adds CRLF). Binary frames are read the same way. The limits are the TCP agents': a line
over 16 KiB is answered with an `error` and ignored; a frame over `MAX_FRAME` bytes closes
the connection (1009).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol.kgp import MAX_LINE
from server.edge.connection import client_of, remote_of
from server.edge.session import push
from server.front.outside_engines.links import Link

if TYPE_CHECKING:
    from server.front.outside_engines.gateway import Gateway

KGP_PATH = "/kgp"
"""The path of the KGP endpoint on the main port."""
MAX_FRAME = 4 * (MAX_LINE + 2)
"""Longest frame an agent may send (a few full-length lines); the main port's own limit is lower."""


def is_kgp(ws: ServerConnection) -> bool:
    """Whether a websocket connection asked for the KGP endpoint."""
    return ws.request is not None and ws.request.path.split("?")[0] == KGP_PATH


class WebSocketLink(Link):
    """An agent on a websocket: frames in, one text frame out per line."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.host, self.remote = client_of(ws), remote_of(ws)
        self._closer: asyncio.Task[None] | None = None

    async def read(self) -> bytes:
        """The next frame's bytes, a line break added when it has none; empty at the end."""
        try:
            data = await self.ws.recv()
        except ConnectionClosed:
            return b""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        return raw if raw.endswith(b"\n") else raw + b"\n"

    def write(self, data: bytes) -> None:
        """Queue each line as a text frame (the agent checks the send buffer)."""
        push(self.ws, data.splitlines(keepends=True), sys.maxsize)

    def buffered(self) -> int:
        """Bytes queued on the transport."""
        transport = self.ws.transport
        return 0 if transport is None else transport.get_write_buffer_size()

    def is_closing(self) -> bool:
        """Whether the websocket is no longer open."""
        transport = self.ws.transport
        return self.ws.protocol.state is not State.OPEN or transport is None or transport.is_closing()

    def abort(self) -> None:
        """Abort the transport."""
        if self.ws.transport is not None:
            self.ws.transport.abort()

    def close(self) -> None:
        """Start the closing handshake (1000) after the frames queued."""
        if self._closer is None:
            self._closer = asyncio.get_running_loop().create_task(self.ws.close())

    async def wait_closed(self) -> None:
        """Wait for a closing handshake this link started."""
        if self._closer is not None:
            with contextlib.suppress(Exception):
                await self._closer


async def serve_kgp(gateway: Gateway | None, ws: ServerConnection) -> None:
    """Serve one KGP agent on a websocket of the main port (without a gateway: say so and close)."""
    ws.protocol.max_message_size = MAX_FRAME
    link = WebSocketLink(ws)
    if gateway is None:
        link.write(b'error "this server runs no KGP gateway (kalah serve --kgp-port)"\r\ngoodbye\r\n')
    else:
        await gateway.attach(link)
    link.close()
    await link.wait_closed()

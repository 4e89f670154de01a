"""The server's websocket connection: batched writes (`server.edge.writes`), and whole text frames read
without websockets' frame parser.

Nearly everything a client sends is one short text message, and it nearly always arrives in one
read: a whole masked text frame. websockets parses each frame with a chain of generators (the
stream's `at_eof` and `read_exact`, `Frame.parse`, an `Opcode` look-up, the protocol's
`recv_frame`, its event list) before the frame reaches the connection's message queue. When
the parser waits at a frame boundary with nothing buffered, and a read holds only whole final
text frames under the size limit, `ArenaConnection` unmasks them and queues the same `Frame`
values itself; anything else (a fragment, a control frame, a partial frame, a frame too big, a
closing connection) goes to websockets' parser as before, which then sees exactly the bytes it
would have seen. The message queue, its flow control and the UTF-8 check when a message is read
are websockets' own either way.
"""

from __future__ import annotations

import asyncio

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN, Event, Protocol
from websockets.streams import StreamReader

try:
    from websockets.speedups import apply_mask  # what websockets' own parser unmasks with
except ImportError:  # pragma: no cover - websockets without its C extension
    from websockets.utils import apply_mask

from server.edge.client_address import NO_PROXIES, TrustedProxies, peer_host, peer_remote
from server.edge.handshakes import Handshakes
from server.edge.writes import BatchedConnection, WriteBatch
from server.logs import event as log_event

_AT_EOF = StreamReader.at_eof.__code__
_PARSE = Protocol.parse.__code__
"""websockets' frame parser waits in the stream's `at_eof` only between frames (its `discard`, after a close, too)."""
_FINAL_TEXT = 0x81
"""The first byte of a final text frame without extension bits."""


def between_frames(protocol: Protocol) -> bool:
    """Whether websockets' parser waits between two frames: its frame loop (under the server's handshake parser)
    is suspended in the stream's `at_eof`, not within a frame."""
    outer: object = protocol.parser
    inner = getattr(outer, "gi_yieldfrom", None)
    while inner is not None and getattr(inner, "gi_yieldfrom", None) is not None:
        outer, inner = inner, inner.gi_yieldfrom
    return getattr(inner, "gi_code", None) is _AT_EOF and getattr(outer, "gi_code", None) is _PARSE


def in_message(protocol: Protocol) -> bool:
    """Whether websockets has read part of a fragmented message (`current_size`; `cur_size` before websockets 16)."""
    return getattr(protocol, "current_size", getattr(protocol, "cur_size", None)) is not None


def frame_limit(protocol: Protocol) -> int | None:
    """The largest frame websockets' parser takes between messages: the least of its message and fragment limits
    (`max_message_size`, `max_fragment_size`; one `max_size` before websockets 16), None without one."""
    limits = [getattr(protocol, name, None) for name in ("max_message_size", "max_fragment_size", "max_size")]
    return min((limit for limit in limits if isinstance(limit, int)), default=None)


def whole_text_frames(data: bytes, max_size: int | None) -> list[bytes] | None:
    """The unmasked payloads of `data` if it is only whole, final, masked text frames (no extension bits) of at most
    `max_size` bytes each (None: no limit) and a 7- or 16-bit length, else None."""
    payloads = []
    end = len(data)
    at = 0
    while at < end:
        if end - at < 6 or data[at] != _FINAL_TEXT:
            return None
        size = data[at + 1] ^ 0x80  # the mask bit must be set: a size below 128 remains
        if size > 126:
            return None
        at += 2
        if size == 126:
            if end - at < 6:
                return None
            size = int.from_bytes(data[at:at + 2], "big")
            at += 2
        if max_size is not None and size > max_size:
            return None
        start = at + 4
        if start + size > end:
            return None
        payloads.append(apply_mask(data[start:start + size], data[at:start]))
        at = start + size
    return payloads or None


MAX_UNREAD = 1024
"""Messages a client may have sent that the server has not read yet. Reading stops once 16 wait (websockets'
`max_queue`), but only after the read that passed them, and one read of 256 KiB holds 40,000 tiny frames (about 230
bytes each in memory): a client that sends far more at once than it is answered is dropped."""


class ArenaConnection(BatchedConnection):
    """A server connection with batched writes that queues whole text frames without websockets' frame parser."""

    max_unread = MAX_UNREAD
    proxies = NO_PROXIES
    """The reverse proxies whose forwarded client address this server's connections believe."""
    handshakes: Handshakes | None = None
    """The server's connections still in their opening handshake (None: not bounded)."""
    _client: str | None = None
    _half_open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """websockets' start; then count the connection among those in their handshake, or drop it past a bound."""
        super().connection_made(transport)
        table = self.handshakes
        if table is None:
            return
        if table.arrive(self, peer_host(self.remote_address), self.drop_half_open):
            self._half_open = True
        else:
            self.drop_half_open()

    def drop_half_open(self) -> None:
        """Drop a connection whose request has not arrived (past a bound, or shed for a newcomer)."""
        transport = self.transport
        if isinstance(transport, asyncio.Transport):
            transport.abort()

    def process_event(self, event: Event) -> None:
        """The request arrived (the first event): the connection's handshake no longer counts as half-open."""
        if self._half_open:
            self._half_open = False
            if self.handshakes is not None:
                self.handshakes.done(self)
        super().process_event(event)

    @property
    def client_host(self) -> str:
        """The client's address: the peer's, or the one a trusted proxy forwarded (fixed once the request is read)."""
        if self._client is not None:
            return self._client
        client = self.proxies.client(peer_host(self.remote_address),
                                     None if self.request is None else self.request.headers)
        if self.request is not None:
            self._client = client
        return client

    @property
    def client_remote(self) -> str:
        """The client's address for logs: the peer's `host:port`, or the forwarded address and the proxy's."""
        client, peer = self.client_host, peer_remote(self.remote_address)
        return peer if peer_host(self.remote_address) == client else f"{client} via {peer}"

    def data_received(self, data: bytes) -> None:
        """Queue the messages of a read that holds only whole text frames, with websockets' parser between frames;
        give any other read to websockets. A connection with more than `max_unread` messages waiting is dropped."""
        protocol = self.protocol
        if (protocol.state is OPEN and not protocol.reader.buffer and not protocol.reader.eof and not protocol.debug
                and not protocol.extensions and not in_message(protocol) and between_frames(protocol)):
            payloads = whole_text_frames(data, frame_limit(protocol))
            if payloads is not None:
                for payload in payloads:
                    self.recv_messages.put(Frame(Opcode.TEXT, payload))
                self.drop_if_flooding()
                return
        super().data_received(data)
        self.drop_if_flooding()

    def drop_if_flooding(self) -> None:
        """Drop the connection (and the messages waiting) if more than `max_unread` messages wait to be read."""
        waiting = self.recv_messages.frames
        if len(waiting) > self.max_unread:
            log_event("unread_close", remote=self.client_remote, unread=len(waiting))
            waiting.queue.clear()  # a closed connection's handler would read them still
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        """websockets' cleanup, then break the protocol's reference cycles (see `release_protocol`)."""
        if self._half_open:
            self._half_open = False
            if self.handshakes is not None:
                self.handshakes.done(self)
        super().connection_lost(exc)
        release_protocol(self.protocol)


def release_protocol(protocol: Protocol) -> None:
    """Break the reference cycles a closed connection's websockets protocol is in, so that reference counting frees
    it (its handshake's headers, its buffers) as soon as the connection is dropped.

    Its frame parser is a generator whose frame refers to the protocol, and the error that ended an unclean close
    holds a traceback through that frame. In a cycle, a closed connection waits for the collector, and the server
    freezes its heap every second (`server.edge.gc_tuning`): every connection that lived a second is then garbage only
    a full collection finds, which under a flood of reconnecting clients grew the process by megabytes a second.
    The connection is closed (websockets called `receive_eof`, its state is CLOSED): the parser is never stepped
    again."""
    parser = protocol.parser
    parser.close()  # a closed generator no longer holds its frame
    if protocol.parser_exc is not None:
        protocol.parser_exc.__traceback__ = None


def connection_class(loop: asyncio.AbstractEventLoop, max_unread: int = MAX_UNREAD,
                     proxies: TrustedProxies = NO_PROXIES,
                     handshakes: Handshakes | None = None) -> type[ArenaConnection]:
    """The connection class of one server, sharing one `WriteBatch` on its loop, its trusted proxies and its table of
    connections in their handshake."""
    return type("ArenaConnection", (ArenaConnection,), {"batch": WriteBatch(loop), "max_unread": max_unread,
                                                        "proxies": proxies, "handshakes": handshakes})


def client_of(conn: ServerConnection) -> str:
    """The client's network address of a connection: the one source every limit, budget, ban and log line reads."""
    return conn.client_host if isinstance(conn, ArenaConnection) else peer_host(conn.remote_address)


def forwarded_https(conn: ServerConnection, headers: Headers) -> bool:
    """Whether a trusted reverse proxy says the client of a connection's request (`headers`) reached it over https
    (`X-Forwarded-Proto`)."""
    return isinstance(conn, ArenaConnection) and conn.proxies.over_https(peer_host(conn.remote_address), headers)


def remote_of(conn: ServerConnection) -> str:
    """The client's address of a connection for logs (with the proxy's `host:port` when forwarded)."""
    return conn.client_remote if isinstance(conn, ArenaConnection) else peer_remote(conn.remote_address)

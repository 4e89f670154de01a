"""Batched socket writes: the frames a connection is sent within one turn of the event loop go out in one write.

Every change publishes to each follower at once (`Room.send_texts`), and a group commit publishes
the changes of many matches in the same turn, so a connection that follows several matches (or gets
an ack, events and a reply together) would otherwise cost one `send` system call per message. A
`BatchedConnection` holds what it is sent until the end of the turn; the server's `WriteBatch` then
writes each connection's frames joined. websockets' own writes (pongs, the closing handshake) go
through `send_data`, which writes what is held first, so the wire keeps the order things were sent in.
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.server import ServerConnection


class WriteBatch:
    """The connections holding frames this turn of the loop, written once the turn's callbacks have run."""

    __slots__ = ("dirty", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.dirty: list[BatchedConnection] = []
        self.scheduled = False

    def add(self, conn: BatchedConnection) -> None:
        """`conn` holds frames now: write them at the end of this turn (one callback for every connection)."""
        self.dirty.append(conn)
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write every held frame, one write per connection."""
        self.scheduled = False
        dirty, self.dirty = self.dirty, []
        for conn in dirty:
            conn.flush()


class BatchedConnection(ServerConnection):
    """A server connection whose frames are held until the end of the loop's turn and written together."""

    batch: WriteBatch
    """The server's batch (set on the class that `connection_class` makes for one server)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: list[bytes] = []
        self.held_bytes = 0

    def hold(self, frames: list[bytes]) -> int:
        """Hold frames (already framed) for this turn's write; the bytes not yet taken by the kernel, held and
        buffered (what the send limit bounds)."""
        if not self.held:
            self.batch.add(self)
        self.held += frames
        self.held_bytes += sum(map(len, frames))
        return self.held_bytes + self.transport.get_write_buffer_size()

    def flush(self) -> None:
        """Write the held frames now, in one write (nothing once the connection is closing or aborted).

        They were held while the connection was open, and websockets writes its close frame through
        `send_data`, which flushes first: whatever is held was sent before any close frame.
        """
        if not self.held:
            return
        data = b"".join(self.held) if len(self.held) > 1 else self.held[0]
        self.held, self.held_bytes = [], 0
        if not self.transport.is_closing():
            self.transport.write(data)

    def send_data(self) -> None:
        """websockets' own writes (a pong, a close frame) go after the frames held before them."""
        self.flush()
        super().send_data()


def connection_class(loop: asyncio.AbstractEventLoop) -> type[BatchedConnection]:
    """The connection class of one server, sharing one `WriteBatch` on its loop."""
    return type("ArenaConnection", (BatchedConnection,), {"batch": WriteBatch(loop)})

"""Batched socket writes: a connection sent several messages within one turn of the event loop gets them in two
writes at most.

Every change publishes to each follower at once (`Room.send_texts`), and a group commit publishes
the changes of many matches in the same turn, so a connection that follows several matches (or gets
an ack, events and a reply together) would otherwise cost one `send` system call per message. A
`BatchedConnection` writes the first frames it is sent in a turn at once (no delay, and no cost
when there is nothing to join), then holds what comes later in the same turn; the server's
`WriteBatch` writes each connection's held frames joined when the turn ends. websockets' own
writes (pongs, the closing handshake) go through `send_data`, which writes what is held first, so
the wire keeps the order things were sent in.
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.protocol import OPEN


class WriteBatch:
    """The turns of the server's loop (one callback a turn, only in turns that write) and the connections holding
    frames until the current one ends."""

    __slots__ = ("dirty", "loop", "scheduled", "turn")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.dirty: list[BatchedConnection] = []
        self.scheduled = False
        self.turn = 0

    def start_turn(self) -> None:
        """A connection writes: make sure the turn's end is marked once the callbacks ready now have run."""
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.end_turn)

    def end_turn(self) -> None:
        """Write every held frame, one write per connection, and begin a new turn."""
        self.scheduled = False
        self.turn += 1
        dirty, self.dirty = self.dirty, []
        for conn in dirty:
            conn.flush()


class BatchedConnection(ServerConnection):
    """A server connection that writes its first frames of a turn at once and holds the rest to the turn's end."""

    batch: WriteBatch
    """The server's batch (set on the class that `connection_class` makes for one server)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held: list[bytes] = []
        self.held_bytes = 0
        self.turn = -1
        """The batch's turn in which this connection last wrote."""

    def send_frames(self, frames: list[bytes]) -> int:
        """Write frames (already framed), or hold them if this connection already wrote this turn; the bytes not yet
        taken by the kernel, held and buffered (what the send limit bounds)."""
        batch = self.batch
        transport = self.transport
        if self.turn == batch.turn:
            if not self.held:
                batch.dirty.append(self)
            self.held += frames
            self.held_bytes += sum(map(len, frames))
            return self.held_bytes + transport.get_write_buffer_size()
        self.turn = batch.turn
        if not batch.scheduled:
            batch.scheduled = True
            batch.loop.call_soon(batch.end_turn)
        if self.protocol.writes:  # websockets writes its own at once: normally nothing is queued
            transport.write(b"".join(self.protocol.data_to_send() + frames))
        else:
            transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        return transport.get_write_buffer_size()

    def push(self, frames: list[bytes], limit: int) -> bool:
        """Send frames on the open connection without waiting (`send_frames`); one whose unsent bytes pass `limit` has
        stopped reading and is aborted (its handler then cleans up). Whether it is still open."""
        transport = self.transport
        if self.protocol.state is not OPEN or transport.is_closing():
            return False
        if self.send_frames(frames) > limit:
            transport.abort()
            return False
        return True

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

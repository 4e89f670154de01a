"""Reading whole text frames without websockets' frame parser: which reads qualify, and on a real server, that every
other read (split frames, control frames between messages, oversized or broken frames) is served as websockets serves
it."""

from __future__ import annotations

import asyncio
import gc
import json
import weakref
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosedError
from websockets.frames import Frame, Opcode

from server.assembly import RunningServer
from server.edge.connection import ArenaConnection, whole_text_frames
from tests.conftest import Serve
from tests.helpers.wire import eventually


def masked(payload: bytes, opcode: Opcode = Opcode.TEXT, fin: bool = True) -> bytes:
    """A client's frame of `payload`, masked as a client must mask it."""
    return Frame(opcode, payload, fin).serialize(mask=True)


def test_whole_final_text_frames_are_unmasked() -> None:
    """One frame, several, and one with a 16-bit length give their payloads in order."""
    long = b"y" * 300
    assert whole_text_frames(masked(b'{"a":1}'), 1000) == [b'{"a":1}']
    assert whole_text_frames(masked(b"one") + masked(b"") + masked(long), 1000) == [b"one", b"", long]


@pytest.mark.parametrize("data", [
    b"",
    masked(b"one")[:-1],  # a partial frame
    masked(b"one") + masked(b"two")[:3],  # a whole frame, then part of one
    Frame(Opcode.TEXT, b"one").serialize(mask=False),  # unmasked
    masked(b"one", Opcode.BINARY),
    masked(b"one", fin=False),  # the first fragment of a message
    masked(b"ping", Opcode.PING) + masked(b"one"),
    masked(b"x" * 70_000),  # a 64-bit length
    masked(b"x" * 1001),  # over the size limit
], ids=["empty", "partial", "whole-then-partial", "unmasked", "binary", "fragment", "ping-first", "64-bit", "too-big"])
def test_other_reads_are_left_to_websockets(data: bytes) -> None:
    """Anything but whole, final, masked text frames within the limit is not taken."""
    assert whole_text_frames(data, 1000) is None


async def raw_client(serve: Serve, **options: Any) -> tuple[RunningServer, ClientConnection]:
    """A server and a websocket client whose socket the test writes frames to by hand."""
    server = await serve(**options)
    client = await connect(server.url)
    await eventually(lambda: len(server.server.connections) == 1, what="the server to hold the connection")
    assert isinstance(next(iter(server.server.connections)), ArenaConnection)
    return server, client


async def reply(client: ClientConnection) -> dict[str, object]:
    """The next message the server sends, decoded."""
    message: dict[str, object] = json.loads(await asyncio.wait_for(client.recv(), 10))
    return message


HELLO = json.dumps({"type": "hello", "name": "ann"}).encode()
LIST = json.dumps({"type": "list"}).encode()


async def test_messages_in_one_read_split_reads_and_around_a_ping_are_all_served(serve: Serve) -> None:
    """Two messages in one read, a message split over two reads, and one after a ping in the same read are each
    answered in order, and the ping gets its pong."""
    _, client = await raw_client(serve)
    try:
        client.transport.write(masked(HELLO) + masked(LIST))
        assert (await reply(client))["type"] == "welcome"
        assert (await reply(client))["type"] == "matches"
        split = masked(LIST)
        client.transport.write(split[:5])
        await asyncio.sleep(0.05)
        client.transport.write(split[5:] + masked(LIST))
        assert [(await reply(client))["type"] for _ in range(2)] == ["matches", "matches"]
        pong = await client.ping(b"p1")
        client.transport.write(masked(b"p2", Opcode.PING) + masked(LIST))
        assert (await reply(client))["type"] == "matches"
        await asyncio.wait_for(pong, 10)
    finally:
        await client.close()


@pytest.mark.parametrize(("payload", "code"), [(b"x" * 2000, 1009), (b'{"type": "\xff"}', 1007)],
                         ids=["too-big", "not-utf-8"])
async def test_a_frame_too_big_or_not_utf8_closes_as_websockets_closes_it(serve: Serve, payload: bytes,
                                                                          code: int) -> None:
    """A whole frame over the message limit (1009) or that is not UTF-8 (1007) closes the connection with
    websockets' code, even arriving in one read."""
    _, client = await raw_client(serve, max_message_bytes=1024)
    client.transport.write(masked(payload))
    with pytest.raises(ConnectionClosedError) as closed:
        await asyncio.wait_for(client.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code  # the server's close frame


@pytest.mark.parametrize("how", ["close", "abort"])
async def test_a_closed_connection_is_freed_without_the_garbage_collector(serve: Serve, how: str) -> None:
    """A connection that said hello and then closed cleanly, or dropped its socket, is freed by reference counting
    once its handler ends: its session, its websocket connection and protocol are gone with the collector off.
    Before, reference cycles (the session's seat check, websockets' frame parser) kept them for the collector,
    and the server freezes its heap every second: under a flood of reconnecting clients the closed connections
    piled up until the next full collection."""
    server = await serve()
    gc.disable()
    try:
        client = await connect(server.url)
        await client.send(HELLO.decode())
        assert (await reply(client))["type"] == "welcome"
        session = next(s for peer in server.admission.peers.values() for s in peer.sessions)
        refs: list[weakref.ref[Any]] = [weakref.ref(session), weakref.ref(session.ws), weakref.ref(session.ws.protocol)]
        del session
        if how == "close":
            await client.close()
        else:
            assert client.transport is not None
            client.transport.abort()
        await eventually(lambda: all(ref() is None for ref in refs), timeout=3,
                         what="the closed connection's session, connection and protocol to be freed")
    finally:
        gc.enable()


@pytest.mark.parametrize("parser", ["ours", "websockets"])
async def test_a_client_that_sends_far_more_at_once_than_it_is_answered_is_dropped(serve: Serve, parser: str) -> None:
    """Past `max_unread` messages waiting to be read, whichever parser queued them (whole frames, or a read that
    begins with a ping), the connection is dropped and the waiting messages are not served: reading stops only after
    the read that passed websockets' queue, and one read can hold tens of thousands of tiny frames in memory.
    A client within the bound is answered every message."""
    server, client = await raw_client(serve, max_unread=32, rate=1000, burst=1000)
    first = masked(b"p", Opcode.PING) if parser == "websockets" else b""
    client.transport.write(first + masked(HELLO) + masked(LIST) * 20)
    assert [(await reply(client))["type"] for _ in range(21)] == ["welcome"] + ["matches"] * 20
    client.transport.write(first + masked(LIST) * 200)
    answered = 0
    with pytest.raises(ConnectionClosedError):
        while True:
            answered += (await reply(client))["type"] == "matches"
    assert answered < 200, answered
    await eventually(lambda: server.admission.connections == 0, what="the dropped connection uncounted")

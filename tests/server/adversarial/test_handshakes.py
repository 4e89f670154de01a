"""Half-sent HTTP requests (loopback 127.1.x.y stands in for attackers' addresses; honest clients use 127.0.0.2):
sockets whose request never ends are bounded per address, per network and in all, shed fairly at the bound and
timed out, so they cannot use up the server's open files."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from functools import partial

from server.edge.handshakes import Handshakes
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, attacker, eventually

HALF = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
"""The start of a handshake whose end never comes."""

Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@contextlib.asynccontextmanager
async def half_requests() -> AsyncIterator[list[Stream]]:
    """A list to open half-sent requests into; every one closed at the end."""
    streams: list[Stream] = []
    try:
        yield streams
    finally:
        for _, writer in streams:
            writer.close()


async def open_half(port: int, source: str, streams: list[Stream]) -> None:
    """Open a connection from `source` and send the start of a request that never ends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(HALF)
    await writer.drain()
    streams.append((reader, writer))


async def dropped(stream: Stream, wait_s: float = 0.5) -> bool:
    """Whether the server closed (or reset) a half-sent request's connection within `wait_s`."""
    reader, _ = stream
    try:
        return await asyncio.wait_for(reader.read(1), wait_s) == b""
    except TimeoutError:  # an OSError too: caught first
        return False
    except (ConnectionError, OSError):
        return True


async def health(port: int) -> dict[str, object]:
    """`GET /health` from an honest address."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(HONEST, 0))
    try:
        writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200"), head
        return dict(json.loads(await asyncio.wait_for(reader.readline(), 5)))
    finally:
        writer.close()


async def test_one_address_holds_at_most_64_half_sent_requests(serve: Serve) -> None:
    """200 half-sent requests from one address: the server keeps 64 (what the address may hold open) and drops the
    rest at once (before: all 200 held for 10 s each); `/health` and an honest player's connection are served
    meanwhile."""
    server = await serve()
    async with half_requests() as streams:
        for _ in range(200):
            await open_half(server.port, attacker(0), streams)
        await eventually(lambda: server.admission.handshakes.refused >= 136)
        kept = [not await dropped(stream, 0.05) for stream in streams]
        assert sum(kept) == 64, sum(kept)
        assert (await health(server.port))["handshakes"] == 64
        player = await Client.open(server.url, "player", source=HONEST)
        await player.close()


async def test_many_networks_cannot_keep_everyone_out_and_half_requests_time_out(serve: Serve) -> None:
    """At the bound in all (here 60), 20 networks holding 3 half-sent requests each cannot keep an honest newcomer
    out: it makes the most crowded network's oldest drop; a network past its own bound is dropped at accept; every
    half-sent request is closed after the handshake timeout."""
    server = await serve(max_handshakes=60, max_handshakes_per_prefix=3, max_handshakes_per_address=3,
                         handshake_timeout=2.0)
    async with half_requests() as streams:
        for network in range(20):
            for _ in range(4):
                await open_half(server.port, attacker(0, network=10 + network), streams)
        await eventually(lambda: server.admission.handshakes.count == 60)
        async with half_requests() as honest:
            await open_half(server.port, HONEST, honest)
            await eventually(lambda: server.admission.handshakes.refused >= 21)
            assert not await dropped(honest[0], 0.05)
            player = await Client.open(server.url, "player", source=HONEST)  # a whole request is served too
            await player.close()
            assert await dropped(honest[0], 10)  # the timeout closes a half request
        await eventually(lambda: server.admission.handshakes.count == 0, timeout=10)
        assert all([await dropped(stream, 0.05) for stream in streams])


def test_handshake_table_counts_and_sheds() -> None:
    """The table counts a connection until its request arrives, and sheds the crowded network's oldest for a
    newcomer from elsewhere at the bound in all."""
    dropped_ids: list[int] = []
    table = Handshakes(per_address=2, per_prefix=4, in_all=4)
    for i in range(4):
        assert table.arrive(i, f"127.1.0.{1 + i % 2}", partial(dropped_ids.append, i))
    assert not table.arrive(9, "127.1.0.1", lambda: None)  # the address holds 2
    assert table.arrive(10, "127.2.0.1", lambda: dropped_ids.append(10))  # sheds 127.1.0.0/24's oldest
    assert dropped_ids == [0] and table.count == 4
    table.done(10)
    table.done(10)
    assert table.count == 3 and table.of_address == {"127.1.0.2": 2, "127.1.0.1": 1}

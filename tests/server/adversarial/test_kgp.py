"""The KGP side door under attack, all at once: a full house of idle connections, a slow-loris, a 1 MiB line and
an agent that never answers ping; honest agents still connect and play whole games."""

from __future__ import annotations

import asyncio
import contextlib
import os

from protocol.kgp import Line
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, gateway, port_of

IDLE = int(os.environ.get("KALAH_TEST_KGP_IDLE", "1000"))
"""Idle connections opened (the gateway's default limit in all is 1,000)."""


async def connect(port: int, source: str) -> KgpClient:
    """A KGP connection from loopback address `source`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0), limit=1 << 21)
    return KgpClient(reader, writer)


async def slow_loris(client: KgpClient, stop: asyncio.Event) -> None:
    """Send one byte a second, never a whole line, until stopped or closed."""
    with contextlib.suppress(ConnectionError, OSError):
        while not stop.is_set() and not client.writer.is_closing():
            client.writer.write(b"x")
            await client.writer.drain()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)


def errors(lines: list[Line]) -> list[str]:
    """The texts of the `error` commands among `lines`."""
    return [str(line.args[0]) for line in lines if line.name == "error"]


async def test_idle_slow_huge_and_silent_agents_cost_honest_agents_nothing(serve: Serve) -> None:
    """With every slot taken by idle connections (16 from each of 63 addresses), a slow-loris, a 1 MiB line and an
    agent that never answers ping, two honest agents still connect and play whole games: the crowded network's
    oldest idle connections make room, the huge line is refused unread, the silent agent is dropped."""
    running = await gateway(serve, kgp_variant="kalah(6,4,clock=1/move)", kgp_pong_s=0.5, kgp_mode_s=60)
    port = port_of(running)
    clients: list[KgpClient] = []
    stop = asyncio.Event()
    try:
        for i in range(IDLE):
            clients.append(await connect(port, f"127.3.{i // 16 // 250}.{1 + i // 16 % 250}"))
        loris = await connect(port, "127.4.0.1")
        clients.append(loris)
        dripping = asyncio.create_task(slow_loris(loris, stop))
        huge = await connect(port, "127.5.0.1")
        clients.append(huge)
        await huge.expect("kgp")
        await huge.send(b"set info:comment " + b"x" * (1 << 20))
        assert "bytes ignored" in str((await huge.expect("error", timeout=30)).args[0])
        silent = await connect(port, "127.6.0.1")
        clients.append(silent)
        await silent.hello("silent")
        honest = [await connect(port, "127.0.0.2") for _ in range(2)]
        clients.extend(honest)
        for agent in honest:
            await agent.hello("honest")
        results = await asyncio.gather(*(agent.play(timeout=30) for agent in honest))
        assert all(result.split()[0] in ("win", "loss", "draw") for result in results), results
        await huge.command("mode freeplay")  # refused a line, not the connection
        await huge.expect("ok")
        dropped = await silent.closed(timeout=30)
        assert any("pong" in text.lower() or "ping" in text.lower() for text in errors(dropped)), dropped
        hosts = [agent.host for agent in running.kgp.agents] if running.kgp is not None else []
        assert 1 <= IDLE - sum(host.startswith("127.3.") for host in hosts) <= 5  # a few of the oldest made room
        assert "127.4.0.1" in hosts  # the slow-loris is in a network of its own: not shed (its mode timeout ends it)
        stop.set()
        await dripping
    finally:
        stop.set()
        for client in clients:
            client.writer.close()
        for client in clients:
            with contextlib.suppress(ConnectionError, OSError):
                await client.writer.wait_closed()

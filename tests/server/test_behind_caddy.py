"""A real Caddy (Debian's package, its internal CA) in front of a server started with `--trusted-proxy 127.0.0.1/32`:
Chromium plays a whole game over https and wss through it, clients from different loopback addresses are counted
apart, and a forged `X-Forwarded-For` (through Caddy, or straight to the server) changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.browser import SKIP, Pages, chromium, host_wait_finished, play_out, start_from_lobby
from tests.helpers.caddy import CaddyProxy, caddy_proxy
from tests.helpers.wire import Client


@contextlib.asynccontextmanager
async def behind_caddy(server: RunningServer, folder: Path) -> AsyncIterator[CaddyProxy]:
    """Caddy in front of `server` (started in a thread: the server keeps serving meanwhile), killed at the end."""
    with contextlib.ExitStack() as stack:
        proxy = await asyncio.to_thread(stack.enter_context, caddy_proxy(server.port, folder))
        try:
            yield proxy
        finally:
            await asyncio.to_thread(stack.close)


async def via(proxy: CaddyProxy, source: str, forged: str | None = None, name: str | None = None) -> Client:
    """A client from loopback `source` through Caddy (sending a forged `X-Forwarded-For` if given)."""
    extra: dict[str, Any] = {} if forged is None else {"additional_headers": {"X-Forwarded-For": forged}}
    client = Client(await connect(proxy.url, ssl=proxy.client_context(), local_addr=(source, 0), **extra))
    if name is not None:
        client.welcome = await client.request("welcome", type="hello", name=name)
    return client


async def refused(proxy: CaddyProxy, source: str) -> int | None:
    """The HTTP status a handshake from `source` through Caddy is refused with; None if it was accepted."""
    try:
        client = await via(proxy, source)
    except InvalidStatus as exc:
        return exc.response.status_code
    await client.close()
    return None


def held(server: RunningServer) -> dict[str, int]:
    """Connections the server counts per address (those holding any)."""
    return {address: peer.connections for address, peer in server.admission.peers.live.items() if peer.connections}


@pytest.fixture
def caddy_folder(tmp_path: Path) -> Path:
    """Where the test's Caddy keeps its configuration, CA and log."""
    return tmp_path / "caddy"


async def test_clients_behind_caddy_are_counted_apart_and_forged_headers_change_nothing(
        serve: Serve, caddy_folder: Path) -> None:
    """Through Caddy, 127.1.0.1 and 127.1.0.2 are two addresses with a limit each; what a client writes in
    `X-Forwarded-For` (Caddy replaces it) or sends straight to the server (not a trusted proxy) counts for nothing."""
    server = await serve(trusted_proxies=("127.0.0.1/32",), max_per_address=2)
    async with behind_caddy(server, caddy_folder) as proxy:
        first = [await via(proxy, "127.1.0.1", forged=f"203.0.113.{i}", name=f"p{i}") for i in (1, 2)]
        assert await refused(proxy, "127.1.0.1") == 429, "a third connection of one address through the proxy"
        other = await via(proxy, "127.1.0.2", name="other")
        direct = Client(await connect(server.url, local_addr=("127.1.0.3", 0),
                                      additional_headers={"X-Forwarded-For": "203.0.113.3"}))
        await direct.request("matches", type="list")
        assert held(server) == {"127.1.0.1": 2, "127.1.0.2": 1, "127.1.0.3": 1}
        [session] = server.admission.peers.live["127.1.0.2"].sessions
        assert session.remote.startswith("127.1.0.2 via 127.0.0.1:"), "the log lines' address"
        for client in (*first, other, direct):
            await client.close()


@SKIP
async def test_chromium_plays_a_whole_game_through_caddy(serve: Serve, caddy_folder: Path) -> None:
    """The page comes over https from Caddy, its socket is wss through Caddy, and a game against a bot is played to
    its end."""
    server = await serve(trusted_proxies=("127.0.0.1/32",))
    async with behind_caddy(server, caddy_folder) as proxy, chromium() as browser:
        context = await browser.new_context(ignore_https_errors=True)
        pages = Pages(browser, proxy.web_url)
        page = await pages.open("/", context=context)
        match_id = await start_from_lobby(page, "greedy", {"houses": "3", "seeds": "2", "clock": ""})
        assert await play_out([page]) > 0
        assert await page.evaluate("window.__socket.url") == proxy.url + "/"
        host = await Client.open(proxy.url, "host", tls=proxy.client_context())
        await host_wait_finished(host, match_id)
        await pages.check()
        await host.close()
        await context.close()

"""Pages of other sites opening websockets from a player's browser: refused at the handshake (403) before they
cost the player's address anything; the server's own page, configured origins and clients without `Origin` (the
terminal, engines) are let in."""

from __future__ import annotations

import asyncio

import pytest
from websockets.exceptions import InvalidStatus

from server.front.origins import canonical_origin, origin_allowed
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client


async def status_of(url: str, origin: str | None, source: str = HONEST) -> int:
    """The HTTP status of a websocket handshake from `source` as a page of `origin` (101: opened, then closed)."""
    try:
        client = await Client.open(url, None, source=source, origin=origin)
    except InvalidStatus as exc:
        return exc.response.status_code
    await client.close()
    return 101


async def raw_status(port: int, *headers: str) -> int:
    """The HTTP status of a websocket handshake sent as raw `headers` (so a header may come twice)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(("GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                      + "".join(f"{h}\r\n" for h in headers) + "\r\n").encode())
        return int((await asyncio.wait_for(reader.readline(), 5)).split()[1])
    finally:
        writer.close()


async def test_pages_of_other_sites_cannot_spend_a_players_budgets(serve: Serve) -> None:
    """A page on another site (or a sandboxed one, `null`) opens 200 sockets from the player's own address: each is
    refused 403 and holds nothing, so the player's own connection right after is let in (before, each was let in)."""
    server = await serve(max_per_address=64)
    for i in range(200):
        assert await status_of(server.url, "http://evil.example" if i % 2 else "null") == 403
    assert server.admission.connections == 0
    player = await Client.open(server.url, "player", source=HONEST, origin=f"http://127.0.0.1:{server.port}")
    assert player.welcome["type"] == "welcome"
    await player.close()


async def test_own_configured_and_no_origin_are_welcome(serve: Serve) -> None:
    """The origin of the server's own page (the Host it was reached at), a configured origin, and no `Origin` at all
    (the terminal client, engines) open; another port or scheme-less junk does not, nor two `Origin` headers."""
    server = await serve(allowed_origins=("https://Play.Example.org:443",))
    own = f"http://127.0.0.1:{server.port}"
    assert await status_of(server.url, own) == 101
    assert await status_of(server.url, None) == 101
    assert await status_of(server.url, "https://play.example.org") == 101
    assert await status_of(server.url, "https://play.example.org:8443") == 403
    assert await status_of(server.url, f"http://127.0.0.1:{server.port + 1}") == 403
    host = f"Host: 127.0.0.1:{server.port}"
    assert await raw_status(server.port, host, f"Origin: {own}") == 101
    assert await raw_status(server.port, host, f"Origin: {own}", "Origin: http://evil.example") == 403
    assert await raw_status(server.port, host, "Origin: http://evil.example", f"Origin: {own}") == 403


@pytest.mark.parametrize(("origin", "host", "allowed"), [
    ("http://arena.example.org", "arena.example.org", True),
    ("https://arena.example.org", "arena.example.org", True),  # TLS at a proxy in front
    ("https://arena.example.org:443", "Arena.Example.org", True),
    ("http://arena.example.org:8080", "arena.example.org", False),
    ("http://[::1]:8765", "[::1]:8765", True),
    ("null", "arena.example.org", False),
    ("http://arena.example.org.evil.example", "arena.example.org", False),
    ("ws://arena.example.org", "arena.example.org", False),
    ("http://evil.example", None, False),
])
def test_the_origin_check_compares_canonical_origins(origin: str, host: str | None, allowed: bool) -> None:
    """Scheme and host case and a default port do not matter; any other origin, `null` or a non-web scheme does."""
    assert origin_allowed(origin, host) is allowed
    assert canonical_origin("https://play.example.org/") == "https://play.example.org"

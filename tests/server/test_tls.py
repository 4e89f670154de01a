"""TLS on the server's own port (`--tls-cert`, `--tls-key`): wss for clients, https for the pages and `/health`,
a whole game played by Chromium over https and wss, and certificates it cannot use refused in one line."""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from server.assembly import RunningServer
from server.edge.tls import TlsError, tls_context
from tests.conftest import Serve
from tests.helpers.browser import SKIP, Pages, chromium, host_wait_finished, play_out, start_from_lobby
from tests.helpers.certs import Certificate, make_certificate
from tests.helpers.wire import Client


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    """A test authority's certificate for localhost and 127.0.0.1."""
    return make_certificate(tmp_path / "tls")


async def tls_server(serve: Serve, certificate: Certificate) -> RunningServer:
    """A server speaking TLS with the test certificate."""
    return await serve(tls_cert=str(certificate.cert), tls_key=str(certificate.key))


def fetch(url: str, context: ssl.SSLContext) -> tuple[int, str]:
    """GET `url` over https trusting `context`: status and body."""
    with urllib.request.urlopen(url, context=context, timeout=30) as response:
        return int(response.status), response.read().decode()


async def test_wss_and_https_are_served_on_one_port(serve: Serve, certificate: Certificate) -> None:
    """A client trusting the authority says hello over wss; the page and `/health` come over https; a plain ws
    client and a client that does not trust the certificate get no connection."""
    server = await tls_server(serve, certificate)
    assert server.url.startswith("wss://") and server.web_url.startswith("https://")
    client = await Client.open(server.url, "alice", tls=certificate.client_context())
    assert client.welcome["name"] == "alice"
    assert (await client.request("matches", type="list"))["type"] == "matches"
    status, body = await asyncio.to_thread(fetch, server.web_url + "health", certificate.client_context())
    assert status == 200 and json.loads(body)["connections"] == 1
    status, page = await asyncio.to_thread(fetch, server.web_url, certificate.client_context())
    assert status == 200 and "<html" in page.lower()
    with pytest.raises(ssl.SSLCertVerificationError):
        await connect(server.url, ssl=ssl.create_default_context(), open_timeout=10)
    plain = server.url.replace("wss://", "ws://")
    with pytest.raises(Exception):  # noqa: B017 - the server speaks TLS: the handshake fails one way or another
        await connect(plain, open_timeout=10)
    await client.close()


def test_certificates_it_cannot_use_are_refused_in_one_line(certificate: Certificate, tmp_path: Path) -> None:
    """A missing file, a key of another certificate, a certificate without its key: one line naming the fix."""
    assert tls_context(None, None) is None
    with pytest.raises(TlsError, match="give --tls-cert and --tls-key together"):
        tls_context(str(certificate.cert), None)
    with pytest.raises(TlsError, match=r"TLS certificate '.*nope.pem' is not a readable file"):
        tls_context(str(tmp_path / "nope.pem"), str(certificate.key))
    other = make_certificate(tmp_path / "other")
    with pytest.raises(TlsError, match=r"cannot use TLS certificate .* with key .*: KEY_VALUES_MISMATCH"):
        tls_context(str(certificate.cert), str(other.key))
    with pytest.raises(TlsError, match=r"cannot use TLS certificate .*: .* \(give the PEM certificate chain"):
        tls_context(str(certificate.key), str(certificate.key))


@SKIP
async def test_chromium_plays_a_whole_game_over_https_and_wss(serve: Serve, certificate: Certificate) -> None:
    """The page loads over https, its socket is wss, and a game against a bot is played to its end."""
    server = await tls_server(serve, certificate)
    async with chromium() as browser:
        context = await browser.new_context(ignore_https_errors=True)
        pages = Pages(browser, server.web_url.rstrip("/"))
        page = await pages.open("/", context=context)
        match_id = await start_from_lobby(page, "greedy", {"houses": "3", "seeds": "2", "clock": ""})
        assert await play_out([page]) > 0
        assert await page.evaluate("window.__socket.url") == server.url + "/"
        host = await Client.open(server.url, "host", tls=certificate.client_context())
        await host_wait_finished(host, match_id)
        await pages.check()
        await host.close()
        await context.close()

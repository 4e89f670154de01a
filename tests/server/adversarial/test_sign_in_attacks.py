"""Sign-in under attack: credential stuffing from many networks (loopback 127.3.x.1 stands in for them; honest people
use 127.0.0.x) bounded in all while the owner, a recovery code and a passkey still get in; a session cookie planted
on the browser before sign-in; the cookie's flags over https (the server's TLS, a trusted proxy's
`X-Forwarded-Proto`); a cookie of one server shown to another."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import ssl
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from server.assembly import RunningServer
from server.core.sign_in_pace import PaceLimits
from tests.conftest import Serve
from tests.helpers.certs import make_certificate
from tests.helpers.soft_authenticator import SoftAuthenticator
from tests.helpers.wire import HONEST, Client, eventually
from tests.server.test_accounts import PASSWORD, start
from tests.server.test_passkeys import Page
from tests.server.test_sign_in import COMMON

NETWORKS = 50


def stuffer(network: int) -> str:
    """The loopback address of the attacker's `network`-th network (each its own /24)."""
    return f"127.3.{network}.1"


async def test_credential_stuffing_from_50_networks_is_bounded_while_the_owner_signs_in(serve: Serve) -> None:
    """Names each tried once with a common password from 50 networks, a few from each (under each network's free
    failures), until the test stops them: failures in all stay within the server's budget plus its paced rate over
    the attack's time; meanwhile the owner's right password, a recovery code and a passkey each sign in (before:
    every try was checked at once, 200 in a quarter of a second)."""
    limits = PaceLimits(free=20, per_s=40.0, max_wait_s=5.0)
    srv = await start(serve, sign_in_pace=limits)
    owner = await Client.open(srv.url, name=None, source=HONEST)
    made = await owner.request("signed_in", type="register", name="owner", password=PASSWORD)
    page, key = Page(srv), SoftAuthenticator()
    assert (await page.post("register", name="keyholder", password=PASSWORD))["ok"] is True
    assert (await page.add_passkey(key))["ok"] is True
    attackers = await asyncio.gather(*(Client.open(srv.url, name=None, source=stuffer(n)) for n in range(NETWORKS)))
    codes: list[str] = []
    stop = asyncio.Event()

    async def stuff(n: int, c: Client) -> None:
        """One network's tries, one after another until stopped: a new name each time, with a common password."""
        i = 0
        while not stop.is_set():
            await c.send(type="login", name=f"user{i}x{n}", password=COMMON[i % len(COMMON)])
            codes.append(await c.error(timeout=30.0))
            i += 1

    loop = asyncio.get_running_loop()
    began = loop.time()
    attack = asyncio.gather(*(stuff(n, c) for n, c in enumerate(attackers)))
    await eventually(lambda: len(codes) >= limits.free, timeout=10.0, what="the budget spent")
    recovered = await Client.open(srv.url, name=None, source=HONEST)
    again = await recovered.request("signed_in", type="recover", name="owner", code=made["recovery_codes"][0],
                                    new_password="another password")
    by_key = await Page(srv).sign_in(key)
    back = await owner.request("signed_in", timeout=30.0, type="login", name="owner", password="another password")
    stop.set()
    await attack
    took = loop.time() - began
    assert back["player_id"] == made["player_id"] == again["player_id"] and by_key["name"] == "keyholder"
    failures = codes.count("sign_in_failed")
    assert set(codes) <= {"sign_in_failed", "sign_in_throttled"} and failures > limits.free
    assert failures <= limits.free + 1 + limits.per_s * took


class Browser:
    """Account requests as a page at `origin` sends them to a server at `host:port` (over TLS trusting `tls`), from
    the loopback address `source`, with the cookies it holds (planted ones too)."""

    def __init__(self, host: str, port: int, origin: str, tls: ssl.SSLContext | None = None,
                 source: str = "127.0.0.1", headers: dict[str, str] | None = None) -> None:
        self.host, self.port, self.origin, self.tls, self.source = host, port, origin, tls, source
        self.headers = headers or {}
        """Headers every request carries (a proxy's)."""
        self.cookies: dict[str, str] = {}

    def _send(self, method: str, path: str, fields: dict[str, Any] | None) -> tuple[list[str], dict[str, Any]]:
        """One request: the `Set-Cookie` lines and the JSON answer; the cookies set are kept as a browser does."""
        conn = (http.client.HTTPSConnection(self.host, self.port, context=self.tls, timeout=10,
                                            source_address=(self.source, 0)) if self.tls is not None else
                http.client.HTTPConnection(self.host, self.port, timeout=10, source_address=(self.source, 0)))
        headers = {"Origin": self.origin, **self.headers}
        if fields is not None:
            headers["Kalah-Account"] = base64.b64encode(json.dumps(fields).encode()).decode()
        if self.cookies:
            headers["Cookie"] = self.cookie_header()
        try:
            conn.request(method, path, headers=headers)
            answer = conn.getresponse()
            set_cookies = answer.headers.get_all("Set-Cookie") or []
            body = json.loads(answer.read())
        finally:
            conn.close()
        for line in set_cookies:
            name, _, value = line.split(";", 1)[0].partition("=")
            if "Max-Age=0" in line:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return set_cookies, body

    def cookie_header(self) -> str:
        """The `Cookie` header of what the browser holds, in the order the cookies came."""
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def post(self, path: str, **fields: Any) -> tuple[list[str], dict[str, Any]]:
        """POST `/account/<path>` with `fields`."""
        return await asyncio.to_thread(self._send, "POST", "/account/" + path, fields)

    async def me(self) -> dict[str, Any]:
        """`GET /account/me` with the cookies held."""
        return (await asyncio.to_thread(self._send, "GET", "/account/me", None))[1]


def page_of(srv: RunningServer, **options: Any) -> Browser:
    """A browser on the server's own page at `http://127.0.0.1:PORT`."""
    return Browser("127.0.0.1", srv.port, f"http://127.0.0.1:{srv.port}", **options)


async def hello_with_cookie(url: str, cookie: str, tls: ssl.SSLContext | None = None) -> dict[str, Any]:
    """What a page's websocket carrying `cookie` is answered to `hello {account: true}`: a `welcome` or an `error`."""
    client = Client(await connect(url, additional_headers={"Cookie": cookie}, ssl=tls, open_timeout=10))
    await client.send(type="hello", name="x", account=True)
    answer = await client.next()
    await client.close()
    return answer


async def test_a_cookie_planted_before_sign_in_never_becomes_the_signed_in_session(serve: Serve) -> None:
    """An attacker plants its own session's cookie (or a secret it made up) on a browser; the owner then signs in
    with a password, a passkey, a recovery code, or registers: each answer sets a new secret, the planted one still
    names what it named before (the attacker's account, or nothing), and the new one the owner."""
    srv = await start(serve)
    attacker = page_of(srv)
    await attacker.post("register", name="mallory", password=PASSWORD)
    planted_secrets = [attacker.cookies["kalah_session"], "s" + "0" * 11 + "A" * 43]
    owner = page_of(srv)
    _, made = await owner.post("register", name="victor", password=PASSWORD)
    page, key = Page(srv), SoftAuthenticator()
    assert (await page.post("register", name="keyholder", password=PASSWORD))["ok"] is True
    assert (await page.add_passkey(key))["ok"] is True
    for i, planted in enumerate(planted_secrets):
        for how in ("login", "recover", "register", "passkey"):
            browser = page_of(srv)
            browser.cookies["kalah_session"] = planted
            if how == "login":
                _, answer = await browser.post("login", name="victor", password=PASSWORD)
            elif how == "recover":
                code = made["recovery_codes"].pop()
                _, answer = await browser.post("recover", name="victor", code=code, new_password=PASSWORD)
            elif how == "register":
                _, answer = await browser.post("register", name=f"newcomer{i}", password=PASSWORD)
            else:
                keyed = Page(srv)
                keyed.cookie = f"kalah_session={planted}"
                answer = await keyed.sign_in(key)
                browser.cookies["kalah_session"] = keyed.cookie.split("=", 1)[1]
            assert answer["ok"] is True, (how, answer)
            fresh = browser.cookies["kalah_session"]
            assert fresh != planted and (await browser.me())["name"] == answer["name"]
            left = page_of(srv)
            left.cookies["kalah_session"] = planted
            assert (await left.me()).get("name") == ("mallory" if i == 0 else None), how


def flags(line: str) -> set[str]:
    """The attributes of a `Set-Cookie` line (`HttpOnly`, `SameSite=Lax`, ...), without its value."""
    return {part.strip() for part in line.split(";")[1:]}


async def test_over_tls_the_cookie_is_host_only_and_secure_and_wins_over_a_planted_one(serve: Serve,
                                                                                        tmp_path: Path) -> None:
    """Signed in over the server's own TLS, the cookie is `__Host-kalah_session` (HttpOnly, SameSite=Lax, Secure,
    Path=/, no Domain: no sibling site or plain-http page can set one); a plain `kalah_session` another site planted
    beside it, before or after, never stands for the browser: `/account/me` and the websocket's hello are the
    owner's (before: the cookie was plain, and the planted one could win)."""
    certificate = make_certificate(tmp_path / "tls")
    srv = await start(serve, tls_cert=str(certificate.cert), tls_key=str(certificate.key))
    tls = certificate.client_context()
    origin = f"https://localhost:{srv.port}"
    attacker = Browser("localhost", srv.port, origin, tls=tls)
    await attacker.post("register", name="mallory", password=PASSWORD)
    owner = Browser("localhost", srv.port, origin, tls=tls)
    lines, answer = await owner.post("register", name="victor", password=PASSWORD)
    [line] = lines
    assert line.startswith("__Host-kalah_session=") and answer["ok"] is True
    assert {"HttpOnly", "SameSite=Lax", "Secure", "Path=/"} <= flags(line)
    assert not any(flag.lower().startswith("domain") for flag in flags(line))
    mine, theirs = owner.cookies["__Host-kalah_session"], attacker.cookies["__Host-kalah_session"]
    for header in (f"kalah_session={theirs}; __Host-kalah_session={mine}",
                   f"__Host-kalah_session={mine}; kalah_session={theirs}"):
        browser = Browser("localhost", srv.port, origin, tls=tls, headers={"Cookie": header})
        assert (await browser.me())["name"] == "victor"
        welcome = await hello_with_cookie(f"wss://localhost:{srv.port}", header, tls)
        assert welcome["type"] == "welcome" and welcome["name"] == "victor"
    lines, _ = await owner.post("logout")
    assert any(line.startswith("__Host-kalah_session=;") and "Max-Age=0" in line for line in lines)


async def test_behind_a_trusted_proxy_only_its_forwarded_https_makes_the_cookie_secure(serve: Serve) -> None:
    """A proxy that ends TLS says so with `X-Forwarded-Proto: https`: from the trusted proxy the cookie is
    `__Host-` and Secure whatever the page's origin says; the same header sent by anyone else is not believed
    (before: it was never read, so only the page's origin counted)."""
    srv = await start(serve, trusted_proxies=("127.0.0.1/32",))
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
    via_proxy = page_of(srv, headers=forwarded)
    [line], answer = await via_proxy.post("register", name="proxied", password=PASSWORD)
    assert answer["ok"] is True and line.startswith("__Host-kalah_session=") and "Secure" in flags(line)
    forger = page_of(srv, headers=forwarded, source=HONEST)
    [line], answer = await forger.post("login", name="proxied", password=PASSWORD)
    assert answer["ok"] is True and line.startswith("kalah_session=") and "Secure" not in flags(line)
    assert {"HttpOnly", "SameSite=Lax"} <= flags(line)


async def test_a_cookie_of_one_server_is_not_taken_by_another_database(serve: Serve, tmp_path: Path) -> None:
    """Two servers on one host (cookies do not tell ports apart) with their own databases (`Kalah-Store` differs): a
    session cookie of the first, carried to the second, signs nobody in there, neither at `/account/me` nor in the
    websocket's hello."""
    first = await start(serve)
    second = await start(serve, db=tmp_path / "other.sqlite3")
    assert await first.arena.storage.store_id() != await second.arena.storage.store_id()
    browser = page_of(first)
    await browser.post("register", name="nomad", password=PASSWORD)
    elsewhere = page_of(second)
    elsewhere.cookies = dict(browser.cookies)
    assert (await browser.me())["name"] == "nomad" and (await elsewhere.me()) == {"signed_in": False}
    answer = await hello_with_cookie(second.url, browser.cookie_header())
    assert answer["type"] == "error" and answer["code"] == "bad_session"

"""Passkeys over HTTP with a software authenticator: added to a signed-in account, a sign-in with no name and no
password, a replayed or cloned assertion refused, the password throttle never in the way, floods bounded."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.soft_authenticator import SoftAuthenticator
from tests.server.test_accounts import PASSWORD, start

Answer = dict[str, Any]


class Page:
    """The account page of one browser at `http://localhost:PORT` (a name: passkeys need one), with its cookie."""

    def __init__(self, srv: RunningServer, host: str = "localhost", origin: str | None = None,
                 host_header: str | None = None) -> None:
        self.base = origin or f"http://{host}:{srv.port}"
        """The page's origin."""
        self.host_header = host_header or self.base.split("://", 1)[1]
        """The `Host` the server sees (a proxy passes the page's on, or names the server's own)."""
        self.cookie = ""
        self.via = f"http://{host}:{srv.port}"
        """Where requests go: the page's own server, or another node reached through the same public name."""

    def _post(self, path: str, fields: dict[str, Any]) -> Answer:
        """POST as the page does, keeping the session cookie it sets."""
        header = base64.b64encode(json.dumps(fields).encode()).decode()
        headers = {"Kalah-Account": header, "Origin": self.base, "Host": self.host_header}
        if self.cookie:
            headers["Cookie"] = self.cookie
        request = urllib.request.Request(self.via + path, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                cookie = answer.headers.get("Set-Cookie")
                if cookie:
                    self.cookie = cookie.split(";")[0]
                return dict(json.loads(answer.read()))
        except urllib.error.HTTPError as refused:
            return dict(json.loads(refused.read()))

    async def post(self, path: str, **fields: Any) -> Answer:
        """POST `/account/<path>` with `fields`; its JSON answer."""
        return await asyncio.to_thread(self._post, "/account/" + path, fields)

    async def add_passkey(self, authenticator: SoftAuthenticator) -> Answer:
        """Add `authenticator`'s credential to the signed-in account."""
        begun = await self.post("passkey/add-options")
        assert begun["ok"] is True, begun
        credential = authenticator.create(json.loads(begun["options"]), self.base)
        return await self.post("passkey/add", challenge_id=begun["challenge_id"], credential=credential)

    async def assertion(self, authenticator: SoftAuthenticator) -> dict[str, Any]:
        """A sign-in's fields: a challenge begun and the authenticator's answer to it."""
        begun = await self.post("passkey/sign-in-options")
        assert begun["ok"] is True, begun
        return {"challenge_id": begun["challenge_id"],
                "credential": authenticator.get(json.loads(begun["options"]), self.base)}

    async def sign_in(self, authenticator: SoftAuthenticator) -> Answer:
        """Sign in with `authenticator`'s passkey."""
        return await self.post("passkey/sign-in", **await self.assertion(authenticator))


async def registered(srv: RunningServer, name: str) -> tuple[Page, SoftAuthenticator]:
    """A page signed in to a new account `name` that holds one passkey."""
    page, key = Page(srv), SoftAuthenticator()
    assert (await page.post("register", name=name, password=PASSWORD))["ok"] is True
    added = await page.add_passkey(key)
    assert added["ok"] is True, added
    return page, key


async def test_a_passkey_added_signs_in_elsewhere_as_the_same_player(serve: Serve) -> None:
    """A passkey added to a signed-in account signs a new browser in, with no name, as that account; its cookie
    signs in; the list shows the passkey with its last use, and a removed passkey no longer signs in."""
    srv = await start(serve)
    page, key = await registered(srv, "pia")
    other = Page(srv)
    answer = await other.sign_in(key)
    assert answer["ok"] is True and answer["name"] == "pia" and other.cookie.startswith("kalah_session=")
    assert other.cookie.split("=", 1)[1] not in json.dumps(answer)
    me = await asyncio.to_thread(lambda: json.loads(urllib.request.urlopen(urllib.request.Request(
        other.base + "/account/me", headers={"Cookie": other.cookie}), timeout=10).read()))
    assert me["signed_in"] is True and me["name"] == "pia"
    listed = (await other.post("passkey/list"))["passkeys"]
    assert len(listed) == 1 and listed[0]["used_at"] is not None
    assert (await page.post("passkey/remove", passkey_id=listed[0]["passkey_id"]))["ok"] is True
    gone = await Page(srv).sign_in(key)
    assert gone["code"] == "sign_in_failed" and "no longer" in gone["message"]


async def test_a_replayed_assertion_is_refused(serve: Serve) -> None:
    """An assertion captured from a sign-in and sent again (its challenge used) is refused, even from an
    authenticator without a counter (where the challenge is all that tells a replay)."""
    srv = await start(serve)
    for name, key in (("quin", SoftAuthenticator()), ("quy", SoftAuthenticator(counting=False))):
        page = Page(srv)
        assert (await page.post("register", name=name, password=PASSWORD))["ok"] is True
        assert (await page.add_passkey(key))["ok"] is True
        browser = Page(srv)
        fields = await browser.assertion(key)
        assert (await browser.post("passkey/sign-in", **fields))["name"] == name
        replayed = await Page(srv).post("passkey/sign-in", **fields)
        assert replayed["code"] == "sign_in_failed" and "already used" in replayed["message"]


async def test_a_cloned_passkey_whose_counter_did_not_go_up_is_refused(serve: Serve) -> None:
    """A copy of a passkey signs with a counter not greater than the stored one: refused, naming the copy."""
    srv = await start(serve)
    _, key = await registered(srv, "rex")
    clone = key.copy()
    assert (await Page(srv).sign_in(key))["ok"] is True
    cloned = await Page(srv).sign_in(clone)
    assert cloned["code"] == "sign_in_failed" and "copy" in cloned["message"]
    uncounted = SoftAuthenticator(counting=False)
    page = Page(srv)
    assert (await page.post("register", name="rue", password=PASSWORD))["ok"] is True
    assert (await page.add_passkey(uncounted))["ok"] is True
    for _ in range(2):  # an authenticator without a counter (always 0) is taken each time
        assert (await Page(srv).sign_in(uncounted))["ok"] is True


async def test_the_password_throttle_never_blocks_a_passkey(serve: Serve) -> None:
    """After enough wrong passwords the account's password sign-in must wait; its passkey still signs in."""
    srv = await start(serve)
    _, key = await registered(srv, "sol")
    guesser = Page(srv)
    for _ in range(6):
        assert (await guesser.post("login", name="sol", password="not the password"))["code"] == "sign_in_failed"
    assert (await guesser.post("login", name="sol", password=PASSWORD))["code"] == "sign_in_throttled"
    assert (await guesser.sign_in(key))["name"] == "sol"


async def test_passkey_ceremonies_from_one_network_are_bounded(serve: Serve) -> None:
    """A network that begins too many passkey ceremonies is told to wait (`sign_in_throttled` with a delay)."""
    srv = await start(serve)
    page = Page(srv)
    answers = [await page.post("passkey/sign-in-options") for _ in range(31)]
    assert all(a["ok"] is True for a in answers[:30])
    assert answers[30]["code"] == "sign_in_throttled" and answers[30]["retry_ms"] >= 1000


async def test_a_passkey_is_refused_where_it_cannot_work(serve: Serve) -> None:
    """Adding needs a signed-in cookie; a page reached by an address (no relying party id) is told to use a name;
    an assertion made for another origin is refused."""
    srv = await start(serve)
    assert (await Page(srv).post("passkey/add-options"))["code"] == "bad_session"
    by_address = await Page(srv, "127.0.0.1").post("passkey/sign-in-options")
    assert by_address["code"] == "bad_field" and "by a name" in by_address["message"]
    _, key = await registered(srv, "tam")
    page = Page(srv)
    begun = await page.post("passkey/sign-in-options")
    elsewhere = key.get(json.loads(begun["options"]), "http://evil.example")
    refused = await page.post("passkey/sign-in", challenge_id=begun["challenge_id"], credential=elsewhere)
    assert refused["code"] == "sign_in_failed" and "origin" in refused["message"]


async def test_behind_a_tls_proxy_the_relying_party_is_the_public_name(serve: Serve) -> None:
    """Behind a proxy that ends TLS and passes the `Host` on, the relying party is the public name and the origin
    its https page; a proxy that names the server's own address instead works once the operator allows the public
    origin (`--allowed-origin`)."""
    public = "https://arena.example.org"
    for options, host_header in (({}, "arena.example.org"),
                                 ({"allowed_origins": (public,)}, None)):
        srv = await start(serve, trusted_proxies=("127.0.0.1/32",), **options)
        page = Page(srv, origin=public, host_header=host_header or f"127.0.0.1:{srv.port}")
        key = SoftAuthenticator()
        assert (await page.post("register", name=f"pub{len(options)}", password=PASSWORD))["ok"] is True
        begun = await page.post("passkey/add-options")
        assert json.loads(begun["options"])["rp"]["id"] == "arena.example.org"
        credential = key.create(json.loads(begun["options"]), public)
        assert (await page.post("passkey/add", challenge_id=begun["challenge_id"], credential=credential))["ok"]
        assert (await Page(srv, origin=public, host_header=page.host_header).sign_in(key))["ok"] is True


async def test_a_challenge_is_bound_to_its_session_and_expires(serve: Serve, tmp_path: Path) -> None:
    """A passkey's creation begun by one session cannot be finished by another; a sign-in whose challenge expired
    is refused, and expired challenges are deleted as new ones are made."""
    srv = await start(serve)
    page, key = Page(srv), SoftAuthenticator()
    assert (await page.post("register", name="uri", password=PASSWORD))["ok"] is True
    begun = await page.post("passkey/add-options")
    other = Page(srv)
    assert (await other.post("login", name="uri", password=PASSWORD))["ok"] is True
    stolen = await other.post("passkey/add", challenge_id=begun["challenge_id"],
                              credential=key.create(json.loads(begun["options"]), other.base))
    assert stolen["code"] == "sign_in_failed" and "expired or was already used" in stolen["message"]
    assert (await page.add_passkey(key))["ok"] is True
    fields = await Page(srv).assertion(key)
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3", isolation_level=None)) as db:
        db.execute("UPDATE passkey_challenges SET expires_at = 0")
    late = await Page(srv).post("passkey/sign-in", **fields)
    assert late["code"] == "sign_in_failed" and "expired" in late["message"]
    await Page(srv).post("passkey/sign-in-options")
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3", isolation_level=None)) as db:
        db.execute("UPDATE passkey_challenges SET expires_at = 0")
    await Page(srv).post("passkey/sign-in-options")
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3", isolation_level=None)) as db:
        assert db.execute("SELECT count(*) FROM passkey_challenges").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM passkey_challenges WHERE expires_at < 1").fetchone()[0] == 0

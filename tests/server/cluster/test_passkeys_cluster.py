"""Passkeys on a cluster: a ceremony begun on one node finishes on another (the challenge is in the database), and
its replay is refused on every node."""

from __future__ import annotations

import json

from server.core.passwords import PasswordCost
from tests.conftest import Serve
from tests.helpers.soft_authenticator import SoftAuthenticator
from tests.server.test_accounts import PASSWORD
from tests.server.test_passkeys import Page


async def test_a_passkey_ceremony_begun_on_one_node_finishes_on_another(serve: Serve, pg_url: str,
                                                                         bus_url: str) -> None:
    """Add a passkey beginning on node A and finishing on node B; sign in beginning on B and finishing on A; the
    same assertion replayed on B is refused."""
    a, b = [await serve(pg_url, bus=bus_url, password_cost=PasswordCost(1, 8, 1)) for _ in range(2)]
    page, key = Page(a), SoftAuthenticator()
    assert (await page.post("register", name="nodey", password=PASSWORD))["ok"] is True
    begun = await page.post("passkey/add-options")
    page.via = f"http://127.0.0.1:{b.port}"
    added = await page.post("passkey/add", challenge_id=begun["challenge_id"],
                            credential=key.create(json.loads(begun["options"]), page.base))
    assert added["ok"] is True, added
    browser = Page(a)
    browser.via = f"http://127.0.0.1:{b.port}"
    fields = await browser.assertion(key)
    browser.via = browser.base
    assert (await browser.post("passkey/sign-in", **fields))["name"] == "nodey"
    browser.via = f"http://127.0.0.1:{b.port}"
    replayed = await browser.post("passkey/sign-in", **fields)
    assert replayed["code"] == "sign_in_failed" and "already used" in replayed["message"]

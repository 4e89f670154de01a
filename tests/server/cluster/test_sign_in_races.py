"""One-time proofs raced on two nodes at once: a recovery code and a passkey's assertion each sign in once, whichever
node takes them first (both claim them in the shared database's `guards`)."""

from __future__ import annotations

import asyncio

from server.core.passwords import PasswordCost
from tests.conftest import Serve
from tests.helpers.soft_authenticator import SoftAuthenticator
from tests.helpers.wire import Client
from tests.server.cluster.test_nodes import nodes
from tests.server.test_accounts import PASSWORD
from tests.server.test_passkeys import Page


async def test_a_recovery_code_sent_to_two_nodes_at_once_signs_in_once(serve: Serve, pg_url: str,
                                                                       bus_url: str) -> None:
    """The same recovery code sent at the same moment to node A and node B, several times over with fresh codes:
    each time exactly one sign-in is made, the other refused as a code already used."""
    a, b = await nodes(serve, pg_url, bus_url, password_cost=PasswordCost(1, 8, 1))
    first = await Client.open(a.url, name=None)
    made = await first.request("signed_in", type="register", name="twice", password=PASSWORD)
    on_a, on_b = await Client.open(a.url, name=None), await Client.open(b.url, name=None)
    for code in made["recovery_codes"][:4]:
        for c in (on_a, on_b):
            await c.send(type="recover", name="twice", code=code, new_password="a new password")
        answers = await asyncio.gather(on_a.next(), on_b.next())
        assert sorted(answer["type"] for answer in answers) == ["error", "signed_in"], answers
        assert [answer["code"] for answer in answers if answer["type"] == "error"] == ["sign_in_failed"]


async def test_a_passkey_assertion_sent_to_two_nodes_at_once_signs_in_once(serve: Serve, pg_url: str,
                                                                           bus_url: str) -> None:
    """An assertion of an authenticator without a counter (so only its challenge tells a replay) sent at the same
    moment to node A and node B: exactly one sign-in, the other refused as already used."""
    a, b = await nodes(serve, pg_url, bus_url, password_cost=PasswordCost(1, 8, 1))
    page, key = Page(a), SoftAuthenticator(counting=False)
    assert (await page.post("register", name="raced", password=PASSWORD))["ok"] is True
    assert (await page.add_passkey(key))["ok"] is True
    for _ in range(3):
        fields = await Page(a).assertion(key)
        there = Page(a)
        there.via = f"http://localhost:{b.port}"
        answers = await asyncio.gather(Page(a).post("passkey/sign-in", **fields),
                                       there.post("passkey/sign-in", **fields))
        assert sorted(answer["ok"] for answer in answers) == [False, True], answers
        assert next(answer["message"] for answer in answers if not answer["ok"]).startswith("this passkey request")

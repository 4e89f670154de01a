"""Sign-in under attack from many networks (loopback 127.3.x.1 stands in for them; honest people use 127.0.0.x):
credential stuffing bounded in all while the owner, a recovery code and a passkey still get in."""

from __future__ import annotations

import asyncio

from server.core.sign_in_pace import PaceLimits
from tests.conftest import Serve
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

"""Password guesses at one account spread over two nodes of a cluster are throttled as on one server: the failures
are counted in the cluster's Redis, so the free ones are five in all, not five a node."""

from __future__ import annotations

import asyncio

from server.assembly import RunningServer
from server.core.passwords import Hasher
from server.core.sign_in_throttle import ThrottleLimits
from tests.conftest import Serve
from tests.helpers.wire import Client, Json
from tests.server.cluster.test_nodes import nodes
from tests.server.test_accounts import PASSWORD

WRONG = "not the password"


class CountedVerify:
    """A node's password hasher with its checks counted (what it does is unchanged)."""

    def __init__(self, hasher: Hasher) -> None:
        self.hasher = hasher
        self.verified = 0

    def hash(self, password: str) -> str:
        """Hash as before."""
        return self.hasher.hash(password)

    def verify(self, stored: str, password: str) -> bool:
        """Count, then check as before."""
        self.verified += 1
        return self.hasher.verify(stored, password)

    def needs_rehash(self, stored: str) -> bool:
        """As before."""
        return self.hasher.needs_rehash(stored)

    def unmatched(self) -> str:
        """As before."""
        return self.hasher.unmatched()


def counted(node: RunningServer) -> CountedVerify:
    """Count the password checks `node` makes from now on."""
    passwords = node.arena.accounts.passwords
    counter = CountedVerify(passwords.hasher)
    passwords.hasher = counter
    return counter


async def login(client: Client, name: str, password: str) -> Json:
    """The answer to one password sign-in: `signed_in`, or an error."""
    await client.send(type="login", name=name, password=password)
    while True:
        answer = await client.next(timeout=10)
        if answer["type"] in ("signed_in", "error"):
            return answer


async def guessers(a: RunningServer, b: RunningServer, network: str, name: str) -> tuple[Client, Client]:
    """`name` registered on node A; a connection to each node from one address of `network` (its own, so that no
    other test's failures count against it in the shared Redis)."""
    maker = await Client.open(a.url, name=None)
    await maker.request("signed_in", type="register", name=name, password=PASSWORD)
    source = network.replace(".0/24", ".1")
    return await Client.open(a.url, name=None, source=source), await Client.open(b.url, name=None, source=source)


async def test_guesses_alternated_over_two_nodes_are_throttled_after_five_in_all(serve: Serve, pg_url: str,
                                                                               bus_url: str) -> None:
    """Wrong passwords for one account sent to node A and node B in turn: the first six are checked and refused
    (five free failures, the sixth sets the first delay, as on one server), then the next try on either node is
    `sign_in_throttled` with a wait, the right password too, and no password is checked for them (before, each node
    counted only its own: node A had three failures and checked the seventh)."""
    a, b = await nodes(serve, pg_url, bus_url, sign_in_throttle=ThrottleLimits(base_s=60.0))
    on_a, on_b = await guessers(a, b, "127.61.0.0/24", "spread")
    codes = [(await login(c, "spread", WRONG)).get("code") for c in (on_a, on_b) * 3]
    assert codes == ["sign_in_failed"] * 6
    checks = counted(a), counted(b)
    for c, password in ((on_a, WRONG), (on_b, WRONG), (on_a, PASSWORD), (on_b, PASSWORD)):
        answer = await login(c, "spread", password)
        assert answer.get("code") == "sign_in_throttled" and answer["retry_ms"] > 50_000, answer
    assert [check.verified for check in checks] == [0, 0]


async def test_the_right_password_after_the_wait_signs_in_and_clears_the_count_on_both_nodes(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Once the wait of six failures spread over two nodes has passed, the right password signs in on node B; the
    account's count is then cleared on both: six more wrong guesses spread over them are all checked (five free,
    the sixth sets the wait again), and the next one on node A is throttled."""
    a, b = await nodes(serve, pg_url, bus_url, sign_in_throttle=ThrottleLimits(base_s=0.5))
    on_a, on_b = await guessers(a, b, "127.62.0.0/24", "cleared")
    assert [(await login(c, "cleared", WRONG)).get("code") for c in (on_a, on_b) * 3] == ["sign_in_failed"] * 6
    assert (await login(on_a, "cleared", PASSWORD)).get("code") == "sign_in_throttled"
    await asyncio.sleep(0.6)
    assert (await login(on_b, "cleared", PASSWORD))["type"] == "signed_in"
    assert [(await login(c, "cleared", WRONG)).get("code") for c in (on_b, on_a) * 3] == ["sign_in_failed"] * 6
    assert (await login(on_a, "cleared", WRONG)).get("code") == "sign_in_throttled"
    await asyncio.sleep(0.6)
    assert (await login(on_a, "cleared", PASSWORD))["type"] == "signed_in"


async def test_a_name_that_is_no_account_is_throttled_over_two_nodes_as_an_account_is(serve: Serve, pg_url: str,
                                                                                      bus_url: str) -> None:
    """Guesses alternated over two nodes at a name that is no account get the very answers guesses at an account
    get: six refusals as wrong, then `sign_in_throttled` on either node (the throttle tells nothing of which names
    exist)."""
    a, b = await nodes(serve, pg_url, bus_url, sign_in_throttle=ThrottleLimits(base_s=60.0))
    answers: dict[str, list[object]] = {}
    for name, registered, network in (("realname", "realname", "127.65.0.0/24"),
                                      ("noaccount", "someoneelse", "127.66.0.0/24")):
        on_a, on_b = await guessers(a, b, network, registered)
        answers[name] = [(await login(c, name, WRONG)).get("code") for c in (on_a, on_b) * 4]
    assert answers["realname"] == answers["noaccount"] == ["sign_in_failed"] * 6 + ["sign_in_throttled"] * 2

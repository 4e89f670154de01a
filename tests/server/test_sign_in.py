"""Signing in, counted in password-hash work: an unknown name costs what a wrong password costs; the throttle."""

from __future__ import annotations

import pytest

from protocol.errors import SignInError, SignInThrottledError
from server.core.accounts import Accounts
from server.core.passwords import Argon2Hasher, Passwords
from server.core.sign_in_throttle import SignInThrottle, ThrottleLimits
from tests.conftest import Serve
from tests.helpers.wire import FakeClock
from tests.server.test_accounts import CHEAP, PASSWORD, start


class CountingHasher(Argon2Hasher):
    """argon2id with the calls counted."""

    def __init__(self) -> None:
        super().__init__(CHEAP)
        self.calls: list[str] = []

    def hash(self, password: str) -> str:
        """Count, then hash."""
        self.calls.append("hash")
        return super().hash(password)

    def verify(self, stored: str, password: str) -> bool:
        """Count, then verify."""
        self.calls.append("verify")
        return super().verify(stored, password)


async def accounts_of(serve: Serve, hasher: CountingHasher, clock: FakeClock) -> Accounts:
    """An account service over a fresh server's database, hashing with `hasher`."""
    srv = await start(serve)
    a = srv.arena
    return Accounts(a.storage, a.write, a.identities, Passwords(hasher), SignInThrottle(clock),
                    SignInThrottle(clock))


async def test_unknown_name_and_wrong_password_cost_the_same(serve: Serve) -> None:
    """Both refusals are the same error after exactly one password check each, and no hash is made."""
    hasher, clock = CountingHasher(), FakeClock()
    accounts = await accounts_of(serve, hasher, clock)
    await accounts.register("mia", PASSWORD, "terminal", "127.0.0.1")
    answers = []
    for name in ("mia", "nobody"):
        hasher.calls.clear()
        with pytest.raises(SignInError) as refused:
            await accounts.login(name, "wrong password", "terminal", "127.0.0.1", "127.0.0.0/24")
        answers.append((str(refused.value), refused.value.code, list(hasher.calls)))
    assert answers[0] == answers[1] == ("wrong name or password", "sign_in_failed", ["verify"])


async def test_a_throttled_try_checks_no_password(serve: Serve) -> None:
    """Past the free failures a try is refused before any hash, with a delay that grows with each failure and ends."""
    hasher, clock = CountingHasher(), FakeClock()
    accounts = await accounts_of(serve, hasher, clock)
    limits = ThrottleLimits()
    for _ in range(limits.account_free + 3):
        try:
            await accounts.login("ned", "wrong password", "terminal", "10.0.0.1", "10.0.0.0/24")
        except SignInError:
            pass
        except SignInThrottledError:
            clock.advance(60.0)
    hasher.calls.clear()
    with pytest.raises(SignInThrottledError) as throttled:
        await accounts.login("ned", "wrong password", "terminal", "10.0.0.1", "10.0.0.0/24")
    assert hasher.calls == [] and throttled.value.retry_ms is not None
    clock.advance(limits.max_s + 1)
    with pytest.raises(SignInError):
        await accounts.login("ned", "wrong password", "terminal", "10.0.0.1", "10.0.0.0/24")


def test_delays_grow_and_other_networks_are_not_held() -> None:
    """Each failure past the free ones doubles the account's wait; a success clears it; another account from
    another network is not held."""
    clock = FakeClock()
    throttle = SignInThrottle(clock, ThrottleLimits(account_free=2, network_free=100, base_s=1.0))
    waits = []
    for _ in range(5):
        throttle.failed("oli", "10.0.0.0/24")
        try:
            throttle.check("oli", "10.0.0.0/24")
            waits.append(0)
        except SignInThrottledError as exc:
            waits.append(exc.retry_ms or 0)
    assert [w // 1000 for w in waits] == [0, 0, 1, 2, 4]
    throttle.check("pat", "10.9.9.0/24")
    throttle.succeeded("oli")
    throttle.check("oli", "10.1.0.0/24")

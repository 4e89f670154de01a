"""Signing in, counted in password-hash work: an unknown name costs what a wrong password costs; the throttle; the
server's bound on failed password sign-ins in all (credential stuffing from many networks)."""

from __future__ import annotations

import pytest

from protocol.errors import SignInError, SignInThrottledError
from server.core.accounts import Accounts
from server.core.passwords import Argon2Hasher, Passwords
from server.core.sign_in_pace import PaceLimits, PasswordPace
from server.core.sign_in_throttle import SignInThrottle, ThrottleLimits
from tests.conftest import CHEAP, Serve
from tests.helpers.wire import FakeClock
from tests.server.test_accounts import PASSWORD, start


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


def test_the_unknown_names_hash_is_written_with_todays_parameters_not_computed() -> None:
    """Making the password service hashes nothing (a server starts without paying one argon2id hash); the hash an
    unknown name is checked against has today's parameters and lengths, matches no password, and is checked by a
    full verification."""
    hasher = CountingHasher()
    passwords = Passwords(hasher)
    assert hasher.calls == []
    dummy, real = hasher.unmatched(), hasher.hash(PASSWORD)
    assert dummy.rsplit("$", 2)[0] == real.rsplit("$", 2)[0] == "$argon2id$v=19$m=8,t=1,p=1"
    assert [len(part) for part in dummy.split("$")[-2:]] == [len(part) for part in real.split("$")[-2:]]
    assert not hasher.needs_rehash(dummy) and dummy != hasher.unmatched()
    hasher.calls.clear()
    assert not hasher.verify(dummy, PASSWORD) and not hasher.verify(dummy, DUMMY_GUESS)
    assert hasher.calls == ["verify", "verify"] and passwords.hasher is hasher


DUMMY_GUESS = "not-a-password-of-anyone"
"""The password the dummy hash used to be made of."""


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


def test_each_throttle_names_what_failed_and_offers_only_another_way_in() -> None:
    """A refusal says what failed too often; the password throttle offers a recovery code, the passkey throttle the
    password, and the recovery-code throttle never offers a recovery code."""
    said = {}
    for scope in ("password", "code", "passkey"):
        throttle = SignInThrottle(FakeClock(), ThrottleLimits(account_free=0, network_free=0), scope=scope)
        throttle.failed("oli", "10.0.0.0/24")
        with pytest.raises(SignInThrottledError) as refused:
            throttle.check("oli", "10.0.0.0/24")
        said[scope] = str(refused.value)
    assert "sign-ins" in said["password"] and "recovery code)" in said["password"]
    assert "recovery codes" in said["code"] and "sign in with" not in said["code"]
    assert "passkey" in said["passkey"] and "password)" in said["passkey"]
    assert all(line.count("\n") == 0 and "try again in 1 s" in line for line in said.values())


COMMON = ("123456789", "password1", "qwerty123", "iloveyou1")
"""Passwords a credential-stuffing list tries first."""


async def test_credential_stuffing_from_many_networks_is_bounded_in_all(serve: Serve) -> None:
    """Many names, each tried once with a common password, from 50 networks (each under its own free failures):
    past the server's budget the tries wait their turn, so failures in all stay within the budget plus the paced
    rate over the time the attack took; the owner's right password then waits at most the line's bound, and a
    recovery code waits for nothing (before: all 200 were checked at once)."""
    hasher, clock = CountingHasher(), FakeClock()
    srv = await start(serve)
    a, limits, waits = srv.arena, PaceLimits(free=20, per_s=2.0, max_wait_s=30.0), []

    async def sleep(seconds: float) -> None:
        """Wait on the fake clock."""
        waits.append(seconds)
        clock.advance(seconds)

    accounts = Accounts(a.storage, a.write, a.identities, Passwords(hasher), SignInThrottle(clock),
                        SignInThrottle(clock), pace=PasswordPace(clock, limits), sleep=sleep)
    made = await accounts.register("owner", PASSWORD, "terminal", "127.0.0.2")
    began, failures = clock(), 0
    for i, password in enumerate(COMMON):
        for n in range(50):
            with pytest.raises(SignInError):
                await accounts.login(f"user{i}x{n}", password, "terminal", f"10.{n}.0.1", f"10.{n}.0.0/24")
            failures += 1
    assert failures == 200 and failures <= limits.free + 1 + limits.per_s * (clock() - began)
    waits.clear()
    assert (await accounts.login("owner", PASSWORD, "terminal", "127.0.0.2", "127.0.0.0/24")).player.name == "owner"
    assert len(waits) == 1 and 0 < waits[0] <= limits.max_wait_s
    waits.clear()
    await accounts.recover("owner", made.recovery_codes[0], "a new password", "terminal", "127.0.0.2", "127.0.0.0/24")
    assert waits == []


def test_the_line_gives_each_network_one_place_and_a_bounded_wait() -> None:
    """Once the budget is spent, 50 networks trying at once get turns half a second apart; a second try of a network
    that waits is refused; a newcomer waits at most the line's bound, and past it is refused with a retry; networks
    that come back at each of their turns get no more than the paced rate in all."""
    clock = FakeClock()
    limits = PaceLimits(free=3, per_s=2.0, max_wait_s=30.0)
    pace = PasswordPace(clock, limits)
    for _ in range(3):
        assert pace.admit("10.0.0.0/24") == 0.0
    assert [pace.admit(f"10.{n}.0.0/24") for n in range(1, 51)] == [n * 0.5 for n in range(50)]
    with pytest.raises(SignInThrottledError):
        pace.admit("10.7.0.0/24")
    assert pace.admit("127.0.0.0/24") == 25.0
    assert [pace.admit(f"10.{n}.1.0/24") for n in range(10)] == [25.5 + n * 0.5 for n in range(10)]
    with pytest.raises(SignInThrottledError) as full:
        pace.admit("10.99.0.0/24")
    assert full.value.retry_ms is not None and full.value.retry_ms >= 500
    began, admitted = clock(), 0
    for _ in range(600):  # every network comes back at once each tenth of a second, for a minute
        clock.advance(0.1)
        for n in range(1, 51):
            try:
                if pace.admit(f"10.{n}.0.0/24") <= limits.max_wait_s:
                    admitted += 1
            except SignInThrottledError:
                pass
    assert admitted <= limits.per_s * (clock() - began) + 1

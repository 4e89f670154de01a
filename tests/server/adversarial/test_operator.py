"""Guessing the operator token from many addresses (loopback 127.1.x.y stands in for them; the operator uses
127.0.0.2): wrong tokens at `/metrics`, in moderation requests and in rated exhibitions are throttled with growing
locks per address and per network, and logged; the right token from another address still works at once."""

from __future__ import annotations

import asyncio
import logging

import pytest

from server.core.errors import RateLimitedError
from server.front.operator_auth import AuthLimits, OperatorAuth
from server.logs import LOGGER_NAME
from tests.conftest import Serve
from tests.helpers.wire import HONEST, OPERATOR, Client, attacker


async def metrics_status(port: int, token: str, source: str) -> tuple[int, str]:
    """The status and `Retry-After` of `GET /metrics` with `token` as the bearer, sent from `source`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        writer.write(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                     "\r\n".encode())
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)).decode()
    finally:
        writer.close()
    retry = next((line.split(":", 1)[1].strip() for line in head.splitlines()
                  if line.lower().startswith("retry-after:")), "")
    return int(head.split()[1]), retry


async def test_guesses_at_metrics_from_many_addresses_are_throttled_and_the_operator_still_gets_in(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """200 wrong tokens from 40 addresses of one network: past 5 per address and 20 for the network they get 429
    with `Retry-After` and are not even compared, each compared one is logged; the right token from the operator's
    address, in another network, is served at once (before: all 200 were compared and answered 401, unlogged)."""
    server = await serve()
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        answers = [await metrics_status(server.port, f"guess{i}", attacker(i % 40)) for i in range(200)]
    auth = server.router.moderation.operator
    assert auth.failed <= 20 + 1 and auth.throttled >= 200 - 21
    assert sum(status == 401 for status, _ in answers) == auth.failed
    assert all(status == 429 and int(retry) >= 1 for status, retry in answers if status != 401)
    logged = [r for r in caplog.records if r.getMessage() == "operator_auth_failed"]
    assert len(logged) == auth.failed and any(r.getMessage() == "operator_auth_locked" for r in caplog.records)
    assert (await metrics_status(server.port, OPERATOR, HONEST))[0] == 200
    assert (await metrics_status(server.port, OPERATOR, attacker(0)))[0] == 429  # locked, the token unread


async def test_guesses_in_moderation_requests_lock_the_address_not_the_operator(serve: Serve) -> None:
    """Wrong tokens in `moderate` (what `kalah admin` sends) and in a rated exhibition count together: past 6 the
    address gets `rate_limited` with a retry hint even for the right token, while the operator elsewhere acts."""
    server = await serve()
    guesser = await Client.open(server.url, "guesser", source=attacker(1))
    codes = []
    for i in range(8):
        if i % 2:
            await guesser.send(type="moderate", operator_token=f"guess{i}", act="online")
        else:
            await guesser.send(type="exhibition", south="random", north="random", rated=True,
                               operator_token=f"guess{i}")
        codes.append(await guesser.expect("error"))
    assert [c["code"] for c in codes[:6]] == ["not_operator"] * 6  # the sixth is compared, and locks
    assert all(c["code"] == "rate_limited" and c["retry_ms"] >= 900 for c in codes[6:]), codes
    await guesser.send(type="moderate", operator_token=OPERATOR, act="online")
    assert await guesser.error() == "rate_limited"
    operator = await Client.open(server.url, "operator", source=HONEST)
    done = await operator.request("moderated", type="moderate", operator_token=OPERATOR, act="online")
    assert done["act"] == "online"
    for client in (guesser, operator):
        await client.close()


def test_locks_double_with_each_failure_up_to_a_cap_and_the_right_token_clears_them() -> None:
    """After the free failures each wrong token locks the address twice as long as the one before (1, 2, 4 ... s, at
    most `max_lock_s`); a lock refuses the right token too; once it passes the right token works and clears."""
    now = [0.0]
    auth = OperatorAuth(lambda token: token == "right", AuthLimits(free_per_address=2, free_per_network=100,
                                                                   max_lock_s=16), clock=lambda: now[0])
    locks = []
    for _ in range(9):
        assert auth.check("127.1.0.1", "wrong", "metrics") is False
        wait = auth.addresses["127.1.0.1"].locked_until - now[0]
        locks.append(wait)
        if wait > 0:
            with pytest.raises(RateLimitedError, match="too many wrong operator tokens"):
                auth.check("127.1.0.1", "right", "metrics")
        now[0] += wait
    assert locks == [0, 0, 1, 2, 4, 8, 16, 16, 16]
    assert auth.check("127.1.0.2", "right", "metrics") is True
    assert auth.check("127.1.0.1", "right", "metrics") is True and "127.1.0.1" not in auth.addresses
    assert auth.check("127.1.0.1", None, "metrics") is False and "127.1.0.1" not in auth.addresses

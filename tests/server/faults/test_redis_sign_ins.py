"""Redis stopped, or silent, while passwords are guessed on two nodes: the shared counts cannot be read, so each node
throttles the guesses it sees by its own counts, a right password still signs in, and every answer is a plain sign-in
one, given without waiting on Redis."""

from __future__ import annotations

import asyncio
import logging

import pytest

from server.core.sign_in_throttle import ThrottleLimits
from server.logs import LOGGER_NAME
from tests.conftest import Serve
from tests.helpers.redis_server import RedisServer
from tests.helpers.tcp_proxy import TcpProxy
from tests.server.cluster.test_nodes import nodes
from tests.server.cluster.test_sign_in_throttle_cluster import WRONG, counted, guessers, login
from tests.server.test_accounts import PASSWORD

SIGN_IN_CODES = {"sign_in_failed", "sign_in_throttled"}


async def test_guesses_while_redis_is_down_are_still_throttled_by_each_node(serve: Serve, pg_url: str, bus_url: str,
                                                                          redis_server: RedisServer,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Two wrong guesses counted in Redis, then Redis stopped: wrong guesses sent to node A are refused as wrong
    until A's own count passes its five free ones (at most six checked there), then throttled with a wait and no
    password checked; node B throttles its own guesses alike; after the wait the right password signs in on either
    node while Redis is still down; no answer is anything but a sign-in answer, and each node logs the fallback once
    (for passwords)."""
    a, b = await nodes(serve, pg_url, bus_url, sign_in_throttle=ThrottleLimits(base_s=1.0))
    on_a, on_b = await guessers(a, b, "127.63.0.0/24", "outage")
    assert [(await login(c, "outage", WRONG)).get("code") for c in (on_a, on_b)] == ["sign_in_failed"] * 2
    redis_server.stop()
    waits = []
    caplog.set_level(logging.WARNING, logger=LOGGER_NAME)
    try:
        for guesser, node in ((on_a, a), (on_b, b)):
            answers = [await login(guesser, "outage", WRONG) for _ in range(7)]
            assert all(answer.get("code") in SIGN_IN_CODES for answer in answers), answers
            assert "Traceback" not in str(answers)
            assert [answer["code"] for answer in answers].count("sign_in_failed") <= 6
            check = counted(node)
            throttled = await login(guesser, "outage", PASSWORD)
            assert throttled.get("code") == "sign_in_throttled" and throttled["retry_ms"] > 0, throttled
            assert check.verified == 0
            waits.append(throttled["retry_ms"] / 1000)
        await asyncio.sleep(max(waits) + 0.1)
        assert (await login(on_a, "outage", PASSWORD))["type"] == "signed_in"
        assert (await login(on_b, "outage", PASSWORD))["type"] == "signed_in"
        assert [r.getMessage() for r in caplog.records].count("sign_in_counts_unshared") == 2
    finally:
        redis_server.start()


async def test_guesses_while_redis_is_silent_are_answered_and_throttled(serve: Serve, pg_url: str,
                                                                      redis_server: RedisServer) -> None:
    """Two nodes reach Redis through a proxy that then holds every byte (Redis unreachable without a word): each
    wrong guess on node A is still answered within seconds (no sign-in waits on Redis past its short timeout), A
    throttles them by its own count, and the right password signs in after the wait."""
    proxy = TcpProxy("127.0.0.1", redis_server.port)
    await proxy.start()
    try:
        a, b = await nodes(serve, pg_url, f"redis://127.0.0.1:{proxy.port}/0",
                           sign_in_throttle=ThrottleLimits(base_s=1.0))
        on_a, _ = await guessers(a, b, "127.64.0.0/24", "silent")
        assert (await login(on_a, "silent", WRONG)).get("code") == "sign_in_failed"
        proxy.freeze()
        answers = [await login(on_a, "silent", WRONG) for _ in range(7)]
        assert [answer.get("code") for answer in answers][-1] == "sign_in_throttled", answers
        assert all(answer.get("code") in SIGN_IN_CODES for answer in answers), answers
        await asyncio.sleep(answers[-1]["retry_ms"] / 1000 + 0.1)
        assert (await login(on_a, "silent", PASSWORD))["type"] == "signed_in"
    finally:
        await proxy.close()

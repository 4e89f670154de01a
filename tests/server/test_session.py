"""The per-connection rate limiter (a token bucket), driven by a fake clock: no test waits; the frames the server
writes."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from server.core.rates import RateLimiter
from server.edge.session import frame
from tests.helpers.wire import FakeClock


def allowed(limiter: RateLimiter, tries: int) -> int:
    """How many of `tries` messages sent at once the limiter lets through."""
    return sum(limiter.allow() for _ in range(tries))


def test_a_full_bucket_allows_the_burst_then_refuses() -> None:
    """A new connection may send `burst` messages at once; each further one is refused and counted."""
    clock = FakeClock()
    limiter = RateLimiter(rate=10, burst=5, now=clock)
    assert allowed(limiter, 8) == 5
    assert limiter.refused == 3


def test_tokens_come_back_at_the_rate() -> None:
    """After half a second at 10 messages a second, five more messages go through, and no sixth."""
    clock = FakeClock()
    limiter = RateLimiter(rate=10, burst=5, now=clock)
    assert allowed(limiter, 5) == 5
    clock.advance(0.5)
    assert allowed(limiter, 6) == 5
    assert limiter.refused == 1


def test_an_idle_connection_saves_up_no_more_than_the_burst() -> None:
    """However long a connection stays quiet, its next burst is at most `burst` messages."""
    clock = FakeClock()
    limiter = RateLimiter(rate=10, burst=5, now=clock)
    assert allowed(limiter, 5) == 5
    clock.advance(3600)
    assert allowed(limiter, 20) == 5


def test_fractions_of_a_token_add_up() -> None:
    """Steps shorter than one token's worth refuse, but together they earn the token."""
    clock = FakeClock()
    limiter = RateLimiter(rate=4, burst=1, now=clock)
    assert limiter.allow()
    clock.advance(0.125)
    assert not limiter.allow()  # half a token so far
    clock.advance(0.125)
    assert limiter.allow()  # the second half
    assert not limiter.allow()
    assert limiter.refused == 2


def test_a_steady_sender_at_the_rate_is_never_refused() -> None:
    """A client sending exactly at the allowed rate, after spending its burst, is never refused."""
    clock = FakeClock()
    limiter = RateLimiter(rate=8, burst=3, now=clock)
    assert allowed(limiter, 3) == 3
    for _ in range(1000):
        clock.advance(1 / 8)
        assert limiter.allow()
    assert limiter.refused == 0


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70_000])
def test_a_text_framed_once_is_the_frame_websockets_would_write(size: int) -> None:
    """`frame` (an event framed once for all its followers) makes the bytes websockets' own server side writes for a
    text message, at every length encoding (7-bit, 16-bit, 64-bit)."""
    text = bytes(ord("a") + i % 26 for i in range(size))
    assert frame(text) == Frame(Opcode.TEXT, text).serialize(mask=False)

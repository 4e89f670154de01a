"""Shared test helpers and fixtures: positions by hand, servers that are always closed, a fake clock, pages of a
server in a headless browser, and no process left running after a test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

import pytest

from protocol import Position, Side, Variant
from server.app import RunningServer, start_server
from tests.browser import Pages, chromium
from tests.processes import reap
from tests.wire import OPERATOR, FakeClock

# PostgreSQL (`postgres`, `pg_url`) and Redis (`redis_server`, `bus_url`), each started once per session
pytest_plugins = ["tests.pg", "tests.redis_server"]


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    """After every test, kill what `tests.processes.spawn` started that the test left running (any failure path)."""
    try:
        yield
    finally:
        reap()


def pos(variant: str | Variant, pits: list[int], to_move: str = "S", flags: str = "-") -> Position:
    """A position of `variant` from pits in bin order, e.g. pos('kalah(6,4)', [...])."""
    v = Variant.parse(variant) if isinstance(variant, str) else variant
    return Position.from_fen(v, f"{','.join(map(str, pits))} {to_move} 10 {flags}")


SOUTH, NORTH = Side.SOUTH, Side.NORTH


class Serve(Protocol):
    """Starts a server on a free port; the `serve` fixture closes every one it started."""

    def __call__(self, db: str | Path | None = None, **options: Any) -> Awaitable[RunningServer]:
        """A started server on `db` (a path or URL; default: the test's `arena.sqlite3`) with `start_server` options."""
        ...


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Serve]:
    """Start servers on free ports (a restart reuses the same database); all are closed at the end, even on failure."""
    async with AsyncExitStack() as stack:

        async def start(db: str | Path | None = None, **options: Any) -> RunningServer:
            options.setdefault("operator_token", OPERATOR)
            running = await start_server(db or tmp_path / "arena.sqlite3", **options)
            stack.push_async_callback(running.close)
            return running

        yield start


@pytest.fixture
async def arena(serve: Serve) -> RunningServer:
    """A server on a free port with a fresh database."""
    return await serve()


@pytest.fixture
def clock() -> FakeClock:
    """A time source that moves only when the test advances it (pass it as `serve(clock=clock)`)."""
    return FakeClock()


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """A headless Chromium for the test, closed at its end (skipped or failed as tests/browser.py says)."""
    async with chromium() as launched:
        yield launched


@pytest.fixture
async def pages(browser: Any, arena: RunningServer) -> AsyncIterator[Pages]:
    """Pages of the test's server in a headless Chromium; checked for script errors and CSP violations at the end."""
    opened = Pages(browser, arena)
    yield opened
    await opened.check()

"""The browser tests here share one Chromium per module (starting Playwright's driver and a Chromium cost a second a
test): each test opens contexts of its own, closed after it, so no cookie, storage or page outlives it. A shared
browser lives in one event loop, so every async test and fixture of this folder runs in its module's loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from server.assembly import RunningServer
from tests.conftest import Serve, servers
from tests.helpers.browser import ContextsOf, Pages, chromium

HERE = Path(__file__).parent
MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run this folder's async tests in their module's event loop (the shared browser's)."""
    for item in items:
        if item.path.is_relative_to(HERE) and pytest_asyncio.is_async_test(item):
            item.add_marker(MODULE_LOOP, append=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_chromium() -> AsyncIterator[Any]:
    """A headless Chromium for the module's tests, closed after the last."""
    async with chromium() as launched:
        yield launched


@pytest_asyncio.fixture(loop_scope="module")
async def browser(shared_chromium: Any) -> AsyncIterator[ContextsOf]:
    """The module's Chromium for one test; the contexts the test opened are closed at its end."""
    contexts = ContextsOf(shared_chromium)
    try:
        yield contexts
    finally:
        await contexts.close()


@pytest_asyncio.fixture(loop_scope="module")
async def serve(tmp_path: Path) -> AsyncIterator[Serve]:
    """As tests/conftest.py's `serve`, in the module's loop."""
    async with servers(tmp_path) as start:
        yield start


@pytest_asyncio.fixture(loop_scope="module")
async def arena(serve: Serve) -> RunningServer:
    """A server on a free port with a fresh database."""
    return await serve()


@pytest_asyncio.fixture(loop_scope="module")
async def pages(browser: ContextsOf, arena: RunningServer) -> AsyncIterator[Pages]:
    """Pages of the test's server in the module's Chromium; checked for script errors and CSP violations."""
    opened = Pages(browser, arena)
    yield opened
    await opened.check()

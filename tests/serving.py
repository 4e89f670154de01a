"""Servers a test starts on free ports, every one closed at its end: what the `serve` fixtures give (tests/conftest.py,
and tests/browser.py's on the browser's event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from server.app import RunningServer, start_server
from tests.wire import OPERATOR


class Serve(Protocol):
    """Starts a server on a free port; the `serve` fixture closes every one it started."""

    def __call__(self, db: str | Path | None = None, **options: Any) -> Awaitable[RunningServer]:
        """A started server on `db` (a path or URL; default: the test's `arena.sqlite3`) with `start_server` options."""
        ...


@asynccontextmanager
async def servers(folder: Path) -> AsyncIterator[Serve]:
    """Start servers on free ports (by default over `folder`'s `arena.sqlite3`, so a restart reuses the database);
    all are closed on the way out, even on failure."""
    async with AsyncExitStack() as stack:

        async def start(db: str | Path | None = None, **options: Any) -> RunningServer:
            options.setdefault("operator_token", OPERATOR)
            running = await start_server(db or folder / "arena.sqlite3", **options)
            stack.push_async_callback(running.close)
            return running

        yield start

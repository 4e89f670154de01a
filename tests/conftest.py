"""Shared test helpers and fixtures: positions by hand, servers that are always closed, a fake clock, pages of a
server in a headless browser; no process left running after a test, and nothing written to the user's own folders."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest

from protocol import Position, Side, Variant
from server.assembly import RunningServer, start_server
from server.core.passwords import PasswordCost
from tests.helpers.browser import Pages, chromium
from tests.helpers.processes import reap
from tests.helpers.wire import OPERATOR, FakeClock

# PostgreSQL (`postgres`, `pg_url`) and Redis (`redis_server`, `bus_url`), each started once per session
pytest_plugins = ["tests.helpers.pg", "tests.helpers.redis_server"]


CHEAP = PasswordCost(time_cost=1, memory_kib=8, parallelism=1)
"""argon2id's smallest parameters, every test server's unless the test gives its own: the tests check the paths,
not the cost (the default costs a few tenths of a second a password, many times a run)."""


USER_DIRS = {"XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "config"}
"""The per-user folders (platformdirs, on Linux) where the project keeps its endgame databases (cache), its default
databases (data) and the identities the client remembers (config), each in a `kalah-arena` folder."""


TERMINATED: list[int] = []
"""The SIGTERMs this run got (the first stops it, tearing everything down)."""


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM stops the run as Ctrl-C does: the test is interrupted and every fixture torn down (the session's
    PostgreSQL and redis-server stopped); a second SIGTERM ends the process at once."""
    TERMINATED.append(signum)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt("SIGTERM")


def pytest_configure(config: pytest.Config) -> None:
    """A run ended by SIGTERM (a CI job stopped, `timeout`) tears down like one ended by Ctrl-C."""
    signal.signal(signal.SIGTERM, _terminated)


@pytest.fixture(autouse=True)
def sigterm_tears_down() -> Iterator[None]:
    """After every test, SIGTERM still tears the run down (the test may have run code that set a handler of its
    own, then the default), unless one came already."""
    yield
    if not TERMINATED and signal.getsignal(signal.SIGTERM) is not _terminated:
        signal.signal(signal.SIGTERM, _terminated)


@pytest.fixture(scope="session", autouse=True)
def user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The per-user folders of the whole run, the processes its tests start included, in a temporary folder: a test
    never writes to the user's own ~/.cache/kalah-arena (and ~/.local/share, ~/.config)."""
    root = tmp_path_factory.mktemp("user")
    saved = {name: os.environ.get(name) for name in USER_DIRS}
    os.environ.update({name: str(root / folder) for name, folder in USER_DIRS.items()})
    try:
        yield root
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(autouse=True)
def own_folders(user_dirs: Path) -> Iterator[None]:
    """After every test: it wrote nothing to the per-user folders. A test gives what it stores a temporary folder of
    its own (KALAH_EGDB_DIR, --db, XDG_CACHE_HOME, ...): one that does not fails here, naming what it wrote."""
    yield
    written = sorted(user_dirs.glob("*/kalah-arena"))
    found = [str(path.relative_to(user_dirs) / file.relative_to(path)) for path in written
             for file in sorted(path.rglob("*")) if file.is_file()]
    for path in written:
        shutil.rmtree(path, ignore_errors=True)  # the next test starts clean
    assert not written, f"the test wrote to the user's own folders (use a temporary one): {found[:5]}"


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    """After every test, kill what `tests.helpers.processes.spawn` started that the test left running (any failure
    path)."""
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


@asynccontextmanager
async def servers(tmp_path: Path) -> AsyncIterator[Serve]:
    """What the `serve` fixture yields, for fixtures of other event-loop scopes (tests/server/web/conftest.py)."""
    async with AsyncExitStack() as stack:

        async def start(db: str | Path | None = None, **options: Any) -> RunningServer:
            options.setdefault("operator_token", OPERATOR)
            options.setdefault("password_cost", CHEAP)
            running = await start_server(db or tmp_path / "arena.sqlite3", **options)
            stack.push_async_callback(running.close)
            return running

        yield start


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Serve]:
    """Start servers on free ports (a restart reuses the same database); all are closed at the end, even on failure."""
    async with servers(tmp_path) as start:
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
    """A headless Chromium for the test, closed at its end (skipped or failed as tests/helpers/browser.py says)."""
    async with chromium() as launched:
        yield launched


@pytest.fixture
async def pages(browser: Any, arena: RunningServer) -> AsyncIterator[Pages]:
    """Pages of the test's server in a headless Chromium; checked for script errors and CSP violations at the end."""
    opened = Pages(browser, arena)
    yield opened
    await opened.check()

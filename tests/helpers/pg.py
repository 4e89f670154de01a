"""A throwaway PostgreSQL server for the tests: initdb into a temporary directory, postgres on a free port.

The session fixture `postgres` starts one server (as the unprivileged `postgres` user when the
tests run as root, since postgres refuses to run as root) and stops it at the end; `pg_url`
gives each test a fresh, empty database, and drops the earlier tests' ones first. The server's
files are in memory (/dev/shm) where there is room: each database is a few MB of files to write,
and a whole run's (2 GB when they were all kept) took minutes to delete from a busy disk.
Without the server binaries (Debian: `apt-get install postgresql`) or asyncpg the tests that
need them are skipped, unless `KALAH_REQUIRE_SERVICES=1`, when they fail.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.services_watchdog import register

SUPERUSER = "kalah"
MEMORY = Path("/dev/shm")
"""A file system in memory, used for the server's files when it has `MEMORY_NEEDED` bytes free."""
MEMORY_NEEDED = 1 << 30


def _unavailable(reason: str) -> None:
    """Skip the test for a missing service, or fail it when services are required (CI)."""
    if os.environ.get("KALAH_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (KALAH_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(reason)


def find_bindir() -> Path | None:
    """The directory of initdb, pg_ctl and postgres: $KALAH_PG_BIN, Debian's newest, or the PATH."""
    candidates = [os.environ.get("KALAH_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]), reverse=True)
    on_path = shutil.which("pg_ctl")
    candidates.append(str(Path(on_path).parent) if on_path else "")
    for candidate in candidates:
        if candidate and all((Path(candidate) / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return Path(candidate)
    return None


def _in_memory() -> str | None:
    """The folder in memory for the server's files, if there is one with room (None: the temporary folder)."""
    try:
        room = shutil.disk_usage(MEMORY).free
    except OSError:
        return None
    return str(MEMORY) if room >= MEMORY_NEEDED and os.access(MEMORY, os.W_OK) else None


def _free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> str | None:
    """The user to run the server as: None when not root, else `postgres` (created if missing)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "postgres"], check=True)
    return "postgres"


class PostgresServer:
    """One postgres process on 127.0.0.1 with its data in a temporary directory, superuser `kalah`, trust auth."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.user = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="kalah-pg-", dir=_in_memory()))
        self.data = self.root / "data"
        self.port = 0
        self._names = itertools.count(1)
        self.created: list[str] = []
        """The databases made by `new_database` and not dropped yet."""

    def _cmd(self, tool: str, *args: str) -> list[str]:
        """The command line running `tool` of the server binaries, as the server's user."""
        cmd = [str(self.bindir / tool), *args]
        return cmd if self.user is None else ["runuser", "-u", self.user, "--", *cmd]

    def _run(self, tool: str, *args: str) -> None:
        """Run a server tool; its output is shown only if it fails."""
        done = subprocess.run(self._cmd(tool, *args), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def start(self) -> None:
        """initdb (no fsync: a test cluster need not survive the machine), then start on a free port."""
        register(f"postgres {self.data}")  # before it starts: a run killed meanwhile stops it all the same
        register(f"remove {self.root}")
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync")
        for _attempt in range(3):  # the free port may be taken between the probe and the start
            self.port = _free_port()
            try:
                self.resume()
                return
            except RuntimeError:
                continue
        log = (self.root / "server.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"postgres did not start: {log}")

    def resume(self) -> None:
        """Start the (initialised, stopped) server on its port."""
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c full_page_writes=off -c max_connections=200 -c max_wal_size=256MB")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60",
                  "-o", options, "start")

    def halt(self) -> None:
        """Stop the server and keep its files (an outage that `resume` ends)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        """Stop the server and remove its files."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """The URL of one of the server's databases."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database and return its URL."""
        name = f"arena{next(self._names)}"
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, name)
        self.created.append(name)
        return self.url(name)

    def drop_databases(self) -> None:
        """Drop every database `new_database` made (closing what is still connected to them)."""
        if self.created:
            drops = [arg for name in self.created for arg in ("-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")]
            self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, "-d", "postgres", "-q",
                      "-v", "ON_ERROR_STOP=1", *drops)
            self.created.clear()


async def query(url: str, sql: str, *args: object) -> list[Any]:
    """The rows of one query on the database at `url`, on a connection of its own."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole test session (skipped, or failed under KALAH_REQUIRE_SERVICES=1,
    without the server binaries or asyncpg)."""
    try:
        import asyncpg  # noqa: F401
    except ImportError:
        _unavailable("asyncpg is not installed (pip install -e '.[test]')")
    bindir = find_bindir()
    if bindir is None:
        _unavailable("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql")
    assert bindir is not None
    server = PostgresServer(bindir)
    try:
        server.start()  # a start that timed out may have left a postmaster to stop
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """The URL of a fresh, empty database on the session's PostgreSQL server (the earlier tests' databases are
    dropped first: their servers and processes have stopped by now)."""
    postgres.drop_databases()
    return postgres.new_database()


@pytest.fixture(params=["sqlite", "postgres"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """A fresh database of each backend in turn: a SQLite file path, then a PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "arena.sqlite3"
    return str(request.getfixturevalue("pg_url"))

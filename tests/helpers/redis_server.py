"""A throwaway Redis server for the tests: `redis-server` on a free loopback port, nothing saved to disk.

The session fixture `redis_server` starts one (and can stop and start it again on the same port,
to test a lost bus); `bus_url` is its URL. Without `redis-server` (Debian: `apt-get install
redis-server`) or redis-py the tests that need it are skipped, unless `KALAH_REQUIRE_SERVICES=1`,
when they fail.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.pg import _free_port, _unavailable
from tests.helpers.services_watchdog import register


class RedisServer:
    """One redis-server process on 127.0.0.1 with its working directory in a temporary directory."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.root = Path(tempfile.mkdtemp(prefix="kalah-redis-"))
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's URL."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server (on the same port as before, after a stop) and wait until it accepts connections."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.root), "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        register(f"process {self.process.pid} {self.port}")  # in its command line before and after it renames itself
        register(f"remove {self.root}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}") from None
            time.sleep(0.02)  # a separate process starting: nothing to await
        raise RuntimeError("redis-server did not start within 20 s")

    def stop(self) -> None:
        """Stop the server (its clients see their connections drop)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One Redis server for the whole test session (skipped, or failed under KALAH_REQUIRE_SERVICES=1,
    without redis-server or redis-py)."""
    try:
        import redis  # noqa: F401
    except ImportError:
        _unavailable("redis-py is not installed (pip install -e '.[test]')")
    binary = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists()
                                             else None)
    if binary is None:
        _unavailable("redis-server not found: apt-get install redis-server")
    assert binary is not None
    server = RedisServer(binary)
    try:
        server.start()  # a start that fails still has a process to stop
        yield server
    finally:
        server.close()


@pytest.fixture
def bus_url(redis_server: RedisServer) -> str:
    """The URL of the session's Redis server (started again if a test stopped it)."""
    if redis_server.process is None:
        redis_server.start()
    return redis_server.url

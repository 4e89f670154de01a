"""A `kalah` command in a child process for tests: its output as it comes, and killed on every path.

The child sets SIGINT's handler itself (default, or ignored to play a background job), so tests
that send it SIGINT hold when the test run itself was started with SIGINT ignored.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN if sys.argv[1] == "ignore" else signal.default_int_handler)
from cli.main import main
sys.exit(main(sys.argv[2:]))
"""
HANG_GUARD_S = 120.0
"""How long a child may take to end once stopped before the test fails (it takes well under a second)."""


class Running:
    """A `kalah` child process and everything it has printed (stdout and stderr together)."""

    def __init__(self, argv: list[str], env: dict[str, str], sigint: str = "default") -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, sigint, *argv], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env)
        self.output = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Collect the child's output as it comes (progress lines end in a carriage return)."""
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 65536):
            self.output += chunk

    def text(self) -> str:
        """What the child has printed so far."""
        return self.output.decode(errors="replace")

    def wait_for(self, needle: str, timeout: float = HANG_GUARD_S) -> None:
        """Wait until the child has printed `needle` (fails if it ends or takes too long)."""
        end = time.monotonic() + timeout
        while needle not in self.text():
            assert self.proc.poll() is None, f"ended before {needle!r}: {self.text()}"
            assert time.monotonic() < end, f"no {needle!r} in {self.text()!r}"
            time.sleep(0.05)

    def stop(self, signum: int) -> int:
        """Send `signum` and wait for the end; the exit status."""
        self.proc.send_signal(signum)
        status = self.proc.wait(HANG_GUARD_S)
        self._reader.join(HANG_GUARD_S)
        return status

    def kill(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextmanager
def kalah(argv: list[str], tmp_path: Path, sigint: str = "default") -> Iterator[Running]:
    """A running `kalah ARGV` with databases in `tmp_path / "egdb"` and books in `tmp_path / "books"`,
    killed on every path."""
    env = dict(os.environ, KALAH_EGDB_DIR=str(tmp_path / "egdb"), KALAH_BOOK_DIR=str(tmp_path / "books"))
    running = Running(argv, env, sigint)
    try:
        yield running
    finally:
        running.kill()

"""A `kalah` command in a child process whose output is watched as it comes (`tests.helpers.processes` kills it).

The child gets SIGINT's default handling (`KALAH`), or SIGINT ignored to play a background job
(`sigint="ignore"`); its databases and books live under the test's directory.
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

from tests.helpers.processes import KALAH, started, wait_working

KALAH_SIGINT_IGNORED = (sys.executable, "-c",
                        "import runpy, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                        "runpy.run_module('cli.main', run_name='__main__')")
"""The `kalah` command started as a background job of a non-interactive shell is: SIGINT ignored."""
KALAH_NO_WIND_UP = (sys.executable, "-c",
                    "import signal, sys, cli.interrupts; from cli.main import main; cli.interrupts.WIND_UP_S = 0.0; "
                    "signal.signal(signal.SIGINT, signal.default_int_handler); sys.exit(main())")
"""The `kalah` command with no time for interrupted work to wind up: a stop ends it by the wind-up's own path."""
HANG_GUARD_S = 120.0
"""How long a child may take to print what is awaited, or to end once stopped, before the test fails."""


class Running:
    """A running `kalah` child and everything it has printed (stdout and stderr together)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.output = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Collect the child's output as it comes (progress lines end in a carriage return)."""
        assert self.proc.stdout is not None
        try:
            while chunk := os.read(self.proc.stdout.fileno(), 65536):
                self.output += chunk
        except (OSError, ValueError):  # the pipe was closed on the way out
            pass

    def text(self) -> str:
        """What the child has printed so far."""
        return self.output.decode(errors="replace")

    def wait_for(self, needle: str, timeout: float = HANG_GUARD_S) -> None:
        """Wait until the child has printed `needle` (fails if it ends first or takes too long)."""
        end = time.monotonic() + timeout
        while needle not in self.text():
            assert self.proc.poll() is None or self._reader.is_alive(), f"ended before {needle!r}: {self.text()}"
            assert time.monotonic() < end, f"no {needle!r} in {self.text()!r}"
            time.sleep(0.05)

    def wait_working(self, cpu_s: float = 0.2) -> None:
        """Wait until the child's work thread has run `cpu_s` more seconds of processor time: its signal handlers
        are set and the search or build is under way (a fixed sleep may end before start-up on a loaded machine)."""
        wait_working(self.proc.pid, cpu_s, HANG_GUARD_S)

    def stop(self, signum: int) -> int:
        """Send `signum` and wait for the end and the last output; the exit status."""
        self.proc.send_signal(signum)
        status = self.proc.wait(HANG_GUARD_S)
        self._reader.join(HANG_GUARD_S)
        return status

    def end(self) -> int:
        """Wait for the child to end by itself; the exit status."""
        status = self.proc.wait(HANG_GUARD_S)
        self._reader.join(HANG_GUARD_S)
        return status


@contextmanager
def kalah(argv: list[str], tmp_path: Path, sigint: str = "default", wind_up: bool = True) -> Iterator[Running]:
    """A running `kalah ARGV` with databases in `tmp_path / "egdb"` and books in `tmp_path / "books"` (with
    `wind_up=False`, no time for interrupted work to wind up), killed with its process group on every path."""
    env = dict(os.environ, KALAH_EGDB_DIR=str(tmp_path / "egdb"), KALAH_BOOK_DIR=str(tmp_path / "books"))
    command = KALAH_NO_WIND_UP if not wind_up else KALAH if sigint == "default" else KALAH_SIGINT_IGNORED
    with started([*command, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env) as proc:
        yield Running(proc)

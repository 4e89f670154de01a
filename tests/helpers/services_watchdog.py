"""The services' watchdog: a test run killed outright (SIGKILL, a crash) still stops its PostgreSQL and redis-server.

Ctrl-C and SIGTERM tear the session's fixtures down, and the fixtures stop the services; a SIGKILL
gives pytest no chance to. So the first service started also starts this module as a process in a
session of its own (a signal to pytest's group does not reach it), reading from a pipe whose writing
end only pytest holds. Each service is registered on that pipe as it starts; when the pipe reaches
its end, pytest is gone however it ended, and the watchdog stops what is still running of what was
registered and removes its files. After a normal teardown there is nothing left to stop, and it just exits.

Lines on the pipe: `postgres DATADIR` (the postmaster named by DATADIR/postmaster.pid, given SIGQUIT, an
immediate shutdown, then SIGKILL after 5 s), `process PID TOKEN` (SIGKILL, if the process's command line
still holds TOKEN: a pid may be reused) and `remove PATH` (a directory to delete at the end).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

_watchdog: subprocess.Popen[str] | None = None


def _command_line(pid: int) -> str:
    """A process's command line with spaces between its words ('' if it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts until reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_postmaster(data: str) -> None:
    """Shut the postmaster of DATADIR down at once (its backends follow it), SIGKILL after 5 s."""
    try:
        pid = int(Path(data, "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return
    if data not in _command_line(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGQUIT)
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # another process's exit: nothing to wait on but polling
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def watch(lines: IO[str]) -> None:
    """Read registrations until the end of the pipe, then stop and remove everything registered."""
    postgres: list[str] = []
    processes: list[tuple[int, str]] = []
    remove: list[str] = []
    for line in lines:
        kind, _, rest = line.rstrip("\n").partition(" ")
        if kind == "postgres":
            postgres.append(rest)
        elif kind == "process":
            number, _, token = rest.partition(" ")
            processes.append((int(number), token))
        elif kind == "remove":
            remove.append(rest)
    for pid, token in processes:
        if token in _command_line(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for data in postgres:
        _stop_postmaster(data)
    for path in remove:
        shutil.rmtree(path, ignore_errors=True)


def _close() -> None:
    """At a normal exit: end the pipe, so the watchdog checks (finding the services stopped) and exits; reap it."""
    if _watchdog is not None and _watchdog.stdin is not None:
        with contextlib.suppress(OSError):
            _watchdog.stdin.close()
        try:
            _watchdog.wait(timeout=15)
        except subprocess.TimeoutExpired:
            _watchdog.kill()
            _watchdog.wait()


def register(line: str) -> None:
    """Tell the watchdog (started on first use) of one more thing to stop if this run dies without teardown."""
    global _watchdog
    if _watchdog is None:
        _watchdog = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        atexit.register(_close)
    assert _watchdog.stdin is not None
    _watchdog.stdin.write(line + "\n")
    _watchdog.stdin.flush()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch(sys.stdin)

"""Processes the tests start: killed on every path, and interruptible even when the suite ignores SIGINT.

A test that starts a process must not leave it running when an assert fails, a timeout
fires or the run is stopped: `started` (blocking) and `spawned` (asyncio) kill the process's
whole group on the way out unless it has ended, then reap it; what `spawn` starts for a test
that stops it by steps of its own is killed after the test by conftest's autouse fixture
`no_process_left`. Every process runs in a group of its own, so a Ctrl-C at the terminal goes
to pytest, which then kills them. A suite run in the background
(`nohup`, `cmd &` in a script) ignores SIGINT, and children inherit that, so a Python child
would never see the SIGINT a test sends; `KALAH` starts the `kalah` command with SIGINT
restored, as a terminal would give it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.helpers.paths import ROOT_DIR

ROOT = ROOT_DIR
CHEAP_PASSWORDS = "1,8,1"
"""`--password-cost` of argon2id's smallest parameters, for servers whose tests check the paths, not the cost."""

KALAH = (sys.executable, "-c",
         "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "runpy.run_module('cli.main', run_name='__main__')")
"""The `kalah` command (`python -m cli.main`), with SIGINT's default handling whatever this process ignores."""


def _kill_group(proc: subprocess.Popen[Any] | asyncio.subprocess.Process) -> None:
    """SIGKILL a child's process group (the child and whatever it started) unless the child was reaped already
    (its id may then belong to another group by now); a child that has exited but is not reaped keeps its id."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def started(argv: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """`subprocess.Popen(argv)` in a group of its own; on the way out its group is killed and it is reaped."""
    proc: subprocess.Popen[Any] = subprocess.Popen(list(argv), cwd=popen.pop("cwd", ROOT), start_new_session=True,
                                                   **popen)
    try:
        yield proc
    finally:
        _kill_group(proc)  # also what it started and left behind
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def run(argv: Sequence[str], timeout: float = 120, **popen: Any) -> subprocess.CompletedProcess[str]:
    """Run a command to its end with its output captured as text; killed with its group if it outlives `timeout`."""
    given = popen.pop("input", None)
    with started(argv, stdin=subprocess.DEVNULL if given is None else subprocess.PIPE, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True, **popen) as proc:
        out, err = proc.communicate(given, timeout=timeout)
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


_SPAWNED: list[asyncio.subprocess.Process] = []
"""Process groups `spawn` started in this test (killed after it by `reap`)."""


async def spawn(*argv: str, **kw: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec(*argv)` in a group of its own, which `reap` kills after the test (an autouse
    fixture of conftest) if the test left it running on any path: for processes that a test starts and stops by
    steps of its own (a node killed with SIGKILL, restarted, stopped with SIGTERM)."""
    proc = await asyncio.create_subprocess_exec(*argv, cwd=kw.pop("cwd", ROOT), start_new_session=True, **kw)
    _SPAWNED.append(proc)
    return proc


def reap() -> None:
    """Kill the group of every process `spawn` started that is still running."""
    while _SPAWNED:
        _kill_group(_SPAWNED.pop())


@contextlib.asynccontextmanager
async def spawned(*argv: str, **kw: Any) -> AsyncIterator[asyncio.subprocess.Process]:
    """`asyncio.create_subprocess_exec(*argv)` in a group of its own; on the way out its group is killed."""
    proc = await asyncio.create_subprocess_exec(*argv, cwd=kw.pop("cwd", ROOT), start_new_session=True, **kw)
    try:
        yield proc
    finally:
        _kill_group(proc)
        await proc.wait()


READ_SYSCALL = {"x86_64": 0, "aarch64": 63}
"""The number of read(2) in /proc/PID/syscall, by machine."""


def _fields(pid: int, task: int | None = None) -> list[str]:
    """The fields of /proc/PID/stat (or of one thread's, /proc/PID/task/TID/stat) after the command's name: the
    state first; none once the process is gone."""
    path = Path(f"/proc/{pid}/stat") if task is None else Path(f"/proc/{pid}/task/{task}/stat")
    try:
        return path.read_text().rpartition(")")[2].split()
    except OSError:
        return []


def waits_reading(pid: int, fd: int = 0) -> bool:
    """Whether process `pid` is blocked in read(2) on file descriptor `fd` (Linux's /proc/PID/syscall)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == str(READ_SYSCALL[platform.machine()]) and int(fields[1], 16) == fd


def threads(pid: int) -> list[int]:
    """The thread ids of process `pid` (its own id is its main thread's); none once it is gone."""
    try:
        return sorted(int(task.name) for task in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []


def blocked_signals(pid: int, tid: int) -> set[signal.Signals] | None:
    """The signals thread `tid` of process `pid` blocks (SigBlk of /proc/PID/task/TID/status); None once it ended."""
    try:
        status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    except OSError:
        return None
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16)
    return {sig for sig in signal.Signals if mask >> (sig - 1) & 1}


def work_cpu_s(pid: int) -> float:
    """Processor time (s) used so far by process `pid`'s threads other than its main one: the work that
    `cli.interrupts.run_stoppable` runs in a thread of its own, started once its signal handlers are set."""
    fields = [_fields(pid, task) for task in threads(pid) if task != pid]
    return sum(int(f[11]) + int(f[12]) for f in fields if f) / os.sysconf("SC_CLK_TCK")


def wait_for_state(pid: int, holds: Callable[[int], bool], what: str, timeout: float = 120.0) -> None:
    """Poll until `holds(pid)`, for a state of process `pid` that no output announces (not a fixed sleep, which a
    loaded machine outlasts); fails if the process ends first, or after `timeout` s (a guard against a hang)."""
    end = time.monotonic() + timeout
    while not holds(pid):
        assert _fields(pid)[:1] not in ([], ["Z"]), f"process {pid} ended before {what}"
        assert time.monotonic() < end, f"no {what} within {timeout:.0f} s"
        time.sleep(0.01)


def wait_working(pid: int, cpu_s: float = 0.2, timeout: float = 120.0) -> None:
    """Wait until the work thread of process `pid` (a `kalah` command that searches or builds) has run `cpu_s` more
    seconds of processor time: its signal handlers are set and the work is under way."""
    done = work_cpu_s(pid) + cpu_s
    wait_for_state(pid, lambda p: work_cpu_s(p) >= done, f"{cpu_s} s of work", timeout)


def first_line(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The process's first line of standard output; fails (the caller's `started` kills it) if none comes in time."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output within {timeout:.0f} s"
    return proc.stdout.readline()


@contextlib.contextmanager
def kalah_serve(db: Path, *args: str) -> Iterator[str]:
    """`kalah serve` on a free port over `db` (argon2id's smallest cost unless `args` give one): its URL; stopped
    with SIGTERM (a graceful stop), killed if need be."""
    cost = [] if "--password-cost" in args else ["--password-cost", CHEAP_PASSWORDS]
    with started([*KALAH, "serve", "--port", "0", "--db", str(db), "--log-level", "error", *cost, *args],
                 stdout=subprocess.PIPE, text=True) as proc:
        line = first_line(proc)
        assert " on ws://" in line or " on wss://" in line, line
        yield line.split(" on ")[1].split()[0]
        proc.terminate()
        proc.wait(timeout=30)

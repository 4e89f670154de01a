"""A lock that makes one process the only user of a file: held on a file beside it, which holds the process id.

The lock is the kernel's record lock (`lockf`), so it goes when the process ends, even by SIGKILL, and it never
touches the locks SQLite takes on a database itself. Used by a book build (one builder per book) and by a server
on a SQLite file (one server per file).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class LockHeldError(Exception):
    """Another process holds the lock."""

    def __init__(self, holder: str) -> None:
        super().__init__(f"held by process {holder}")
        self.holder = holder
        """The process id the lock file holds ("?" if it holds none)."""


def hold_alone(lock: Path) -> int:
    """Take the lock on `lock` (made if missing) and write this process's id in it; the open descriptor that holds
    it (closing it lets the lock go). `LockHeldError` naming the holder if another process has it."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise LockHeldError(holder) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def holder(lock: Path) -> str | None:
    """The process id in `lock` when another process holds its lock ("?" if it wrote none), None when no process
    does. It takes and drops a shared lock to find out, and a process's locks on a file all go when it closes any
    descriptor of it: never call this from the process that holds the lock."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return os.read(fd, 32).decode(errors="replace").strip() or "?"
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

"""How far a book build is: a small JSON file beside the book, written as the build goes, read by `kalah book status`.

A build writes it at most once a second while it walks, at once after each position it adds to the
book (when the book is saved), and when it ends: `state` is `running`, then `interrupted` (Ctrl-C,
SIGTERM), `finished` (the walk ended, not complete: some answers were left at `--depth`, or `--keep`)
or `complete`. A build killed by SIGKILL leaves `running` behind; whether its process still holds the
book's lock tells the two apart (`running`).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bots.file_lock import holder
from protocol.variant import Variant

WRITE_EVERY_S = 1.0
"""Seconds between two writes of the status while the build walks (an added position is written at once)."""


@dataclass
class BuildStatus:
    """What a build of one start has done so far (see the module's docstring)."""

    variant: str
    state: str
    """`running`, `interrupted`, `finished` or `complete`."""
    pid: int
    positions: int
    """Positions in the book."""
    added: int
    """Positions proved and added by this run of the build."""
    left_to_board: int
    """Positions this run found easy (proved within the node limit: the bot proves them at the board)."""
    queued: int
    """Positions waiting in the breadth-first walk."""
    turn: int
    """The breadth-first walk's turn (from the start) of the position it looked at last."""
    databases: int
    node_limit: int
    updated: float
    """When it was written (seconds since the epoch)."""

    def write(self, path: Path) -> None:
        """Write it to `path` through a temporary file renamed into place."""
        self.updated = time.time()
        tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
        try:
            tmp.write_text(json.dumps(asdict(self)) + "\n")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def read(cls, path: Path) -> BuildStatus | None:
        """The status written at `path`; None if there is none (or it does not parse)."""
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            return None


def status_path(book_path: Path, variant: Variant) -> Path:
    """Where the build of `variant`'s start into the book at `book_path` writes its status."""
    start = re.sub(r"[^a-z0-9]+", "-", variant.text().lower()).strip("-")
    return book_path.with_name(f"{book_path.name.removesuffix('.txt')}.{start}.status.json")


def lock_path(book_path: Path) -> Path:
    """The file whose lock a build of the book at `book_path` holds while it runs."""
    return book_path.with_name(book_path.name.removesuffix(".txt") + ".lock")


def builder(book_path: Path) -> str | None:
    """The process id of the build running into the book at `book_path`, None when none is (never call it from the
    process that builds: see `file_lock.holder`)."""
    lock = lock_path(book_path)
    return holder(lock) if lock.is_file() else None

"""What the client runs of the server's code in its own process: the one place it reaches the server.

`kalah play` without a URL starts an embedded server, and an offline replay (`kalah replay`
on a database file) answers its `analyse` questions with the server's own analyst, the same
code that answers them over the wire, so the two give the same values. The client otherwise
talks to the server only over the wire (see tests/test_layers.py); the server (and, through its
analyst, the bots' solver) is imported only when one of these is started, so the rest of the
client runs without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from protocol.messages import Analyse, Analysis


class EmbeddedServer(Protocol):
    """What the client needs of a running server: where it listens, and how to stop it."""

    @property
    def url(self) -> str:
        """The `ws://host:port` address."""

    async def close(self) -> None:
        """Stop serving."""


def default_db_path() -> Path:
    """The per-user SQLite file the embedded server uses by default."""
    from server.storage.schema import default_db_path as server_default

    return server_default()


def store_of(db_path: Path | None = None) -> str | None:
    """The identity of a database file on this machine (default: the per-user one), read without changing it; None
    when it has none (no such file, or one that no server of this version has opened yet)."""
    from server.storage.sqlite import store_id_of

    return store_id_of(db_path if db_path is not None else default_db_path())


async def start_embedded(db_path: Path | None = None) -> EmbeddedServer:
    """Start a server on loopback with a free port, on `db_path` (default: the per-user file)."""
    from server.app import start_server  # type: ignore[import-not-found,unused-ignore]

    path = db_path if db_path is not None else default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    server: EmbeddedServer = await start_server(path, host="127.0.0.1", port=0)
    return server


class LocalAnalyst(Protocol):
    """What an offline replay needs of the server's analyst: answers to `analyse`, one at a time."""

    async def aanalyse(self, msg: Analyse) -> Analysis | None:
        """The solver's value of a position within the message's budget; raises `KalahError` if refused."""

    def close(self) -> None:
        """Stop the analysis thread."""


def start_local_analyst() -> LocalAnalyst:
    """The server's analyst in this process (the search runs in its own thread, one position at a time)."""
    from server.analysis import Analyst

    analyst: LocalAnalyst = Analyst()
    return analyst

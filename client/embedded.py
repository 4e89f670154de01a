"""The embedded server of `kalah play` without a URL: the one place the client starts a server.

The client otherwise talks to the server only over the wire (see tests/test_layers.py); the
server is imported only when one is started, so the rest of the client runs without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


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


async def start_embedded(db_path: Path | None = None) -> EmbeddedServer:
    """Start a server on loopback with a free port, on `db_path` (default: the per-user file)."""
    from server.app import start_server  # type: ignore[import-not-found,unused-ignore]

    path = db_path if db_path is not None else default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    server: EmbeddedServer = await start_server(path, host="127.0.0.1", port=0)
    return server

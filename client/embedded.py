"""The embedded server of `kalah play` without a URL: the one place the client starts a server.

The client otherwise talks to the server only over the wire (see tests/test_layers.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from client.screens.replay import StoredGame, verdict_text
from protocol import Variant


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


def _stored(game: Any) -> StoredGame:
    """The client's `StoredGame` from the server's stored-game row."""
    verdict = verdict_text(game.status, game.winner, game.result, game.reason)
    return StoredGame(game.match_id, Variant.parse(game.variant), tuple(game.record.split()), game.south,
                      game.north, verdict, game.result)


def load_stored(db_path: Path | None, match_id: str) -> StoredGame | None:
    """One stored game from the database file (default: the per-user file), or None."""
    from server.storage.games import fetch_game

    game = fetch_game(db_path if db_path is not None else default_db_path(), match_id)
    return None if game is None else _stored(game)


def list_stored(db_path: Path | None, limit: int = 200) -> list[StoredGame]:
    """The newest stored games of the database file, finished or not."""
    from server.storage.games import list_games

    return [_stored(g) for g in list_games(db_path if db_path is not None else default_db_path(),
                                           limit=limit, status=None)]

"""The arena's SQLite storage: schema, the group-committing writer, and stored-game reads."""

from server.storage.games import (
    Quarantined,
    StoredGame,
    afetch_game,
    alist_games,
    fetch_game,
    list_games,
    list_quarantined,
)
from server.storage.schema import default_db_path
from server.storage.writer import ConflictError, Op, Storage, StoredMatch, StoredPlayer

__all__ = ["ConflictError", "Op", "Quarantined", "Storage", "StoredGame", "StoredMatch", "StoredPlayer",
           "afetch_game", "alist_games", "default_db_path", "fetch_game", "list_games", "list_quarantined"]

"""The arena's storage: SQLite or PostgreSQL behind one interface (group-committing writer, migrations, reads)."""

from protocol.errors import ConflictError
from server.storage.errors import StorageError
from server.storage.games import (
    GameReads,
    Quarantined,
    StoredGame,
    fetch_game,
    list_games,
    list_quarantined,
)
from server.storage.ops import Op, OpKind
from server.storage.schema import SchemaError, default_db_path
from server.storage.sources import (
    describe,
    is_database_failure,
    is_postgres,
    open_storage,
    read_offline,
    sqlite_path,
)
from server.storage.writer import Storage, StoredMatch, StoredPlayer

__all__ = ["ConflictError", "GameReads", "Op", "OpKind", "Quarantined", "SchemaError", "Storage", "StorageError",
           "StoredGame", "StoredMatch", "StoredPlayer", "default_db_path", "describe", "fetch_game",
           "is_database_failure", "is_postgres", "list_games", "list_quarantined", "open_storage", "read_offline",
           "sqlite_path"]

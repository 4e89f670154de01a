"""What the migrations of both dialects share: a migration's shape, the steps run in Python rather than as SQL,
and the indexes both create alike (`server.storage.migrations_sqlite`, `server.storage.migrations_postgres`)."""

from __future__ import annotations

from protocol.names import name_key

Migration = tuple[int, tuple[str, ...]]
"""A schema version and its statements, in order."""

FILL_NAME_KEYS = "-- fill players.name_key"
"""A migration step run in Python, not as SQL: give each stored player its name's canonical form."""
PLAYER_NAMES = "SELECT id, name FROM players ORDER BY created_at, id"
"""Every player's id and name, oldest first (the first to hold a name keeps it)."""

MATCHES_BY_CREATION = "CREATE INDEX IF NOT EXISTS matches_by_creation ON matches(created_at)"
"""Pages of stored games of every status, newest first, read in order instead of sorting every match."""
MATCHES_BY_SEAT = (
    "CREATE INDEX IF NOT EXISTS matches_by_seat0 ON matches(seat0)",
    "CREATE INDEX IF NOT EXISTS matches_by_seat1 ON matches(seat1)",
)
"""A player's matches found from its seats (whether it played here, its open and live seats) instead of reading
every match."""
PLAYERS_BY_CREATION = "CREATE INDEX IF NOT EXISTS players_by_creation ON players(created_at, id)"
"""The players made last, read at start-up without reading (or sorting) every stored player."""


def name_keys(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(key, id) to store for each player row (id, name), oldest first: a name's first holder gets its canonical
    form; a later holder of the same form (stored before names were unique in the schema) gets none."""
    seen: set[str] = set()
    keys = []
    for player_id, name in rows:
        key = name_key(name)
        if key not in seen:
            seen.add(key)
            keys.append((key, player_id))
    return keys

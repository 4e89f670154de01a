"""Stored games for the command line: from a database file or a server (`games`/`game` requests).

Either way they come back as the client's `StoredGame` (`from_row` or `from_info`), the one
shape `kalah games`, `kalah export` and `kalah replay` read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from client.stored_game import StoredGame
from protocol.messages import (
    ErrorMessage,
    FetchGame,
    ListGames,
    Message,
    MessageError,
    decode_server,
    encode,
)
from server.storage import StorageError, default_db_path, is_postgres, read_offline, sqlite_path


class SourceError(Exception):
    """The games could not be read from the given database or server."""


def _ask(url: str, request: Message) -> Any:
    """Send one public read request to a server and return its answer (an error raises)."""
    try:
        with connect(url, open_timeout=10, close_timeout=2) as ws:
            ws.send(encode(request))
            answer = decode_server(ws.recv(timeout=30))
    except (OSError, TimeoutError, WebSocketException, MessageError) as exc:
        raise SourceError(f"{url}: {exc}") from None
    if isinstance(answer, ErrorMessage):
        if answer.code == "unknown_match":
            return None
        raise SourceError(f"{url}: {answer.code}: {answer.message}")
    return answer


def game_to_dict(game: StoredGame) -> dict[str, Any]:
    """A stored game as a JSON-ready dict: variant and record as text, dates in ISO 8601."""
    return {
        "match_id": game.match_id, "variant": game.variant.text(), "south": game.south, "north": game.north,
        "status": game.status, "record": " ".join(game.record), "ply": game.ply, "result": game.result,
        "winner": game.winner, "reason": game.reason,
        "created_at": None if game.created_at is None else game.created_at.isoformat(),
        "finished_at": None if game.finished_at is None else game.finished_at.isoformat(),
    }


T = TypeVar("T")


def _read(convert: Callable[[T], StoredGame], raw: T) -> StoredGame:
    """One stored game in the client's shape; one this version cannot read (its variant, say) is an error."""
    try:
        return convert(raw)
    except ValueError as exc:
        raise SourceError(f"unreadable stored game: {exc}") from None


def _database(source: str | None) -> str | Path:
    """The database a source names: a postgresql:// URL, or a file (None: the per-user file)."""
    if source and is_postgres(source):
        return source
    return sqlite_path(source) if source else default_db_path()


GameStatus = Literal["open", "live", "finished", "cancelled"]


def query_games(source: str | None, limit: int, player: str | None = None, variant: str | None = None,
                status: GameStatus | None = "finished") -> list[StoredGame]:
    """Stored games from a database (a path, None: the default file, or a postgresql:// URL) or a `ws://` server."""
    if source is not None and source.startswith(("ws://", "wss://")):
        found: list[StoredGame] = []
        while len(found) < limit:  # the server answers at most 200 a request
            page = min(200, limit - len(found))
            answer = _ask(source, ListGames(limit=page, offset=len(found), status=status, player=player,
                                            variant=variant))
            found += [_read(StoredGame.from_info, g) for g in answer.games]
            if len(answer.games) < page:
                break
        return found
    try:
        rows = read_offline(_database(source), lambda db: db.list_games(limit, 0, status, player, variant))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None
    return [_read(StoredGame.from_row, row) for row in rows]


def get_game(source: str | None, match_id: str) -> StoredGame | None:
    """One stored game from a database path (None: the default file) or a server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        answer = _ask(source, FetchGame(match_id=match_id))
        return None if answer is None else _read(StoredGame.from_info, answer.game)
    try:
        row = read_offline(_database(source), lambda db: db.fetch_game(match_id))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None
    return None if row is None else _read(StoredGame.from_row, row)


def game_text(game: StoredGame) -> str:
    """The text export: `#` header lines (variant, players, result, date) then the record."""
    result = "*" if game.result is None else f"{game.result:+d}"
    lines = [
        f"# match: {game.match_id}",
        f"# variant: {game.variant.text()}",
        f"# south: {game.south or '-'}",
        f"# north: {game.north or '-'}",
        f"# result: {result}" + (f" ({game.reason})" if game.reason else ""),
        f"# winner: {game.winner or '-'}",
        f"# date: {'-' if game.created_at is None else game.created_at.isoformat()}",
        " ".join(game.record),
    ]
    return "\n".join(lines) + "\n"

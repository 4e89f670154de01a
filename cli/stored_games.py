"""Stored games for the command line: from a database file or a server (`games`/`game` requests)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from protocol.messages import (
    ErrorMessage,
    FetchGame,
    GameInfo,
    ListGames,
    Message,
    MessageError,
    decode_server,
    encode,
)
from server.storage import StoredGame, default_db_path, fetch_game, list_games


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


def _from_info(info: GameInfo) -> StoredGame:
    """A stored game from its wire form."""
    return StoredGame(info.match_id, info.variant, info.south, info.north, info.status, " ".join(info.record),
                      len(info.record), info.result, info.winner, info.reason,
                      datetime.fromisoformat(info.created_at),
                      datetime.fromisoformat(info.finished_at) if info.finished_at else None)


def game_to_dict(game: StoredGame) -> dict[str, Any]:
    """A stored game as a JSON-ready dict (dates in ISO 8601)."""
    out = asdict(game)
    for key in ("created_at", "finished_at"):
        value = out[key]
        out[key] = value.isoformat() if isinstance(value, datetime) else None
    return out


GameStatus = Literal["open", "live", "finished", "cancelled"]


def query_games(source: str | None, limit: int, player: str | None = None, variant: str | None = None,
                status: GameStatus | None = "finished") -> list[StoredGame]:
    """Stored games from a database path (None: the default file) or a `ws://` server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        found: list[StoredGame] = []
        while len(found) < limit:  # the server answers at most 200 a request
            page = min(200, limit - len(found))
            answer = _ask(source, ListGames(limit=page, offset=len(found), status=status, player=player,
                                            variant=variant))
            found += [_from_info(g) for g in answer.games]
            if len(answer.games) < page:
                break
        return found
    path = Path(source).expanduser() if source else default_db_path()
    try:
        return list_games(path, limit=limit, status=status, player=player, variant=variant)
    except FileNotFoundError as exc:
        raise SourceError(str(exc)) from None


def get_game(source: str | None, match_id: str) -> StoredGame | None:
    """One stored game from a database path (None: the default file) or a server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        answer = _ask(source, FetchGame(match_id=match_id))
        return None if answer is None else _from_info(answer.game)
    path = Path(source).expanduser() if source else default_db_path()
    try:
        return fetch_game(path, match_id)
    except FileNotFoundError as exc:
        raise SourceError(str(exc)) from None


def game_text(game: StoredGame) -> str:
    """The text export: `#` header lines (variant, players, result, date) then the record."""
    result = "*" if game.result is None else f"{game.result:+d}"
    lines = [
        f"# match: {game.match_id}",
        f"# variant: {game.variant}",
        f"# south: {game.south or '-'}",
        f"# north: {game.north or '-'}",
        f"# result: {result}" + (f" ({game.reason})" if game.reason else ""),
        f"# winner: {game.winner or '-'}",
        f"# date: {game.created_at.isoformat()}",
        game.record,
    ]
    return "\n".join(lines) + "\n"

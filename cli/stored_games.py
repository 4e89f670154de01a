"""Stored games for the command line: from a database file or a server's HTTP endpoint, as text."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from server.storage import StoredGame, default_db_path, fetch_game, list_games


class SourceError(Exception):
    """The games could not be read from the given database or server."""


def _http_base(url: str) -> str:
    """The plain-HTTP base address of a `ws://host:port` server URL."""
    parts = urllib.parse.urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise SourceError(f"not a server address: {url!r} (expected ws://host:port)")
    return f"{scheme}://{parts.netloc}"


def _get_json(url: str) -> Any:
    """GET a JSON document, mapping failures to `SourceError`."""
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise SourceError(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SourceError(f"{url}: {exc}") from None


def game_to_dict(game: StoredGame) -> dict[str, Any]:
    """A stored game as a JSON-ready dict (dates in ISO 8601)."""
    out = asdict(game)
    for key in ("created_at", "finished_at"):
        value = out[key]
        out[key] = value.isoformat() if isinstance(value, datetime) else None
    return out


def game_from_dict(data: dict[str, Any]) -> StoredGame:
    """The inverse of `game_to_dict`."""
    values = dict(data)
    for key in ("created_at", "finished_at"):
        values[key] = datetime.fromisoformat(values[key]) if values.get(key) else None
    return StoredGame(**values)


def query_games(source: str | None, limit: int, player: str | None = None, variant: str | None = None,
                status: str | None = "finished") -> list[StoredGame]:
    """Stored games from a database path (None: the default file) or a `ws://` server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        params = {k: v for k, v in {"limit": str(limit), "player": player, "variant": variant,
                                    "status": status or "all"}.items() if v is not None}
        data = _get_json(f"{_http_base(source)}/games?{urllib.parse.urlencode(params)}")
        return [game_from_dict(d) for d in (data or [])]
    path = Path(source).expanduser() if source else default_db_path()
    try:
        return list_games(path, limit=limit, status=status, player=player, variant=variant)
    except FileNotFoundError as exc:
        raise SourceError(str(exc)) from None


def get_game(source: str | None, match_id: str) -> StoredGame | None:
    """One stored game from a database path (None: the default file) or a server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        data = _get_json(f"{_http_base(source)}/games/{urllib.parse.quote(match_id)}")
        return None if data is None else game_from_dict(data)
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

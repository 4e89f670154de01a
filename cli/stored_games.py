"""Stored games for the command line: from a database file or a server (`games`/`game` requests).

Either way they come back as the client's `StoredGame` (`from_row` or `from_info`), the one
shape `kalah games`, `kalah export` and `kalah replay` read. A server's standings (`standings`)
are read the same way, for `kalah ladder`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from client.stored_game import StoredGame
from server.storage import StorageError, default_db_path, is_postgres, read_offline, sqlite_path

if TYPE_CHECKING:  # the wire's models and websockets are loaded only to ask a server (a database needs neither)
    from protocol.event_messages import EventState
    from protocol.messages import Message, Standings


class SourceError(Exception):
    """The games could not be read from the given database or server."""


READ_RETRY_S = 1.0
"""How long to wait when a server says its public reads are coming too fast (`rate_limited`)."""
READ_RETRIES = 60
"""How many times in a row to wait before giving up."""


def _ask(url: str, requests: Callable[[list[Any]], Message | None]) -> list[Any]:
    """Public read requests on one connection: `requests(answers so far)` says the next (None: done).

    A `rate_limited` refusal is waited out and asked again; `unknown_match` answers None; any
    other refusal or a failed connection raises `SourceError`.
    """
    from websockets.exceptions import WebSocketException
    from websockets.sync.client import connect

    from protocol.messages import ErrorMessage, MessageError, decode_server, encode

    answers: list[Any] = []
    try:
        with connect(url, open_timeout=10, close_timeout=2) as ws:
            waited = 0
            while (request := requests(answers)) is not None:
                ws.send(encode(request))
                answer = decode_server(ws.recv(timeout=30))
                if isinstance(answer, ErrorMessage) and answer.code == "rate_limited" and waited < READ_RETRIES:
                    waited += 1
                    time.sleep(READ_RETRY_S)
                    continue
                waited = 0
                if isinstance(answer, ErrorMessage) and answer.code != "unknown_match":
                    raise SourceError(f"{url}: {answer.code}: {answer.message}")
                answers.append(None if isinstance(answer, ErrorMessage) else answer)
    except (OSError, TimeoutError, WebSocketException, MessageError) as exc:
        raise SourceError(f"cannot read from {url}: {failure(exc)}") from None
    return answers


def failure(exc: BaseException) -> str:
    """Why a connection failed, in words (`connection refused`, not `[Errno 111] Connect call failed ...`)."""
    if isinstance(exc, OSError):
        text = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else exc.strerror
        if text:
            return text[0].lower() + text[1:]
    return str(exc) or type(exc).__name__


def game_to_dict(game: StoredGame) -> dict[str, Any]:
    """A stored game as a JSON-ready dict: variant and record as text, dates in ISO 8601."""
    return {
        "match_id": game.match_id, "variant": game.variant.text(), "south": game.south, "north": game.north,
        "status": game.status, "record": " ".join(game.record), "ply": game.ply, "result": game.result,
        "winner": game.winner, "reason": game.reason,
        "created_at": None if game.created_at is None else game.created_at.isoformat(),
        "finished_at": None if game.finished_at is None else game.finished_at.isoformat(),
        "detail": game.detail,
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


def database_of(source: str | None) -> str | Path:
    """The database a `--db` names: a postgresql:// URL, or a file (None: the per-user file)."""
    return _database(source)


GameStatus = Literal["open", "live", "finished", "cancelled"]


def query_games(source: str | None, limit: int, player: str | None = None, variant: str | None = None,
                status: GameStatus | None = "finished") -> list[StoredGame]:
    """Stored games from a database (a path, None: the default file, or a postgresql:// URL) or a `ws://` server."""
    if source is not None and source.startswith(("ws://", "wss://")):
        from protocol.messages import ListGames

        def next_page(pages: list[Any]) -> Message | None:
            """The next page of at most 200 (the server's bound), until a short one or `limit`."""
            found = sum(len(page.games) for page in pages)
            if found >= limit or (pages and len(pages[-1].games) < 200):
                return None
            return ListGames(limit=min(200, limit - found), offset=found, status=status, player=player,
                             variant=variant)

        return [_read(StoredGame.from_info, g) for page in _ask(source, next_page) for g in page.games]
    try:
        rows = read_offline(_database(source), lambda db: db.list_games(limit, 0, status, player, variant))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None
    return [_read(StoredGame.from_row, row) for row in rows]


def get_game(source: str | None, match_id: str) -> StoredGame | None:
    """One stored game from a database path (None: the default file) or a server URL."""
    if source is not None and source.startswith(("ws://", "wss://")):
        from protocol.messages import FetchGame
        from protocol.wire_base import MATCH_ID_RULE, is_match_id

        if not is_match_id(match_id):  # a request cannot carry it: only a database written by hand holds one
            raise SourceError(f"{match_id!r} is not a match id ({MATCH_ID_RULE}): a server is asked only for match "
                              "ids (read a database holding such a game with --db)")
        answer = _ask(source, lambda got: None if got else FetchGame(match_id=match_id))[0]
        return None if answer is None else _read(StoredGame.from_info, answer.game)
    try:
        row = read_offline(_database(source), lambda db: db.fetch_game(match_id))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None
    return None if row is None else _read(StoredGame.from_row, row)


def stored_review(source: str | None, match_id: str) -> str | None:
    """The review stored for a match in a database (a path, None: the default file, or a postgresql:// URL)."""
    try:
        return read_offline(_database(source), lambda db: db.fetch_review(match_id))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None


def explore_rows(source: str | None, key: int, player_key: str | None) -> list[tuple[object, ...]]:
    """The opening explorer's rows of a position in a database (a path, None: the default file, or a postgresql://
    URL), of every game or of one player's (by its name's canonical form)."""
    try:
        return read_offline(_database(source), lambda db: db.explored(key, player_key))
    except (FileNotFoundError, StorageError) as exc:
        raise SourceError(str(exc)) from None


def event_games(url: str, event_id: str) -> list[StoredGame]:
    """Every finished game of an event on a server, in the order they were paired: its pairings read in pages (an
    `event_state` alone holds only the latest 200), then each game, all on one connection."""
    from protocol.event_messages import FetchEvent
    from protocol.messages import FetchGame

    pages: list[EventState] = []
    match_ids: list[str] | None = None

    def next_request(answers: list[Any]) -> Message | None:
        """The next page of pairings until all are read, then the next finished game."""
        nonlocal match_ids
        if match_ids is None:
            if len(answers) > len(pages):
                pages.append(answers[-1])
            if not pages or _more_pairings(pages):
                return FetchEvent(event_id=event_id, pairings_from=sum(len(page.pairings) for page in pages))
            match_ids = [p.match_id for page in pages for p in page.pairings
                         if p.match_id is not None and p.result not in ("*", "bye")]
        fetched = len(answers) - len(pages)
        return FetchGame(match_id=match_ids[fetched]) if fetched < len(match_ids) else None

    answers = _ask(url, next_request)
    return [_read(StoredGame.from_info, answer.game) for answer in answers[len(pages):] if answer is not None]


def _more_pairings(pages: list[EventState]) -> bool:
    """Whether an event has pairings past the pages read so far (the last page was not empty)."""
    read = sum(len(page.pairings) for page in pages)
    return bool(pages[-1].pairings) and read < pages[-1].pairings_total


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


def fetch_standings(url: str) -> Standings:
    """A server's standings of rated games: its stored ratings, results and head-to-head (best 200)."""
    from protocol.messages import ListStandings

    answer: Standings = _ask(url, lambda got: None if got else ListStandings(limit=200))[0]
    return answer

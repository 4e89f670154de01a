"""What the client runs of the server's code in its own process: the one place it reaches the server.

`kalah play` without a URL starts an embedded server, and an offline replay (`kalah replay`
on a database file) answers its `analyse` questions with the server's own analyst, the same
code that answers them over the wire, so the two give the same values; its `review` is the one
stored in the database, else one made here through that analyst, as the server makes it. The client otherwise
talks to the server only over the wire (see tests/project/test_layers.py); the server (and, through its
analyst, the bots' solver) is imported only when one of these is started, so the rest of the
client runs without them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from pathlib import Path
from typing import Protocol

from protocol.messages import Analyse, Analysis
from protocol.review_messages import GameReview
from protocol.variant import Variant


class LocalServerError(Exception):
    """The embedded server cannot start, and why, ending with what to do instead."""


class EmbeddedServer(Protocol):
    """What the client needs of a running server: where it listens, and how to stop it."""

    @property
    def url(self) -> str:
        """The `ws://host:port` address."""

    @property
    def port(self) -> int:
        """The port it listens on."""

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


PORT_SUFFIX = "-port"
"""The file beside a database that keeps the port its last embedded server listened on."""


def port_file(db_path: Path) -> Path:
    """Where the port of the last embedded server on `db_path` is kept."""
    return db_path.with_name(db_path.name + PORT_SUFFIX)


def last_port(db_path: Path) -> int | None:
    """The port the last embedded server on `db_path` listened on; None if none was kept (or the file is not one)."""
    try:
        text = port_file(db_path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None


def port_is_free(port: int) -> bool:
    """Whether a server could listen on `port` of loopback now."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: a closed one's port is free
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def start_embedded(db_path: Path | None = None) -> tuple[EmbeddedServer, str | None]:
    """Start a server on loopback on `db_path` (default: the per-user file), on the port the last one on that file
    used when it is free (so a `kalah watch` of it reconnects), else on a free one; the server, and a line saying
    that the port moved (None if it did not). A failure the database explains (another server holds it, a newer
    schema, ...) raises `LocalServerError` in its words; any other is raised as it came (see `start_failure`)."""
    from server.storage import SchemaError, StorageError  # type: ignore[import-not-found,unused-ignore]

    path = db_path if db_path is not None else default_db_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalServerError(f"cannot make the folder {path.parent} for its database ({exc.strerror or exc}): "
                               "name another file with --db") from None
    last = last_port(path)
    try:
        server = await _listen(path, last)
    except (StorageError, SchemaError) as exc:  # their words end with what to do
        raise LocalServerError(str(exc)) from None
    with contextlib.suppress(OSError):  # not kept: the next one takes a free port, as this one did
        port_file(path).write_text(f"{server.port}\n")
    moved = None if last is None or server.port == last else (
        f"Port {last} of the last local server on this database is busy: this one is at {server.url}, so a "
        "`kalah watch` of the last one needs the new address.")
    return server, moved


async def _listen(path: Path, last: int | None) -> EmbeddedServer:
    """A server on `path` listening on loopback: on port `last` if it is free, else on any free one."""
    from server.assembly import start_server  # type: ignore[import-not-found,unused-ignore]

    if last is not None and port_is_free(last):
        try:
            server: EmbeddedServer = await start_server(path, host="127.0.0.1", port=last)
            return server
        except OSError as exc:  # taken between the look and the bind
            if exc.errno != errno.EADDRINUSE:
                raise
    server = await start_server(path, host="127.0.0.1", port=0)
    return server


WAYS_ON: dict[int | None, str] = {
    errno.EMFILE: "close other programs or raise the limit on open files (ulimit -n), then run it again",
    errno.ENFILE: "close other programs, then run it again",
    errno.ENOSPC: "free some disk space, or name a database file on another disk with --db",
    errno.EDQUOT: "free some disk space, or name a database file on another disk with --db",
    errno.ENOMEM: "close other programs, then run it again",
}
"""What to do about a system error that stopped the local server, by its errno."""

START_FAILED = "could not start the local server"
"""How every line about a local server that did not start begins (then why, and what to do)."""

UNFORESEEN_WAY_ON = "run it again (KALAH_DEBUG=1 shows where it fails), or play on a running server with --server"
"""What to do about any other failure of the local server."""


def start_failure(exc: Exception) -> str:
    """Why the local server did not start, in one line worded alike for every failure: a `LocalServerError`'s words
    (the reason and what to do), or for one that no check foresaw, the exception's kind and words and what to do."""
    if isinstance(exc, LocalServerError):
        return f"{START_FAILED}: {exc}"
    what = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    way_on = WAYS_ON.get(exc.errno, UNFORESEEN_WAY_ON) if isinstance(exc, OSError) else UNFORESEEN_WAY_ON
    return f"{START_FAILED} ({what}): {way_on}."


class LocalAnalyst(Protocol):
    """What an offline replay needs of the server's analyst: answers to `analyse`, one at a time."""

    async def aanalyse(self, msg: Analyse) -> Analysis | None:
        """The solver's value of a position within the message's budget; raises `KalahError` if refused."""

    def close(self) -> None:
        """Stop the analysis thread."""


def start_local_analyst() -> LocalAnalyst:
    """The server's analyst in this process (the search runs in its own thread, one position at a time)."""
    from server.front.analysis import Analyst

    analyst: LocalAnalyst = Analyst()
    return analyst


async def review_here(analyst: LocalAnalyst, db_path: Path | None, match_id: str, variant: Variant,
                      record: tuple[str, ...], names: tuple[str | None, str | None]) -> GameReview:
    """A stored game's review offline: the one stored in the database file (None: the per-user one), else one made
    here (not stored), each position valued by `analyst` as the server values them."""
    from bots.review import Valuation, assemble, needs_value, ply_budget_ms, replay
    from server.storage import default_db_path, read_offline

    try:
        stored = await asyncio.to_thread(read_offline, db_path or default_db_path(),
                                         lambda db: db.fetch_review(match_id))
    except FileNotFoundError:  # a game given by hand, with no database behind it
        stored = None
    if stored is not None:
        return GameReview.model_validate_json(stored)
    game = replay(variant, record)
    budget = ply_budget_ms(game)
    values = {}
    for index, position in enumerate(game.positions):
        if needs_value(position):
            answer = await analyst.aanalyse(Analyse(variant=variant.text(), position=position.fen(), budget_ms=budget))
            if answer is None:
                raise RuntimeError("the local solver gave no answer")
            values[index] = Valuation(answer.value, tuple(map(str, answer.best)), answer.exact, answer.depth)
    return assemble(match_id, game, names, values, budget)

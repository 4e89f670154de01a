"""Which database a `--db` names, and opening it: a path or `sqlite:PATH` is SQLite, `postgresql://...` PostgreSQL.

The opener sits above both backends and imports each only when it opens one (asyncpg is optional, and the offline
tools need neither).

`open_storage` is what the server opens (writer, migrations); `read_offline` is what the
command line's offline tools use to read stored games from either backend without a server.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from server.storage.errors import StorageError
from server.storage.games import GameReads, SQLiteReads
from server.storage.writer import Storage

T = TypeVar("T")

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_database_failure(exc: BaseException) -> bool:
    """Whether an exception is the database's failing (SQLite's, PostgreSQL's driver's, the connection to it)."""
    return isinstance(exc, (OSError, sqlite3.Error)) or type(exc).__module__.startswith("asyncpg")


def is_postgres(source: str | Path) -> bool:
    """Whether `source` is a PostgreSQL URL (`postgresql://` or `postgres://`)."""
    return isinstance(source, str) and source.startswith(POSTGRES_SCHEMES)


def sqlite_path(source: str | Path) -> Path:
    """The file a SQLite source names: a path, `sqlite:PATH` or `sqlite:///ABSOLUTE`; `~` expanded."""
    text = str(source)
    if isinstance(source, str) and text.startswith("sqlite:"):
        text = text.removeprefix("sqlite:")
        if text.startswith("//"):
            text = text[2:]
    return Path(text).expanduser()


def describe(source: str | Path) -> str:
    """The source as it may be printed and logged: a URL's password is replaced by `***`."""
    if not is_postgres(source):
        return str(sqlite_path(source))
    parts = urlsplit(str(source))
    if parts.password is None:
        return str(source)
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _from_asyncpg(exc: BaseException) -> bool:
    """Whether `exc` is one of asyncpg's errors (the server refused, or the connection failed)."""
    return type(exc).__module__.startswith("asyncpg")


def _asyncpg_missing() -> StorageError:
    """The error for a PostgreSQL URL when asyncpg is not installed."""
    return StorageError("a PostgreSQL database needs asyncpg: pip install 'kalah-arena[postgres]'")


async def open_storage(source: str | Path, synchronous: str = "FULL", shared: bool = False) -> Storage:
    """Open the server's storage at a path or URL: migrated to the latest schema, its writer started.

    `shared`: this server is one node of a cluster on a PostgreSQL database (SQLite is refused).
    """
    if is_postgres(source):
        try:
            from server.storage.postgres import DatabaseBusyError, PostgresStorage
        except ImportError:
            raise _asyncpg_missing() from None
        try:
            return await PostgresStorage.connect(str(source), describe(source), shared=shared)
        except (OSError, DatabaseBusyError) as exc:  # nothing listening; another server holds the database
            raise StorageError(f"{describe(source)}: {exc}") from None
        except Exception as exc:
            if _from_asyncpg(exc):  # refused, bad password, no such database
                raise StorageError(f"{describe(source)}: {exc}") from None
            raise
    if shared:
        raise StorageError(f"{describe(source)}: several nodes share a PostgreSQL database, not a SQLite file "
                           "(--db postgresql://...)")
    from server.storage.soundness import is_read_only, read_only_error
    from server.storage.sqlite import SQLiteStorage

    path = sqlite_path(source)
    try:
        return await SQLiteStorage.connect(path, synchronous)
    except (OSError, sqlite3.Error) as exc:  # a folder, a file of something else, no way to make the folder
        if is_read_only(exc):
            raise read_only_error(path, exc) from None
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StorageError(f"cannot use {path} as the arena database ({reason}): name another file with --db") \
            from None


@asynccontextmanager
async def open_reads(source: str | Path) -> AsyncIterator[GameReads]:
    """Stored-game reads of an existing database (never created, migrated or written), closed after."""
    if not is_postgres(source):
        yield SQLiteReads(sqlite_path(source))
        return
    try:
        from server.storage.postgres import PostgresReads
    except ImportError:
        raise _asyncpg_missing() from None
    reads = await PostgresReads.connect_reads(str(source), describe(source))
    try:
        yield reads
    finally:
        await reads.aclose()


def read_offline(source: str | Path, read: Callable[[GameReads], Awaitable[T]]) -> T:
    """Run one read against the database at `source` from synchronous code (its own event loop and thread).

    A missing SQLite file raises `FileNotFoundError`; any other failure to reach or read the
    database raises `StorageError` naming it (without its password).
    """

    async def run() -> T:
        async with open_reads(source) as reads:
            return await read(reads)

    with ThreadPoolExecutor(1, thread_name_prefix="kalah-offline-read") as pool:
        try:
            return pool.submit(asyncio.run, run()).result()
        except (FileNotFoundError, StorageError):
            raise
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"{describe(source)}: {exc}") from None
        except Exception as exc:
            if _from_asyncpg(exc):  # refused, unknown database, no arena tables
                raise StorageError(f"{describe(source)}: {exc}") from None
            raise

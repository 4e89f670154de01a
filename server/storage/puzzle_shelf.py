"""The puzzles of a database for the command line (`kalah puzzle build`, `kalah puzzles --db`), beside any server
on it: opened and migrated (so the tables exist), read and added to, then closed."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from protocol.puzzle_messages import PuzzleInfo
from server.storage.errors import StorageError
from server.storage.games import numbered
from server.storage.puzzles import IDS, INSERT, LIST, LIST_OF_VARIANT, from_row
from server.storage.sources import describe, is_postgres, sqlite_path

T = TypeVar("T")


class PuzzleShelf:
    """The puzzles of one database for the command line, beside any server on it: opened, read and added to, then
    closed. SQLite through `sqlite3`, PostgreSQL through asyncpg.

    A writer (`kalah puzzle build`) migrates the database to this version's schema, as `kalah serve` would, so the
    tables exist (a missing SQLite file is made); a reader (`create=False`) changes nothing: a missing file is a
    `StorageError`, and a database from before puzzles were stored simply holds none."""

    def __init__(self, source: str | Path, create: bool = True) -> None:
        """Open the database at `source`, as a writer (`create`) or a reader."""
        self.create = create
        self.source = source
        self.where = describe(source)
        self._sqlite: sqlite3.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pg: Any = None
        self._thread: ThreadPoolExecutor | None = None
        try:
            if is_postgres(source):
                self._open_postgres(str(source), create)
            else:
                path = sqlite_path(source)
                if not create and not path.exists():
                    raise StorageError(f"no arena database at {path}: nothing was stored there yet (`kalah puzzle "
                                       "build --db` makes puzzles in it), or name another with --db")
                self._open_sqlite(path, create)
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise StorageError(f"{self.where}: {exc}") from None
        except Exception as exc:
            self.close()
            if type(exc).__module__.startswith("asyncpg"):
                raise StorageError(f"{self.where}: {exc}") from None
            raise

    def _open_sqlite(self, path: Path, create: bool) -> None:
        """Open a SQLite file: a writer's made if missing and migrated, a reader's read-only."""
        from server.storage.schema import migrate_sqlite

        if not create:
            self._sqlite = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self._sqlite = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        self._sqlite.execute("PRAGMA busy_timeout=30000")
        migrate_sqlite(self._sqlite)

    def _open_postgres(self, url: str, create: bool) -> None:
        """Connect to PostgreSQL on this shelf's own event loop (and, for a writer, migrate the schema)."""
        try:
            import asyncpg

            from server.storage.postgres import migrate
        except ImportError:
            raise StorageError("a PostgreSQL database needs asyncpg: pip install 'kalah-arena[postgres]'") from None
        self._loop = asyncio.new_event_loop()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="kalah-puzzle-shelf")
        self._pg = self._run(asyncpg.connect(url))
        if create:
            self._run(migrate(self._pg))

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on this shelf's own loop, in its own thread (so any caller may be in a loop of its own)."""
        assert self._loop is not None and self._thread is not None
        return self._thread.submit(self._loop.run_until_complete, work).result()

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """The rows of one read (`?` placeholders)."""
        if self._sqlite is not None:
            return [tuple(r) for r in self._sqlite.execute(sql, params).fetchall()]
        return [tuple(r) for r in self._run(self._pg.fetch(numbered(sql), *params))]

    def add(self, puzzles: Iterable[PuzzleInfo]) -> int:
        """Store puzzles not stored yet (one transaction); how many were new."""
        rows = [(p.id, p.variant, p.model_dump_json(), True, p.rating, p.rd, 0.06, time.time()) for p in puzzles]
        if not rows:
            return 0
        before = len(self.known())
        if self._sqlite is not None:
            self._sqlite.execute("BEGIN IMMEDIATE")
            try:
                self._sqlite.executemany(INSERT, rows)
                self._sqlite.execute("COMMIT")
            except BaseException:
                self._sqlite.execute("ROLLBACK")
                raise
        else:
                self._run(self._pg.executemany(numbered(INSERT), rows))
        return len(self.known()) - before

    def known(self) -> frozenset[str]:
        """The ids of every stored puzzle."""
        return frozenset(str(r[0]) for r in self.rows(IDS))

    def listing(self, variant: str | None, limit: int, offset: int = 0) -> list[PuzzleInfo]:
        """Proved puzzles by rating, easiest first (rows this version cannot read are left out; none in a database
        from before puzzles were stored)."""
        try:
            rows = self.rows(LIST_OF_VARIANT, True, variant, limit, offset) if variant else \
                self.rows(LIST, True, limit, offset)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # from before puzzles were stored
                return []
            raise
        except Exception as exc:
            if type(exc).__name__ == "UndefinedTableError":
                return []
            raise
        out = []
        for row in rows:
            try:
                out.append(from_row(row))
            except ValueError:
                continue
        return out

    def close(self) -> None:
        """Close the connection."""
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None
        if self._loop is not None:
            if self._pg is not None:
                self._run(self._pg.close())
                self._pg = None
            assert self._thread is not None
            self._thread.submit(self._loop.close).result()
            self._thread.shutdown()
            self._loop = None

    def __enter__(self) -> PuzzleShelf:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

"""What a `--db` names: SQLite paths and `sqlite:` forms, PostgreSQL URLs, printing them without a password,
and the errors of the offline reads."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server.storage import StorageError, describe, is_postgres, open_storage, read_offline, sqlite_path
from server.storage.sqlite import SQLiteStorage


def test_a_path_or_a_sqlite_form_is_sqlite_and_a_postgres_url_is_not() -> None:
    """Plain paths and `sqlite:` forms name SQLite files (with ~ expanded); both PostgreSQL schemes are URLs."""
    assert sqlite_path("sqlite:arena.db") == Path("arena.db")
    assert sqlite_path("sqlite:///srv/kalah/arena.db") == Path("/srv/kalah/arena.db")
    assert sqlite_path("~/arena.db") == Path.home() / "arena.db"
    assert sqlite_path(Path("x/y.sqlite3")) == Path("x/y.sqlite3")
    assert is_postgres("postgresql://u@h/db") and is_postgres("postgres://u@h/db")
    assert not is_postgres("sqlite:arena.db") and not is_postgres(Path("postgresql:"))


def test_a_url_is_described_without_its_password() -> None:
    """The password of a URL becomes `***` (user, host, port, database and options kept); a path prints as is."""
    assert describe("postgresql://kalah:s3cret@db.local:5433/arena?sslmode=require") == (
        "postgresql://kalah:***@db.local:5433/arena?sslmode=require")
    assert describe("postgresql://kalah@db.local/arena") == "postgresql://kalah@db.local/arena"
    assert describe("postgres://u:p@[::1]/a") == "postgres://u:***@[::1]/a"
    assert describe("sqlite:arena.db") == "arena.db"


async def test_a_path_opens_sqlite_storage(tmp_path: Path) -> None:
    """`open_storage` of a `sqlite:` path opens the SQLite backend on that file, named by its path."""
    storage = await open_storage(f"sqlite:{tmp_path}/a.sqlite3")
    try:
        assert isinstance(storage, SQLiteStorage) and storage.where == str(tmp_path / "a.sqlite3")
    finally:
        await storage.close()


def test_offline_reads_of_a_missing_file_say_so_and_create_nothing(tmp_path: Path) -> None:
    """Reading a SQLite file that is not there raises FileNotFoundError and leaves no file behind."""
    with pytest.raises(FileNotFoundError, match="no arena database"):
        read_offline(tmp_path / "none.sqlite3", lambda reads: reads.list_games())
    assert not (tmp_path / "none.sqlite3").exists()


def test_a_file_that_is_not_a_database_is_a_storage_error(tmp_path: Path) -> None:
    """A file that is not SQLite is reported as a StorageError naming it."""
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database\n" * 100)
    with pytest.raises(StorageError, match=r"junk\.sqlite3"):
        read_offline(junk, lambda reads: reads.list_quarantined())


async def test_postgres_without_asyncpg_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the PostgreSQL backend's driver, a postgresql:// URL asks for the `postgres` extra."""
    monkeypatch.setitem(sys.modules, "server.storage.postgres", None)
    with pytest.raises(StorageError, match=r"kalah-arena\[postgres\]"):
        await open_storage("postgresql://kalah@127.0.0.1/arena")
    with pytest.raises(StorageError, match=r"kalah-arena\[postgres\]"):
        read_offline("postgresql://kalah@127.0.0.1/arena", lambda reads: reads.list_games())

"""The storage's own failure: a database that could not be opened or read (below the backends that raise it)."""

from __future__ import annotations


class StorageError(Exception):
    """The database could not be opened or read (unreachable, refused, not an arena database)."""

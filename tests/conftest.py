"""Shared test helpers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import Position, Side, Variant
from server.app import RunningServer, start_server


def pos(variant: str | Variant, pits: list[int], to_move: str = "S", flags: str = "-") -> Position:
    """A position of `variant` from pits in bin order, e.g. pos('kalah(6,4)', [...])."""
    v = Variant.parse(variant) if isinstance(variant, str) else variant
    return Position.from_fen(v, f"{','.join(map(str, pits))} {to_move} 10 {flags}")


SOUTH, NORTH = Side.SOUTH, Side.NORTH


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A server on a free port with a fresh database."""
    running = await start_server(tmp_path / "arena.sqlite3")
    yield running
    await running.close()

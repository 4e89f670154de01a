"""The disk under SQLite fills up: changes are refused `unavailable` (nothing acknowledged is lost), reads are
served, play resumes once space returns, and the file passes SQLite's integrity check.

The database lives on a small tmpfs mounted for the test (root only; skipped with the reason otherwise).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from protocol import Position, Sow, Variant
from tests.conftest import Serve
from tests.helpers.wire import Client, Json, live_match, move_answer

DISK_BYTES = 16 << 20


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs at `tmp_path/disk`, unmounted at the end on every path."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def fill(path: Path) -> None:
    """Write `path` until the filesystem has no space left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (64 << 10, 512):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    stat = os.statvfs(path.parent)
    assert stat.f_bavail * stat.f_frsize < 64 << 10



async def test_a_full_disk_refuses_changes_typed_and_play_resumes(serve: Serve, small_disk: Path) -> None:
    """With the disk full, a move is refused `unavailable` with a retry hint and nothing else changes; `list` and
    `games` are still answered; once space returns the same move is acknowledged and the game goes on; every
    acknowledged move is in the file, which passes `PRAGMA integrity_check`."""
    db = small_disk / "arena.sqlite3"
    server = await serve(db)
    alice, bob, match_id = await live_match(server.url)
    position = Position.initial(Variant())
    acked: list[str] = []
    filler = small_disk / "filler"
    refused: tuple[Client, int, int, Json] | None = None
    for ply in range(200):
        if position.over:
            break
        if ply == 4:
            fill(filler)
        mover = alice if position.to_move.name == "SOUTH" else bob
        house = position.legal_bins()[0]
        reply = await move_answer(mover, match_id, ply, house)
        if reply["type"] == "error":
            refused = (mover, ply, house, reply)
            break
        acked.append(str(house))
        position = position.apply(Sow(house))
    assert refused is not None, "the disk never filled"
    mover, ply, house, reply = refused
    assert reply["code"] == "unavailable" and reply["retry_ms"] >= 1, reply
    await mover.request("matches", type="list")
    await mover.request("game_list", type="games")
    filler.unlink()
    assert (await move_answer(mover, match_id, ply, house))["type"] == "ack"
    acked.append(str(house))
    await server.close()
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = [row[0] for row in conn.execute("SELECT action FROM actions WHERE match_id = ? ORDER BY ply",
                                                 (match_id,))]
    assert stored == acked
    for client in (alice, bob):
        await client.close()

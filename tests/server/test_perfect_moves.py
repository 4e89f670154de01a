"""Each move the hosted `perfect` bot plays is logged (`bot_move`: exact, kind, source) and counted in /metrics, in a
real `kalah serve` process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bots import egdb
from bots.core import implementation
from protocol import Variant
from tests.helpers.processes import KALAH, spawn
from tests.helpers.wire import OPERATOR, Client, is_game_over

VARIANT = "kalah(4,3)"
LEVELS = 6
"""Database levels of the small board on disk: its last moves are read from them (`source` databases)."""


def perfect_moves(url: str) -> dict[tuple[str, str], float]:
    """The server's `kalah_perfect_moves_total` samples of the perfect bot: (kind, exact) -> count."""
    http = url.replace("ws://", "http://").rstrip("/")
    request = urllib.request.Request(f"{http}/metrics", headers={"Authorization": f"Bearer {OPERATOR}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return {(s.labels["kind"], s.labels["exact"]): s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name == "kalah_perfect_moves_total" and s.labels["bot"] == "perfect"}


async def test_every_hosted_perfect_move_is_logged_and_counted_with_exact(tmp_path: Path) -> None:
    """Perfect against itself on a small board, in a real server: one `bot_move` log line for each of the match's
    moves, each proved (exact) and saying how (kind) and from what (source: the databases for the last moves); the
    metrics count the same moves by kind."""
    egdb_dir, secret, log_path = tmp_path / "egdb", tmp_path / "operator-token", tmp_path / "server.log"
    egdb.load(Variant.parse(VARIANT), LEVELS, implementation("c"), egdb_dir)
    secret.write_text(OPERATOR + "\n")
    env = {**os.environ, "KALAH_EGDB_DIR": str(egdb_dir), "KALAH_BOOK_DIR": str(tmp_path / "books")}
    with log_path.open("w") as log:
        proc = await spawn(*KALAH, "serve", "--port", "0", "--db", str(tmp_path / "arena.sqlite3"), "--log-level",
                           "info", "--log-format", "json", "--operator-token-file", str(secret), env=env,
                           stdout=asyncio.subprocess.PIPE, stderr=log)
    try:
        assert proc.stdout is not None
        url = re.findall(r"ws://\S+", (await asyncio.wait_for(proc.stdout.readline(), 60)).decode())[0]
        watcher = await Client.open(url, "host")
        await watcher.send(type="exhibition", variant=VARIANT, south="perfect", north="perfect", match_id="ex-p")
        await watcher.expect("snapshot")
        await watcher.expect("event", timeout=120, where=is_game_over)
        actions = [e for e in watcher.events("ex-p") if e["kind"] == "action"]
        counted = await asyncio.to_thread(perfect_moves, url)
        await watcher.close()
    finally:
        if proc.returncode is None:
            proc.terminate()
        status = await asyncio.wait_for(proc.wait(), 30)
    assert status == 0
    moves = [e for e in map(json.loads, log_path.read_text().splitlines()) if e["event"] == "bot_move"]
    assert [(m["match"], m["bot"], m["ply"]) for m in moves] == [("ex-p", "perfect", e["ply"]) for e in actions]
    assert all(m["exact"] is True and m["kind"] in ("proof", "forced") and m["variant"] == VARIANT for m in moves)
    assert {m["source"] for m in moves} <= {"proof", "databases", "forced"}
    assert any(m["source"] == "databases" for m in moves) and any(m["source"] == "proof" for m in moves)
    assert all(m["source"] != "databases" or m["seeds"] <= LEVELS for m in moves)
    by_kind = {(kind, "true"): float(sum(m["kind"] == kind for m in moves)) for kind in ("proof", "forced")}
    assert counted == {key: n for key, n in by_kind.items() if n}
    assert sum(counted.values()) == len(actions) > 0

"""`kalah ladder` as a user runs it: its own database, the server's standings, a summary when rerun, JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cli.main import main
from cli.stored_games import fetch_standings
from tests.conftest import Serve
from tests.wire import OPERATOR

LADDER = ["ladder", "--bots", "random,greedy", "--games", "2", "-H", "4", "-s", "3", "--concurrency", "2"]


def test_ladder_games_stay_out_of_the_personal_list(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Without --db the ladder plays over its own database: `kalah games` lists none of its games."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("KALAH_SERVER", raising=False)
    assert main(LADDER) == 0
    out = capsys.readouterr().out
    ladder_db = tmp_path / "data" / "kalah-arena" / "ladder.sqlite3"
    assert f"kalah games --db {ladder_db}" in out
    assert main(["games", "--json", "--db", str(ladder_db)]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert not (tmp_path / "data" / "kalah-arena" / "arena.sqlite3").exists()


async def test_printed_standings_are_the_servers_and_a_rerun_sums_up(
        serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The ladder's table is the server's stored standings of its bots; run again, it says all was played."""
    running = await serve(tmp_path / "arena.sqlite3")
    args = [*LADDER, "--server", running.url, "--operator-token", OPERATOR,
            "--state", str(tmp_path / "state.jsonl"), "--json"]
    assert await asyncio.to_thread(main, args) == 0
    first = json.loads(capsys.readouterr().out)
    stored = await asyncio.to_thread(fetch_standings, running.url)
    assert [(s["bot"], s["rating"], s["rd"], s["games"]) for s in first["standings"]] == [
        (r.name.removeprefix("bot:"), r.rating, r.rd, r.games) for r in stored.rows]
    assert len(first["games"]) == 2 and first["rated"]
    assert await asyncio.to_thread(main, args) == 0
    again = capsys.readouterr()
    assert json.loads(again.out)["standings"] == first["standings"]
    assert "all 2 games of this ladder were played before" in again.err


def test_ladder_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad bot list, or a server and a database at once, is refused in one line."""
    assert main(["ladder", "--bots", "random", "--db", str(tmp_path / "a.sqlite3")]) == 2
    assert main(["ladder", "--bots", "random,greedy", "--db", "x", "--server", "ws://h:1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["kalah ladder: a ladder needs at least two different bots",
                   "kalah ladder: give either --server or --db, not both"]

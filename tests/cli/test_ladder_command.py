"""`kalah ladder` as a user runs it: its own database, the server's standings, a summary when rerun, JSON."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from pathlib import Path

import pytest

from cli.main import main
from cli.stored_games import fetch_standings
from tests.conftest import Serve
from tests.helpers.processes import KALAH, ROOT, kalah_serve, run
from tests.helpers.wire import OPERATOR

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
    assert [(s["player"], s["rating"], s["rd"], s["games"]) for s in first["standings"]] == [
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


def test_an_unknown_bot_is_refused_before_the_ladder_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt bot is refused in one line (with the id it was probably meant as) before a ladder server or
    database is made (before, the server started, the database and the progress file were made, and the first
    game failed)."""
    db = tmp_path / "ladder.sqlite3"
    assert main(["ladder", "--bots", "random,Greedy", "--games", "2", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalah ladder: unknown bot 'Greedy'") and "did you mean 'greedy'?" in err
    assert err.count("\n") == 1 and not db.exists()


def readme_recipe(marker: str) -> list[str]:
    """The README tour's `kalah` command line that contains `marker`, as arguments (its comment cut)."""
    readme = (ROOT / "README.md").read_text()
    [line] = [line for line in readme.splitlines() if line.startswith("kalah ") and marker in line]
    return shlex.split(line.split("  #")[0])[1:]


def test_the_readmes_paced_ladder_runs_on_a_served_arena(tmp_path: Path) -> None:
    """The README's paced-bot recipe on a `kalah serve` without the operator's token: one line says the games are
    unrated, both are played (paced at 50 ms here, 800 in the README); a token the server does not take stops the
    ladder with one line that names --operator-token and --unrated."""
    recipe = readme_recipe("--pace-ms")
    assert recipe[:5] == ["ladder", "--server", "ws://127.0.0.1:8765", "--pace-ms", "800"]
    env = {k: v for k, v in os.environ.items() if k not in ("KALAH_OPERATOR_TOKEN", "KALAH_SERVER")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    with kalah_serve(tmp_path / "arena.sqlite3") as url:
        done = run([*KALAH, *recipe[:2], url, recipe[3], "50", *recipe[5:]], env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("\n") == 1 and "unrated" in done.stderr and "--operator-token-file" in done.stderr
        assert "2 games of this ladder" in done.stdout and "results of these unrated games" in done.stdout
        refused = run([*KALAH, *recipe[:2], url, "--games", "2", "--bots", "random,greedy", "-H", "3", "-s", "2"],
                      env={**env, "KALAH_OPERATOR_TOKEN": "wrong"}, timeout=300)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert "--operator-token-file" in refused.stderr and "--unrated" in refused.stderr

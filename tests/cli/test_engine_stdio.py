"""`kalah engine BOT` on stdin/stdout: a KGP agent over pipes, and the perfect bot entered in the ladder that way."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cli.main import main
from server.storage import list_games
from tests.helpers.processes import spawn

KALAH_ENGINE = [sys.executable, "-m", "cli.main", "engine"]


async def test_kalah_engine_speaks_kgp_on_its_standard_streams() -> None:
    """Greeted on stdin, it names itself and asks for freeplay on stdout; it answers a state with a legal move
    and yield, a ping with pong, and leaves at goodbye with status 0; its reports go to stderr only."""
    proc = await spawn(*KALAH_ENGINE, "greedy", "--think", "0.1", stdin=asyncio.subprocess.PIPE,
                       stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    async def expect(name: str) -> list[str]:
        """Read lines until one whose command is `name`; all read."""
        seen: list[str] = []
        while True:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()  # type: ignore[union-attr]
            assert line.endswith("\r\n"), seen
            seen.append(line.strip())
            words = seen[-1].split()
            if len(words) > 1 and words[1] == name:
                return seen

    proc.stdin.write(b"kgp 1 1 0\r\n")
    hello = await expect("mode")
    assert 'set info:name greedy' in " ".join(hello) and hello[-1].endswith("mode freeplay")
    proc.stdin.write(b"2 set game:id m1\r\n4 set time:clock 1\r\n6 state <6,0,0,0,0,0,0,0,3,1,1,1,1,1,1>\r\n")
    answer = await expect("yield")
    assert answer[-2].split()[0].endswith("@6") and answer[-2].split()[1:] == ["move", "6"]  # its only pit
    proc.stdin.write(b"8 state <6,0,0,2,0,0,0,0,1,1,1,1,1,1,1>\r\n")
    answer = await expect("yield")
    assert answer[-2].split()[1] == "move" and answer[-2].split()[2] in ("1", "6")
    proc.stdin.write(b"10 ping\r\n")
    assert (await expect("pong"))[-1].split()[0].endswith("@10")
    proc.stdin.write(b"goodbye\r\n")
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0 and out == b""
    assert b"game m1" in err


@pytest.mark.timeout(300)
def test_perfect_through_kalah_engine_wins_kalah_6_4_as_south_by_the_game_value(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The perfect bot as a ladder engine (`kalah engine perfect` over pipes), from the initial position, beside
    the hosted perfect bot: as South it wins by at least +8 (the value of Kalah(6,4)) against greedy and against
    the hosted perfect bot, and it scores against greedy what the hosted one scores."""
    db = tmp_path / "ladder.sqlite3"
    engine = " ".join([*KALAH_ENGINE, "perfect"])
    assert main(["ladder", "--bots", "greedy,perfect", f"--engine=eperfect={engine}", "--games", "2",
                 "--opening-plies", "0", "--clock", "4/move", "--unrated", "--concurrency", "2",
                 "--db", str(db), "--state", str(tmp_path / "state.jsonl")]) == 0
    capsys.readouterr()
    games = list_games(db)
    assert len(games) == 6 and all(g.reason in ("empty", "majority") for g in games)
    for game in games:
        if game.south == "engine:eperfect":
            assert game.result is not None and game.result >= 8, game
    wins = {who: sum(g.winner == f"{who}" for g in games if "bot:greedy" in (g.south, g.north))
            for who in ("engine:eperfect", "bot:perfect")}
    assert wins == {"engine:eperfect": 2, "bot:perfect": 2}

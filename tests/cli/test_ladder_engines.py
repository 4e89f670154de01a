"""`kalah ladder --engine`: local KGP engines (real processes) in the ladder, every failure stored with its reason."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import cast

import pytest

from cli.games import with_detail
from cli.ladder_engines import UNTIMED_MOVE_S
from cli.main import main
from cli.stored_games import get_game
from server.core.arena import Arena
from server.front.outside_engines.agent import AgentLimits
from server.front.outside_engines.local import Launched, LocalEngines, LocalSettings
from server.front.outside_engines.process import EngineSpec
from server.front.outside_engines.results import forfeits
from server.storage import StoredGame, list_games
from tests.helpers.paths import ROOT_DIR
from tests.helpers.processes import KALAH, run, spawn

AGENTS = ROOT_DIR / "tests" / "helpers" / "agents"
ENGINE = f"{sys.executable} {AGENTS / 'pipe_engine.py'}"


def ladder(tmp_path: Path, *args: str, clock: str | None = "2/move") -> list[str]:
    """Run `kalah ladder` over a database of its own (unrated, `clock`: 2 s a move; None: untimed); the ladder's
    arguments."""
    timed = [] if clock is None else ["--clock", clock]
    return ["ladder", "--db", str(tmp_path / "ladder.sqlite3"), "--state", str(tmp_path / "state.jsonl"),
            "--unrated", *timed, *args]


def stored(tmp_path: Path) -> tuple[list[StoredGame], dict[str, str]]:
    """The ladder's stored games, and each forfeited one's stored reason by match id."""
    db = tmp_path / "ladder.sqlite3"
    return list_games(db, limit=500), {f.match_id: f.detail for f in forfeits(db)}


def loser(game: StoredGame) -> str | None:
    """The name of the player who lost (None: a draw)."""
    if game.winner is None:
        return None
    return game.north if game.winner == game.south else game.south


FAULTS = {
    "crash": "engine exited with status 3 (stderr: boom: deliberate crash)",
    "hang": f"no move within {UNTIMED_MOVE_S:.2f} s",
    "illegal": "illegal move",
    "garbage": "protocol error: malformed command",
    "longline": "protocol error: line of 20",
}


def test_broken_engines_lose_by_forfeit_with_their_reason_and_disturb_no_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Crashing, hanging, illegal, garbage and 20 KiB-line engines play a good engine and a hosted bot, eight
    games at once: each of their games is lost by forfeit with its reason stored; the good ones finish on
    the board. Untimed (each move bounded by the ladder's UNTIMED_MOVE_S): under a clock a loaded machine could
    let a flag fall before the forfeit it races, a broken engine's or a good one's late answer."""
    engines = [f"--engine=good={ENGINE}", *(f"--engine={fault}={ENGINE} {fault}" for fault in FAULTS)]
    args = ladder(tmp_path, "--bots", "random", *engines, "--games", "2", "--concurrency", "8", clock=None)
    assert main(args) == 0
    out = capsys.readouterr().out
    games, why = stored(tmp_path)
    assert len(games) == 21 * 2
    for game in games:
        players = {game.south, game.north}
        faulty = [p for p in players if p and p.removeprefix("engine:") in FAULTS]
        if not faulty:
            assert game.reason in ("empty", "majority") and game.match_id not in why, game
            continue
        assert game.reason == "forfeit", game
        if len(faulty) == 1:
            name = faulty[0].removeprefix("engine:")
            assert loser(game) == faulty[0]
            assert FAULTS[name] in why[game.match_id], (name, why[game.match_id])
            assert f"(forfeit: {why[game.match_id]})" in out
    assert {g.south for g in games} >= {"engine:good", "bot:random", "engine:crash"}


def test_resource_limits(tmp_path: Path) -> None:
    """An engine past its CPU time is killed by SIGXCPU, one past its memory dies of MemoryError: each loses
    with that reason."""
    engines = [f"--engine=hog={ENGINE} hog", f"--engine=bloat={ENGINE} bloat"]
    args = ladder(tmp_path, "--bots", "greedy", *engines, "--games", "2", "--engine-cpu", "1",
                  "--engine-memory", "300", "--clock", "10/move", "--concurrency", "2")
    assert main(args) == 0
    games, why = stored(tmp_path)
    expected = {"engine:hog": "engine killed by SIGXCPU (CPU limit of 1 s)",
                "engine:bloat": "engine exited with status 1 (stderr: MemoryError)"}
    for game in games:
        if "bot:greedy" in (game.south, game.north):
            assert game.reason == "forfeit" and why[game.match_id] == expected[str(loser(game))]


@pytest.mark.parametrize(("engine", "why"), [
    ("ghost=/nonexistent/engine", "engine ghost cannot start: [Errno 2] No such file or directory"),
    (f"nomode={ENGINE} nomode", "engine nomode did not ask for freeplay (Requested no mode within 1 s)"),
    (f"gone={sys.executable} /nonexistent/engine.py", "engine gone exited with status 2"),
    ("mute=mankalah:false", "engine mute exited with status 1 at once"),
])
def test_an_engine_that_cannot_start_stops_the_ladder_before_any_game(tmp_path: Path, engine: str, why: str) -> None:
    """`kalah ladder` (a process) first starts each engine once: one that cannot run, exits, or never asks for
    freeplay stops the ladder with one line saying so and naming its --engine; no game is stored."""
    board = ["--houses", "7", "--seeds", "7", "--pie"] if "mankalah:" in engine else ["-H", "3", "-s", "2"]
    done = run([*KALAH, *ladder(tmp_path, "--engine", engine, "--bots", "random", "--games", "2",
                                "--engine-start", "1", *board)], timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"kalah ladder: {why}") and f"--engine '{engine}'" in done.stderr
    assert stored(tmp_path)[0] == []


def test_a_crashed_engine_is_restarted_for_its_next_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An engine that crashes once loses that game; its next game gets a fresh process, which plays it out.
    `kalah games` and an offline `kalah replay` show the forfeit's reason."""
    marker = tmp_path / "crashed-once"
    args = ladder(tmp_path, "--bots", "random", f"--engine=flaky={ENGINE} crash {marker}", "--games", "2",
                  "--concurrency", "1", "--json")
    assert main(args) == 0
    games, why = stored(tmp_path)
    first, second = sorted(games, key=lambda g: g.match_id)
    assert first.reason == "forfeit" and "status 3" in why[first.match_id] and marker.exists()
    assert second.reason in ("empty", "majority") and second.match_id not in why
    capsys.readouterr()
    assert main(["games", "--db", str(tmp_path / "ladder.sqlite3")]) == 0
    assert f"forfeit: {why[first.match_id]}" in capsys.readouterr().out
    assert main(["games", "--json", "--db", str(tmp_path / "ladder.sqlite3")]) == 0
    listed = {g["match_id"]: g["detail"] for g in json.loads(capsys.readouterr().out)}
    assert listed == {first.match_id: why[first.match_id], second.match_id: None}
    db = str(tmp_path / "ladder.sqlite3")
    replayed = get_game(db, first.match_id)  # what kalah replay --db shows
    assert replayed is not None
    assert f"(forfeit: {why[first.match_id]})" in with_detail(replayed).verdict


def test_sprt_stops_a_decided_pairing_and_a_rerun_plays_nothing_more(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --sprt a pairing decided early (a good engine against one that crashes in every third process)
    stops before its games run out; the JSON report carries the Elo estimate and the verdict; run again, the
    ladder plays nothing more."""
    args = ladder(tmp_path, f"--engine=good={ENGINE}", f"--engine=flaky={ENGINE} every3 {tmp_path / 'count'}",
                  "--games", "40", "--sprt=-300,0,0.05,0.05", "--concurrency", "1", "--json")
    assert main(args) == 0
    done = capsys.readouterr()
    report = json.loads(done.out)
    (pairing,) = report["pairings"]
    played = len(report["games"])
    assert pairing["player"] == "good" and pairing["sprt"]["verdict"] == "H1"
    assert pairing["sprt"]["llr"] >= pairing["sprt"]["upper"] and played < 40
    assert pairing["wins"] > pairing["losses"] and pairing["elo"] > 0 and pairing["low"] < pairing["elo"]
    assert "H1 accepted; its remaining games are skipped" in done.err
    assert main(args) == 0
    again = capsys.readouterr()
    assert len(json.loads(again.out)["games"]) == played
    assert f"all {played} games of this ladder were played before" in again.err
    assert len(stored(tmp_path)[0]) == played


def test_engine_flags_are_checked_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed --engine, an engine with --server, a bad --sprt, and a ManKalah engine on another board are
    refused with one line each."""
    db = ["--db", str(tmp_path / "x.sqlite3")]
    assert main(["ladder", "--bots", "random", "--engine", "no command", *db]) == 2
    assert main(["ladder", "--bots", "random", "--engine", "e=prog", "--server", "ws://h:1"]) == 2
    assert main(["ladder", "--bots", "random", "--engine", "e=prog", "--sprt", "10,0,0.05,0.05", *db]) == 2
    assert main(["ladder", "--bots", "random", "--engine", "e=mankalah:prog", "-H", "5", *db]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("kalah ladder: ") for line in err)
    assert "NAME=COMMAND" in err[0] and "--server" in err[1] and "elo0 < elo1" in err[2] and "7" in err[3]


def first_line(fifo: Path) -> str:
    """The first line written to a FIFO (opening it waits for a writer)."""
    with fifo.open() as f:
        return f.readline()


async def test_a_ladder_killed_mid_game_takes_up_the_engine_game_where_it_stood(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ladder process killed (SIGKILL) during an engine's game and run again plays only the missing games: the
    engine game left live is taken up with a fresh engine process and finished, never started twice."""
    fifo = tmp_path / "moved"
    os.mkfifo(fifo)
    args = ladder(tmp_path, "--bots", "random", f"--engine=good={ENGINE} notify {fifo}", "--games", "4",
                  "--concurrency", "1", "--clock", "5/move")
    proc = await spawn(*KALAH, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert await asyncio.to_thread(first_line, fifo) == "moved\n"  # the first game's engine made its third move
    proc.kill()
    await proc.wait()
    live = [g for g in list_games(tmp_path / "ladder.sqlite3", status=None) if g.status != "finished"]
    assert len(live) == 1 and live[0].ply > 0
    assert await asyncio.to_thread(main, args) == 0
    out = capsys.readouterr().out
    assert "0 of 4 games already played; 4 to go" in out
    games, why = stored(tmp_path)
    assert len(games) == 4 and len({g.match_id for g in games}) == 4 and not why
    resumed = next(g for g in games if g.match_id == live[0].match_id)
    assert resumed.reason in ("empty", "majority") and resumed.ply > live[0].ply


@pytest.mark.parametrize(("clock", "mode"), [("2/move", "relative"), ("6+1", "absolute")])
def test_engines_are_told_the_time_of_the_clock(tmp_path: Path, clock: str, mode: str) -> None:
    """Per move, an engine is told `time:mode relative` and that move's whole seconds; with base+increment,
    `time:mode absolute`, the whole time it has left (never more than the clock holds) and the opponent's;
    every state is stopped."""
    log = tmp_path / "lines.log"
    assert main(ladder(tmp_path, "--bots", "greedy", f"--engine=timed={ENGINE} log {log}", "--games", "2",
                       "--clock", clock)) == 0
    seen = log.read_text().splitlines()
    options = [line.split()[-2:] for line in seen if " set time:" in line]
    assert {value for name, value in options if name == "time:mode"} == {mode}
    clocks = [int(value) for name, value in options if name == "time:clock"]
    assert clocks and all(1 <= c <= (2 if mode == "relative" else 6 + 1 * 40) for c in clocks)
    assert any(name == "time:opclock" for name, _ in options) == (mode == "absolute")
    states = [line.split()[0] for line in seen if " state " in line]
    stops = {line.split()[0].partition("@")[2] for line in seen if line.split()[1:2] == ["stop"]}
    assert states and all(sid in stops for sid in states)


def test_the_report_tests_the_engine_and_bounds_a_sweep(tmp_path: Path) -> None:
    """`kalah ladder` (a process) with an engine named after the bot it meets: the SPRT and the pairing are the
    engine's ("SPRT zz v random"); its 0-2 is printed as a bound, not as infinities; the table says "player"."""
    done = run([*KALAH, *ladder(tmp_path, "--engine", f"zz={ENGINE} crash", "--bots", "random", "--games", "2",
                                "--sprt", "0,10,0.05,0.05", "--concurrency", "1", "-H", "3", "-s", "2")], timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "SPRT zz v random" in out and "SPRT random v zz" not in out
    pairing = next(line for line in out.splitlines() if line.startswith("zz v random"))
    assert "0-0-2" in pairing and "<= +" in pairing
    assert "inf" not in out
    assert any(line.split()[:2] == ["#", "player"] for line in out.splitlines())


async def test_an_engine_dropped_for_asking_no_mode_is_said_so_once_its_goodbye_has_ended_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up check drops an engine that never asks for freeplay; when the goodbye it is sent has ended it before
    the check looks, the check still says it asked for nothing (not that it exited on its own)."""
    real = LocalEngines.launch

    async def launch_then_wait(self: LocalEngines, name: str) -> Launched:
        """Launch, then let the dropped engine end on its goodbye before the check looks."""
        launched = await real(self, name)
        assert launched.process is not None
        await asyncio.wait_for(launched.process.proc.wait(), 10)
        return launched

    monkeypatch.setattr(LocalEngines, "launch", launch_then_wait)
    engines = LocalEngines(cast(Arena, None), [EngineSpec.parse(f"nomode={ENGINE} nomode")],
                           LocalSettings(agent=AgentLimits(mode_s=0.5)))
    assert await engines.check("nomode") == "did not ask for freeplay (Requested no mode within 0.5 s)"

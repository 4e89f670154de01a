"""ManKalah agents (real processes speaking the Manchester protocol) in the ladder, on Kalah(7,7) with the pie rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from cli.main import main
from protocol.position import Position
from protocol.side import Side
from protocol.variant import Variant
from server.front.outside_engines.mankalah import action_of, state_text
from server.front.outside_engines.results import forfeits
from server.storage import list_games
from tests.helpers.paths import ROOT_DIR

AGENT = f"{sys.executable} {ROOT_DIR / 'tests' / 'helpers' / 'agents' / 'mankalah_agent.py'}"
CHANGE = re.compile(r"CHANGE;([1-7]|SWAP);(\d+,){15}\d+;(YOU|OPP|END)")


def test_state_and_moves_in_mankalah_terms() -> None:
    """The state lists North's holes and store, then South's; holes count from each mover's own left; SWAP only
    as North's first move; anything else is named a protocol error."""
    v = Variant(houses=7, seeds=7, pie=True)
    start = Position.initial(v)
    after = start.apply(action_of("MOVE;1", start, Side.SOUTH))  # type: ignore[arg-type]
    assert state_text(after) == "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,1"
    assert action_of("SWAP", start, Side.SOUTH) == "illegal SWAP: only North's first move may swap"
    assert action_of("MOVE;8", start, Side.SOUTH) == (
        "illegal move 8: holes are numbered 1 to 7 (legal now: 1, 2, 3, 4, 5, 6, 7)")
    assert str(action_of("MOVE 3", start, Side.SOUTH)).startswith("protocol error: ")


def test_mankalah_agents_play_swap_and_forfeit_through_the_ladder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three agents (plain, swapping as North, illegal first move) play each other on ManKalah's board: every
    game is stored; the illegal one loses each game by forfeit with its reason; the swap is played and told
    only to the swapper's opponent; each agent gets START, well-formed CHANGEs and END (and, started once before
    the first game to check it runs, a lone END)."""
    logs = {name: tmp_path / f"{name}.log" for name in ("plain", "swapper", "illegal")}
    engines = [f"--engine=plain=mankalah:{AGENT} --log {logs['plain']}",
               f"--engine=swapper=mankalah:{AGENT} --swap --log {logs['swapper']}",
               f"--engine=illegal=mankalah:{AGENT} --illegal --log {logs['illegal']}"]
    db = tmp_path / "ladder.sqlite3"
    assert main(["ladder", *engines, "--games", "2", "--opening-plies", "0", "--clock", "2/move", "--unrated",
                 "--db", str(db), "--state", str(tmp_path / "state.jsonl"), "--concurrency", "2"]) == 0
    capsys.readouterr()
    games = list_games(db)
    why = {f.match_id: f.detail for f in forfeits(db)}
    assert len(games) == 6 and all(g.variant.startswith("kalah(7,7,") and "pie=on" in g.variant for g in games)
    for game in games:
        if "engine:illegal" in (game.south, game.north):
            assert game.reason == "forfeit" and game.winner != "engine:illegal"
            assert why[game.match_id].startswith("illegal move 8: holes are numbered 1 to 7")
        else:
            assert game.reason in ("empty", "majority") and game.match_id not in why
    swapped = next(g for g in games if (g.south, g.north) == ("engine:plain", "engine:swapper"))
    assert "swap" in swapped.record.split()
    lines = {name: path.read_text().splitlines() for name, path in logs.items()}
    for name, seen in lines.items():
        assert seen[0] == "END", name  # the start-up check's process: started, then told END before any game
        seen = seen[1:]
        assert seen.count("END") == 4 and seen.count("START;South") == 2 and seen.count("START;North") == 2, name
        assert all(CHANGE.fullmatch(line) for line in seen if line.startswith("CHANGE")), name
    assert not any(line.startswith("CHANGE;SWAP") for line in lines["swapper"])
    assert sum(line.startswith("CHANGE;SWAP;") and line.endswith(";YOU") for line in lines["plain"]) == 1


def test_an_opening_is_told_from_start_and_the_stale_answer_dropped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a random opening (South's first sowing, then the pie decision is North's), an agent seated South is
    told `START;South` and the opening's `CHANGE`: its answer to that stale START is dropped, not a fault, and
    both games are played out on the board."""
    log = tmp_path / "plain.log"
    db = tmp_path / "ladder.sqlite3"
    assert main(["ladder", "--bots", "greedy", f"--engine=plain=mankalah:{AGENT} --log {log}", "--games", "2",
                 "--clock", "2/move", "--unrated", "--db", str(db), "--state", str(tmp_path / "state.jsonl"),
                 "--concurrency", "1"]) == 0  # one game at a time: both write the one log read in order below
    capsys.readouterr()
    games = list_games(db)
    assert len(games) == 2 and not forfeits(db)
    assert all(g.reason in ("empty", "majority") for g in games)
    seen = log.read_text().splitlines()
    south = seen.index("START;South")
    assert CHANGE.fullmatch(seen[south + 1]) and seen[south + 1].startswith("CHANGE;")

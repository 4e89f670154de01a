"""`kalah explore --variant V [--position P] [--json] [--server URL | --db PATH]`: its JSON shape, its text, and its
one-line refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.conftest import Serve
from tests.helpers.processes import KALAH, run
from tests.server.test_explore import SMALL, store_hand_made

AFTER_ONE = "0,4,1,4,3,0 N 1 -"


def check_shape(answer: dict[str, Any]) -> None:
    """`moves` is a list of items holding `action` and `games` (and the mover's results, the position after and the
    proved value after the move), the most played first; the position's own value and the solver's move."""
    moves = answer["moves"]
    assert isinstance(moves, list) and [(m["action"], m["games"]) for m in moves] == [("1", 3), ("2", 3)]
    for move in moves:
        assert {"wins", "draws", "losses", "average_rating", "after", "value", "exact", "last_match"} <= set(move)
        assert move["exact"] is True and isinstance(move["value"], int)
    assert answer["games"] == 6 and answer["position"] == "3,3,0,3,3,0 S 0 -"
    assert answer["exact"] is True and answer["solver"] in ("1", "2")


async def test_explore_prints_json_from_a_database_file(tmp_path: Path) -> None:
    """`--db` reads the index of the file and values the moves in the command's own process."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    done = await asyncio.to_thread(run, [*KALAH, "explore", "--variant", SMALL.text(), "--db", str(db), "--json"])
    assert done.returncode == 0, done.stderr
    check_shape(json.loads(done.stdout))
    deeper = await asyncio.to_thread(run, [*KALAH, "explore", "--variant", SMALL.text(), "--position", AFTER_ONE,
                                           "--db", str(db), "--json", "--movers", "people"])
    assert [(m["action"], m["games"], m["losses"]) for m in json.loads(deeper.stdout)["moves"]] == [("5", 2, 2),
                                                                                                  ("4", 1, 0)]


async def test_explore_from_a_server_prints_its_answer_and_a_table(serve: Serve, tmp_path: Path) -> None:
    """`--server` prints the server's answer: its JSON, then as a table with the shares and the solver's move."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    running = await serve(db)
    done = await asyncio.to_thread(run, [*KALAH, "explore", "--variant", SMALL.text(), "--server", running.url,
                                         "--json"])
    assert done.returncode == 0, done.stderr
    check_shape(json.loads(done.stdout))
    text = await asyncio.to_thread(run, [*KALAH, "explore", "--variant", SMALL.text(), "--server", running.url,
                                         "--rated"])
    assert text.returncode == 0, text.stderr
    assert "kalah(2,3) at 3,3,0,3,3,0 S 0 -: 5 games" in text.stdout
    assert "67%" in text.stdout and "the solver plays" in text.stdout and "(proved)" in text.stdout


async def test_explore_refuses_a_bad_position_or_range_in_one_line(tmp_path: Path) -> None:
    """A position that cannot be read and a rating range out of order are one line each, naming the flag."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    bad = await asyncio.to_thread(run, [*KALAH, "explore", "--variant", SMALL.text(), "--position", "1,2 S 0 -",
                                        "--db", str(db)])
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "--position" in bad.stderr
    wrong = await asyncio.to_thread(run, [*KALAH, "explore", "--min-rating", "1600", "--max-rating", "1500",
                                          "--db", str(db)])
    assert wrong.returncode != 0 and wrong.stderr.count("\n") == 1
    assert "--min-rating must be below --max-rating" in wrong.stderr

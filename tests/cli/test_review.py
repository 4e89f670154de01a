"""`kalah review MATCH [--json] [--server URL | --db PATH]`: its JSON shape, its text, and its one-line refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from protocol import Variant
from tests.conftest import Serve
from tests.helpers.processes import KALAH, run
from tests.helpers.stored_games import store_finished

SMALL = Variant.parse("kalah(2,3)")
GAMES = {"g1": (SMALL, "1 5 1 4 2 4 5")}
LOSSES = [0, 10, 2, 0, 4, 2, 0]


def check_shape(review: dict[str, object]) -> None:
    """The JSON holds one item per ply with `ply`, `side`, `action`, `loss` (>= 0) and `exact`, and the summaries."""
    plies = review["plies"]
    assert isinstance(plies, list) and len(plies) == 7
    for index, ply in enumerate(plies):
        assert {"ply", "side", "action", "loss", "exact", "mark", "value", "after", "best"} <= set(ply)
        assert ply["ply"] == index and ply["side"] in ("south", "north") and ply["loss"] >= 0
        assert ply["exact"] is True
    assert [p["action"] for p in plies] == GAMES["g1"][1].split()
    assert [p["loss"] for p in plies] == LOSSES
    players = review["players"]
    assert isinstance(players, list) and [p["player"] for p in players] == ["alice", "bob"]
    assert sum(p["lost"] for p in players) == sum(LOSSES)


async def test_review_prints_json_from_a_database_file(tmp_path: Path) -> None:
    """`--db` reviews a stored game in the command's own process (none stored yet) and prints its JSON."""
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, GAMES)
    done = await asyncio.to_thread(run, [*KALAH, "review", "g1", "--db", str(db), "--json"])
    assert done.returncode == 0, done.stderr
    check_shape(json.loads(done.stdout))


async def test_review_from_a_server_prints_its_stored_review(serve: Serve, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`--server` prints the server's review (JSON, then as text with the summaries), made once by the server."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the identity it says hello with
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, GAMES)
    arena = await serve(db)
    done = await asyncio.to_thread(run, [*KALAH, "review", "g1", "--server", arena.url, "--json"])
    assert done.returncode == 0, done.stderr
    check_shape(json.loads(done.stdout))
    text = await asyncio.to_thread(run, [*KALAH, "review", "g1", "--server", arena.url])
    assert text.returncode == 0, text.stderr
    assert "alice (opened as South): 1/3 perfect moves, 6 seeds given away, worst: ply 4, 4 seeds" in text.stdout
    assert "bob (opened as North): 2/4 perfect moves, 12 seeds given away, worst: ply 1, 10 seeds" in text.stdout
    assert "blunder" in text.stdout and "every figure proved" in text.stdout
    assert arena.reviews.made == 1


async def test_review_refuses_in_one_line(serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown match, from a file or a server, is one line naming what to do, never a traceback."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, GAMES)
    done = await asyncio.to_thread(run, [*KALAH, "review", "nope", "--db", str(db)])
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "no stored match 'nope'" in done.stderr
    arena = await serve(db)
    remote = await asyncio.to_thread(run, [*KALAH, "review", "nope", "--server", arena.url])
    assert remote.returncode != 0 and remote.stderr.strip().count("\n") == 0 and "unknown_match" in remote.stderr


async def test_a_stored_game_whose_id_is_no_match_id_is_refused_in_one_line(
        serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game stored by hand under an id outside the match-id pattern (`a:b`) is listed and exported from its
    database; reviewing it, or asking a server for it, is one line naming the rule, never a validation error."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"a:b": GAMES["g1"]})
    listed = await asyncio.to_thread(run, [*KALAH, "games", "--db", str(db)])
    assert listed.returncode == 0 and "a:b" in listed.stdout, listed.stderr
    exported = await asyncio.to_thread(run, [*KALAH, "export", "a:b", "--db", str(db)])
    assert exported.returncode == 0 and "# match: a:b" in exported.stdout, exported.stderr
    arena = await serve(db)
    for argv in (["review", "a:b", "--db", str(db)], ["review", "a:b", "--server", arena.url],
                 ["export", "a:b", "--server", arena.url], ["replay", "a:b", "--server", arena.url]):
        done = await asyncio.to_thread(run, [*KALAH, *argv], timeout=60)
        assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, (argv, done.stderr)
        assert "'a:b' is not a match id (1 to 64 letters, digits, '-' or '_')" in done.stderr, (argv, done.stderr)
        assert "ValidationError" not in done.stderr

"""`kalah puzzle build` and `kalah puzzles`: puzzles made from a database's reviewed games and from self-play, stored
once, listed as JSON (each with its position and its answer, proved to be the only move keeping the value) from a
database or a server, and refusals in one line."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from bots.review import perfect_valuer, review_game
from protocol import Variant
from protocol.messages import encode
from protocol.puzzle_messages import PuzzleInfo
from server.storage import open_storage
from server.storage.migrations_sqlite import SQLITE_MIGRATIONS
from server.storage.reviews import op_review
from server.storage.schema import migrate_sqlite
from tests.conftest import Serve
from tests.helpers.processes import KALAH, run, started
from tests.helpers.puzzles import check_one_answer
from tests.helpers.stored_games import store_finished

SMALL = Variant.parse("kalah(2,3)")
RECORD = "1 5 1 4 2 4 5"


async def store_reviewed(db: Path) -> None:
    """A finished Kalah(2,3) game `g1` with its review stored, as a server stores it."""
    await store_finished(db, {"g1": (SMALL, RECORD)})
    review = review_game("g1", SMALL, RECORD, ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    storage = await open_storage(db)
    try:
        await storage.write([op_review("g1", encode(review), review.exact)])
    finally:
        await storage.close()


def listed(argv: list[str]) -> list[PuzzleInfo]:
    """The puzzles `kalah puzzles ... --json` prints, checked to be a JSON list of puzzles with `position` and
    `answer`."""
    done = run([*KALAH, "puzzles", *argv, "--json"])
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)
    assert isinstance(items, list)
    assert all({"id", "variant", "position", "answer", "moves", "themes", "rating"} <= set(item) for item in items)
    return [PuzzleInfo.model_validate(item) for item in items]


async def test_build_makes_puzzles_from_reviewed_games_and_self_play_and_lists_them_as_json(
        serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The puzzles of a reviewed game (where its moves lost seeds) and of self-play are stored once; `kalah puzzles
    --json` lists each with its position and its answer, from the file and from a server on it, and every answer is
    the only move keeping the proved value."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    db = tmp_path / "arena.sqlite3"
    await store_reviewed(db)
    built = await asyncio.to_thread(run, [*KALAH, "puzzle", "build", "--db", str(db), "--from-games", "5"])
    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("4 new puzzles stored in ")
    games = await asyncio.to_thread(listed, ["--db", str(db), "--variant", "kalah(2,3)"])
    assert sorted(p.ply or 0 for p in games) == [1, 2, 4, 5]
    assert all(p.source == "game" and p.match_id == "g1" for p in games)
    again = await asyncio.to_thread(run, [*KALAH, "puzzle", "build", "--db", str(db), "--from-games", "5",
                                          "--self-play", "3", "--variant", "kalah(3,3)", "--max-puzzles", "3"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("3 new puzzles stored in ")
    everything = await asyncio.to_thread(listed, ["--db", str(db)])
    assert len(everything) == 7 and {p.source for p in everything} == {"game", "self-play"}
    for puzzle in everything:
        check_one_answer(puzzle)
    arena = await serve(db)
    remote = await asyncio.to_thread(listed, ["--server", arena.url, "--variant", "kalah(3,3)"])
    assert sorted(p.id for p in remote) == sorted(p.id for p in everything if p.variant == "kalah(3,3)")
    text = await asyncio.to_thread(run, [*KALAH, "puzzles", "--server", arena.url])
    assert text.returncode == 0 and "answer" in text.stdout and all(p.id in text.stdout for p in everything)


def test_an_interrupted_build_keeps_the_puzzles_it_proved(tmp_path: Path) -> None:
    """Ctrl-C during a long build ends it with status 130, and every puzzle it printed is stored."""
    db = str(tmp_path / "arena.sqlite3")
    argv = [*KALAH, "puzzle", "build", "--db", db, "--from-games", "0", "--self-play", "500", "--variant",
            "kalah(4,4)", "--max-puzzles", "10000"]
    with started(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        printed = [proc.stderr.readline() for _ in range(2)]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    ids = {line.split()[0] for line in printed}
    assert ids <= {p.id for p in listed(["--db", db])} and len(ids) == 2


def test_reading_puzzles_leaves_an_older_database_as_it_is(tmp_path: Path) -> None:
    """`kalah puzzles --db` on a database from before puzzles were stored lists none and does not upgrade it (a
    server of that version can still open it); `kalah puzzle build` upgrades it, as `kalah serve` would."""
    db = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        before = migrate_sqlite(conn, tuple(m for m in SQLITE_MIGRATIONS if m[0] < 18))
    done = run([*KALAH, "puzzles", "--db", str(db)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no puzzles")
    version = "SELECT max(version) FROM schema_version"
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute(version).fetchone()[0] == before == 17
    built = run([*KALAH, "puzzle", "build", "--db", str(db), "--from-games", "0"])
    assert built.returncode == 0, built.stderr
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute(version).fetchone()[0] == SQLITE_MIGRATIONS[-1][0]


def test_build_refuses_in_one_line(tmp_path: Path) -> None:
    """A variant whose values are not proved, a bad variant, or a database file that does not exist (for reading:
    none is made), is refused in one line naming the fix."""
    db = str(tmp_path / "arena.sqlite3")
    cyclic = run([*KALAH, "puzzle", "build", "--db", db, "--self-play", "1", "--variant", "kalah(4,3,clockwise=on)"])
    assert cyclic.returncode == 2 and cyclic.stderr.strip().count("\n") == 0
    assert "counter-clockwise" in cyclic.stderr
    bad = run([*KALAH, "puzzles", "--db", db, "--variant", "kalah(99,3)"])
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "--variant" in bad.stderr
    missing = str(tmp_path / "none.sqlite3")
    for command in (["puzzles", "--db", missing], ["puzzle", "--db", missing]):
        done = run([*KALAH, *command])
        assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "no arena database" in done.stderr
        assert not Path(missing).exists()

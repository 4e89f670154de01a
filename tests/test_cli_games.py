"""`kalah games` and `kalah export` on a stored database, and export read back by `kalah record`."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from cli.main import main
from protocol import Game, Variant
from server.storage import Storage
from server.storage.writer import op_action, op_create, op_finish, op_join, op_player
from tests.conftest import Serve


async def store_random_games(path: Path, variants: list[Variant], seed: int = 1) -> list[Game]:
    """Store one finished random game per variant between alice and bob; return the games."""
    rng = random.Random(seed)
    storage = await Storage.open(path)
    games = []
    try:
        await storage.write([op_player("p-alice", "alice", None), op_player("p-bob", "bob", None)])
        for i, variant in enumerate(variants):
            game = Game(variant)
            while not game.over:
                game.play(rng.choice(game.position.legal_actions()))
            mid = f"m{i}"
            ops = [op_create(mid, variant.text(), True, 0), op_join(mid, 0, "p-alice", False),
                   op_join(mid, 1, "p-bob", True)]
            for ply, action in enumerate(game.actions):
                ops.append(op_action(mid, ply, 0, action.token(), (0, 0)))
            result, reason = game.result or 0, game.position.end
            assert reason is not None
            ops.append(op_finish(mid, result, None if result == 0 else int(result < 0), reason))
            await storage.write(ops)
            games.append(game)
    finally:
        await storage.close()
    return games


VARIANTS = [Variant(), Variant(pie=True), Variant.parse("kalah(4,3,capture=empty,clockwise=on)")]


async def test_games_lists_and_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The listing shows every finished game; filters by variant and player narrow it."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS)
    assert main(["games", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert all(f"m{i}" in out for i in range(3)) and "alice" in out
    assert main(["games", "--db", str(db), "--variant", "kalah(6,4,pie=on)"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "m1" in lines[1]
    assert main(["games", "--db", str(db), "--player", "carol"]) == 0
    assert "no stored games" in capsys.readouterr().out


async def test_export_text_reads_back_with_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each game's text export, given to `kalah record`, reproduces the stored result."""
    db = tmp_path / "arena.sqlite3"
    games = await store_random_games(db, VARIANTS)
    for i, game in enumerate(games):
        assert main(["export", f"m{i}", "--db", str(db)]) == 0
        text = capsys.readouterr().out
        assert f"# variant: {game.variant.text()}" in text
        assert main(["record", "--json", text]) == 0
        replay = json.loads(capsys.readouterr().out)
        assert replay["over"] and replay["result"] == game.result


async def test_export_all_ndjson(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--all --format ndjson writes one JSON object per stored game, oldest first."""
    db = tmp_path / "arena.sqlite3"
    games = await store_random_games(db, VARIANTS)
    assert main(["export", "--all", "--format", "ndjson", "--db", str(db)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["match_id"] for r in rows} == {"m0", "m1", "m2"}
    by_id = {r["match_id"]: r for r in rows}
    for i, game in enumerate(games):
        assert by_id[f"m{i}"]["record"] == game.record()
        assert by_id[f"m{i}"]["south"] == "alice"


def test_export_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing database, an unknown match or a bad invocation exit 2 with a message."""
    assert main(["export", "nope", "--db", str(tmp_path / "none.sqlite3")]) == 2
    assert "no arena database" in capsys.readouterr().err
    assert main(["export", "--db", str(tmp_path / "x")]) == 2
    assert main(["games", "--db", str(tmp_path / "none.sqlite3")]) == 2


def test_record_refuses_conflicting_variant() -> None:
    """A record whose header names another variant than the flags is refused."""
    assert main(["record", "-H", "4", "# variant: kalah(6,4)\n3"]) == 2


async def test_games_and_export_from_a_server(serve: Serve, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """With a ws:// URL the listing and the export come from a running server, without a hello."""
    db = tmp_path / "arena.sqlite3"
    games = await store_random_games(db, VARIANTS)
    running = await serve(db)
    assert await asyncio.to_thread(main, ["games", running.url, "--player", "bob"]) == 0
    out = capsys.readouterr().out
    assert all(f"m{i}" in out for i in range(3))
    assert await asyncio.to_thread(main, ["export", "m2", "--url", running.url]) == 0
    text = capsys.readouterr().out
    assert games[2].record() in text and "# variant: kalah(4,3,capture=empty,clockwise=on)" in text
    assert await asyncio.to_thread(main, ["export", "nope", "--url", running.url]) == 2

"""`kalah games` and `kalah export` on a stored database or a server, and export read back by `kalah record`."""

from __future__ import annotations

import asyncio
import json
import random
import shlex
import sys
from pathlib import Path

import pytest

from cli.main import main
from protocol import Game, Variant
from protocol.outcome import EndReason
from server.storage import open_storage
from server.storage.writer import op_action, op_create, op_finish, op_join, op_player
from tests.conftest import Serve
from tests.helpers.processes import KALAH, run


async def store_random_games(path: Path, variants: list[Variant], seed: int = 1) -> list[Game]:
    """Store one finished random game per variant between alice and bob; return the games."""
    rng = random.Random(seed)
    storage = await open_storage(path)
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


async def test_games_shows_who_won_and_why_when_no_score_decided_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A resignation, an abandonment and a forfeit list their winner and reason, and `-` where no score decided
    the game (before: `*` and no winner column)."""
    db = tmp_path / "arena.sqlite3"
    storage = await open_storage(db)
    try:
        await storage.write([op_player("p-alice", "alice", None), op_player("p-bob", "bob", None)])
        for mid, winner, reason in (("r1", 1, EndReason.RESIGN), ("a1", 0, EndReason.ABANDONMENT),
                                    ("f1", 1, EndReason.FORFEIT)):
            await storage.write([op_create(mid, "kalah(4,3)", True, 0), op_join(mid, 0, "p-alice", False),
                                 op_join(mid, 1, "p-bob", True), op_action(mid, 0, 0, "1", (0, 0)),
                                 op_finish(mid, None, winner, reason)])
    finally:
        await storage.close()
    assert main(["games", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["match", "date", "variant", "south", "north", "plies", "winner", "score", "reason"]
    rows = {line.split()[0]: line.split()[-3:] for line in lines[1:]}
    assert rows == {"r1": ["bob", "-", "resign"], "a1": ["alice", "-", "abandonment"], "f1": ["bob", "-", "forfeit"]}
    assert "*" not in "".join(lines)


async def test_a_limit_below_one_is_refused_not_taken_as_some_other_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--limit 0, -1 or a look-alike digit: status 2 and one line naming the range (before, 0 and -1 listed one
    game and said nothing)."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS)
    for bad in ("0", "-1", "\N{FULLWIDTH DIGIT THREE}"):
        assert main(["games", "--db", str(db), "--limit", bad]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == f"kalah games: argument --limit: {bad!r} is not a whole number of at least 1 " \
                               "(see kalah games --help)\n"
    assert main(["games", "--db", str(db), "--limit", "1"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 2


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
    """--all --format ndjson writes one JSON object per stored game."""
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


def test_a_fresh_user_without_a_database_is_told_how_one_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah games` before anything was played: one line saying nothing is stored yet, what makes the database and
    how to name another (before it named only the missing file)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("KALAH_SERVER", raising=False)
    assert main(["games"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kalah games: no arena database at {tmp_path / 'data'}") and err.count("\n") == 1
    assert "`kalah play` or `kalah serve` makes it" in err and "--db" in err


def test_record_refuses_conflicting_variant() -> None:
    """A record whose header names another variant than the flags is refused."""
    assert main(["record", "-H", "4", "# variant: kalah(6,4)\n3"]) == 2


async def test_games_and_export_from_a_server(serve: Serve, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """With --server the listing and the export come from a running server, without a hello."""
    db = tmp_path / "arena.sqlite3"
    games = await store_random_games(db, VARIANTS)
    running = await serve(db)
    assert await asyncio.to_thread(main, ["games", "--server", running.url, "--player", "bob"]) == 0
    out = capsys.readouterr().out
    assert all(f"m{i}" in out for i in range(3))
    assert await asyncio.to_thread(main, ["export", "m2", "--server", running.url]) == 0
    text = capsys.readouterr().out
    assert games[2].record() in text and "# variant: kalah(4,3,capture=empty,clockwise=on)" in text
    assert await asyncio.to_thread(main, ["export", "nope", "--server", running.url]) == 2


async def test_games_json_and_the_export_list_the_same_games_in_the_same_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`games --json` is one array, newest first, in the order `export --all` writes the games."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS)
    assert main(["games", "--db", str(db), "--json"]) == 0
    listed = [g["match_id"] for g in json.loads(capsys.readouterr().out)]
    assert sorted(listed) == ["m0", "m1", "m2"]
    assert main(["export", "--all", "--db", str(db)]) == 0
    exported = [line.split(": ")[1] for line in capsys.readouterr().out.splitlines() if line.startswith("# match:")]
    assert exported == listed
    assert main(["games", "--db", str(tmp_path / "empty.sqlite3"), "--json"]) == 2  # no such file: one line


async def test_export_all_reads_back_with_record(tmp_path: Path) -> None:
    """`kalah export --all | kalah record` replays every game to its stored result."""
    db = tmp_path / "arena.sqlite3"
    games = await store_random_games(db, VARIANTS)
    export = run([*KALAH, "export", "--all", "--db", str(db)])
    assert export.returncode == 0, export.stderr
    done = run([*KALAH, "record", "--json"], input=export.stdout)
    assert done.returncode == 0 and done.stderr == ""
    replays = {r["match_id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert {mid: (r["over"], r["result"]) for mid, r in replays.items()} == {
        f"m{i}": (True, game.result) for i, game in enumerate(games)}


async def test_table_aligns_long_ids_and_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every column starts at the same place on every line, however long the ids and names."""
    db = tmp_path / "arena.sqlite3"
    storage = await open_storage(db)
    try:
        await storage.write([op_player("p-a", "a", None), op_player("p-b", "someone-with-a-long-name", None)])
        for mid in ("m1", "lad-0123456789ab-00017"):
            await storage.write([op_create(mid, "kalah(6,4)", True, 0), op_join(mid, 0, "p-a", False),
                                 op_join(mid, 1, "p-b", True), op_action(mid, 0, 0, "1", (0, 0)),
                                 op_finish(mid, 0, None, EndReason.RESIGN)])
    finally:
        await storage.close()
    assert main(["games", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = {line.index("kalah(6,4)") for line in lines[1:]} | {lines[0].index("variant")}
    assert len(starts) == 1 and len(lines) == 3
    assert {line.index("someone") for line in lines[1:]} == {lines[0].index("north")}


async def test_server_from_the_environment(serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """$KALAH_SERVER names the server when no flag does; --db still reads a file; a URL argument gets a hint."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS)
    running = await serve(db)
    monkeypatch.setenv("KALAH_SERVER", running.url)
    assert await asyncio.to_thread(main, ["games", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    assert main(["games", "--db", str(tmp_path / "other.sqlite3")]) == 2
    assert "other.sqlite3" in capsys.readouterr().err
    assert main(["games", running.url]) == 2
    assert f"--server {running.url}" in capsys.readouterr().err
    monkeypatch.setenv("KALAH_SERVER", "localhost:8765")
    assert main(["games"]) == 2
    assert capsys.readouterr().err.startswith("kalah games: $KALAH_SERVER: 'localhost:8765' is not a server")


async def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`kalah games | head -1` and `kalah export --all | head -1` end without a traceback."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS * 40)
    for command in ("games --limit 500", "export --all"):
        done = run(["sh", "-c", f"{shlex.join(KALAH)} {command} --db {db} | head -1"])
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") == 1 and done.stderr == ""


async def test_reading_a_database_loads_neither_the_wire_models_nor_websockets(tmp_path: Path) -> None:
    """`kalah games --db` and `kalah export --db` read the file without importing the wire's pydantic models or
    websockets (only asking a server needs them): both commands start in about half the time."""
    db = tmp_path / "arena.sqlite3"
    await store_random_games(db, VARIANTS)
    script = ("import sys; from cli.main import main; "
              f"codes = [main(['games', '--db', {str(db)!r}]), main(['export', '--all', '--db', {str(db)!r}])]; "
              "print(codes, sorted(m for m in ('pydantic', 'protocol.messages', 'websockets') if m in sys.modules))")
    done = await asyncio.to_thread(run, [sys.executable, "-c", script])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[0, 0] []"

"""The bot ladder end to end over a real server: standings, stored games, interruption and resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli.ladder_runner import Ladder, LadderConfig, LadderState
from cli.main import main
from protocol import Game, Variant
from server.core.standings import compute
from server.storage import list_games
from tests.conftest import Serve
from tests.helpers.wire import OPERATOR, eventually


async def test_short_ladder_orders_bots_and_stores_every_game(serve: Serve, tmp_path: Path) -> None:
    """random < greedy < alphabeta:4 over paired openings; every game is a stored, replayable match."""
    db = tmp_path / "arena.sqlite3"
    config = LadderConfig(("random", "greedy", "alphabeta:4"), games=8, seed=3, concurrency=2, operator_token=OPERATOR)
    running = await serve(db)
    finished = await Ladder(config, LadderState(tmp_path / "state.jsonl"), lambda _: None).run(running.url)
    await running.close()
    assert len(finished) == 3 * 8
    table, h2h = compute([f.as_result() for f in finished], config.bots)
    assert [s.name for s in table] == ["alphabeta:4", "greedy", "random"]
    assert h2h["greedy", "random"][0] > h2h["greedy", "random"][2]
    stored = {g.match_id: g for g in list_games(db, limit=100)}
    assert set(stored) == {f.match_id for f in finished}
    for f in finished:
        game = stored[f.match_id]
        replay = Game.from_record(Variant.parse(game.variant), game.record)
        assert replay.over and replay.result == game.result == f.result
        assert game.record.startswith(f.game.opening_text)


async def test_interrupted_ladder_resumes_without_replaying(serve: Serve, tmp_path: Path) -> None:
    """A ladder stopped mid-way (server restarted too) finishes later; no game is lost or played twice."""
    db = tmp_path / "arena.sqlite3"
    state_path = tmp_path / "state.jsonl"
    config = LadderConfig(("random", "greedy", "alphabeta:2"), games=6, seed=5, concurrency=3, operator_token=OPERATOR)
    running = await serve(db)
    first = Ladder(config, LadderState(state_path), lambda _: None)
    task = asyncio.create_task(first.run(running.url))
    try:
        await eventually(lambda: len(first.results) >= 4 or task.done(), timeout=60, what="four finished games")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    await running.close()
    done_before = {k: f.match_id for k, f in first.results.items()}
    assert 4 <= len(done_before) < 18

    running = await serve(db)
    state = LadderState(state_path)
    assert set(state.finished) == set(done_before)
    second = Ladder(config, state, lambda _: None)
    finished = await second.run(running.url)
    await running.close()
    assert len(finished) == 18
    assert {f.game.key: f.match_id for f in finished if f.game.key in done_before} == done_before
    stored = list_games(db, limit=100)
    assert len(stored) == 18 and len({g.match_id for g in stored}) == 18


def test_ladder_command(tmp_path: Path, capsys: object) -> None:
    """`kalah ladder --db` plays on an embedded server and prints the standings table."""
    args = ["ladder", "--bots", "random,greedy", "--games", "2", "--db", str(tmp_path / "a.sqlite3"),
            "--state", str(tmp_path / "s.jsonl"), "-H", "4", "-s", "3"]
    assert main(args) == 0
    assert main(args) == 0  # everything already played: nothing new
    assert len(list_games(tmp_path / "a.sqlite3", limit=10)) == 2
    assert main(["ladder", "--bots", "random", "--db", str(tmp_path / "a.sqlite3")]) == 2
    assert main(["ladder", "--bots", "random,nosuchbot", "--games", "2", "--db", str(tmp_path / "b.sqlite3"),
                 "--state", str(tmp_path / "t.jsonl")]) == 2  # refused before anything starts, as a usage error
    assert not (tmp_path / "b.sqlite3").exists()

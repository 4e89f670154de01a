"""Restart and resume in-process, hosted bots off the event loop, storage reads, and layering."""

from __future__ import annotations

import ast
import asyncio
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from protocol import Action, Game, Position, Variant, parse_action
from server.app import start_server
from server.storage import default_db_path, fetch_game, list_games
from tests.test_server_play import action_msg
from tests.test_server_wire import Client, live_match

ROOT = Path(__file__).resolve().parent.parent


class SlowBot:
    """A stand-in bot whose `choose` blocks its thread for a while, like a C search holding no GIL."""

    @classmethod
    def make(cls, name: str) -> SlowBot:
        """The factory the server calls with a bot name."""
        return cls()

    async def choose(self, position: Position, budget_s: float) -> Action:
        """Block for 1 s, then play the last legal action."""
        time.sleep(1.0)
        return position.legal_actions()[-1]


async def test_restart_resumes_matches_clocks_and_bots(tmp_path: Path) -> None:
    """After a graceful restart, live matches resume: seats, events, clocks and the bot's turn."""
    db = tmp_path / "arena.sqlite3"
    running = await start_server(db, bot_factory=SlowBot.make)
    alice, bob, mid = await live_match(running.url, "kalah(6,4,clock=60+1)")
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    carol = await Client.open(running.url, "carol")
    await carol.send(type="create", variant="kalah(4,3)", seat="south", opponent="slow")
    bot_match = (await carol.expect("snapshot"))["match_id"]
    await running.close()

    running = await start_server(db, bot_factory=SlowBot.make)
    try:
        bob = await Client.open(running.url, "bob", token=bob.welcome["token"])
        assert bob.welcome["seats"] == [mid]
        await bob.send(type="sync", match_id=mid, since=0)
        kinds = [(await bob.expect("event"))["kind"] for _ in range(3)]
        assert kinds == ["joined", "joined", "action"]
        await bob.send(type="sync", match_id=mid)
        snap = await bob.expect("snapshot")
        assert snap["record"] == ["1"] and snap["clocks"]["running"] == "north"
        assert 55_000 < snap["clocks"]["north_ms"] <= 60_000 and snap["clocks"]["south_ms"] > 59_000
        carol = await Client.open(running.url, "carol", token=carol.welcome["token"])
        await carol.send(type="move", match_id=bot_match, ply=0, bin=1)
        await carol.expect("ack")
        await carol.send(type="sync", match_id=bot_match, since=0)
        reply = await carol.expect("event", where=lambda m: m["kind"] == "action" and m["side"] == "north",
                                   timeout=5)
        assert reply["ply"] == 1
    finally:
        await running.close()


async def test_hosted_bot_thinks_off_the_event_loop(tmp_path: Path) -> None:
    """While a bot blocks its worker thread, the server keeps answering other clients at once."""
    running = await start_server(tmp_path / "a.sqlite3", bot_factory=SlowBot.make)
    try:
        alice = await Client.open(running.url, "alice")
        await alice.send(type="create", variant="kalah(4,3)", seat="north", opponent="slow")
        await alice.expect("snapshot")
        await asyncio.sleep(0.1)
        other = await Client.open(running.url, "other")
        started = time.perf_counter()
        await other.send(type="list")
        await other.expect("matches")
        assert time.perf_counter() - started < 0.5
        event = await alice.expect("event", where=lambda m: m["kind"] == "action")
        assert event["side"] == "south" and event["ply"] == 0
    finally:
        await running.close()


async def test_real_hosted_bot_plays_a_whole_game(tmp_path: Path) -> None:
    """A match against the `bots/` random player runs to its end; unknown bot names are refused."""
    running = await start_server(tmp_path / "a.sqlite3")
    try:
        alice = await Client.open(running.url, "alice")
        await alice.send(type="create", variant="kalah(3,2)", seat="north", opponent="nosuchbot")
        assert await alice.error() == "unknown_bot"
        await alice.send(type="create", variant="kalah(3,2)", seat="north", opponent="random")
        snap = await alice.expect("snapshot")
        mid, game = snap["match_id"], Game(Variant.parse("kalah(3,2)"))
        while not game.over:
            if game.position.to_move.name == "NORTH":
                action = game.position.legal_actions()[0]
                await alice.send(**action_msg(action, mid, game.ply))
            event = await alice.expect("event", where=lambda m: m["kind"] == "action" and m["ply"] == game.ply)
            game.play(parse_action(event["action"]))
        over = await alice.expect("event", where=lambda m: m["kind"] == "game_over")
        assert over["result"] == game.result
    finally:
        await running.close()


async def test_stored_games_and_default_path(tmp_path: Path) -> None:
    """Finished games sync after a restart and list over the wire, and without a server; default DB per user."""
    db = tmp_path / "arena.sqlite3"
    running = await start_server(db)
    alice, _bob, mid = await live_match(running.url)
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await alice.send(type="resign", match_id=mid)
    over = await alice.expect("event", where=lambda m: m["kind"] == "game_over")
    await running.close()
    running = await start_server(db)
    try:
        again = await Client.open(running.url, "alice", token=alice.welcome["token"])
        assert again.welcome["seats"] == []
        await again.send(type="sync", match_id=mid, since=over["seq"] - 1)
        assert await again.expect("event") == over
        await again.send(type="games")
        listed = (await again.expect("game_list"))["games"]
        assert [(g["match_id"], g["record"], g["winner"]) for g in listed] == [(mid, ["1"], "bob")]
        await again.send(type="game", match_id=mid)
        record = (await again.expect("game_record"))["game"]
        assert (record["south"], record["north"], record["status"]) == ("alice", "bob", "finished")
        await again.send(type="game", match_id="nosuch")
        assert await again.error() == "unknown_match"
        await again.send(type="watch", match_id=mid)
        snap = await again.expect("snapshot")
        assert (snap["status"], snap["reason"], snap["winner"]) == ("finished", "resign", "north")
        assert snap["record"] == ["1"]
    finally:
        await running.close()
    game = fetch_game(db, mid)
    assert game is not None
    assert (game.record, game.winner, game.reason, game.result, game.ply) == ("1", "bob", "resign", None, 1)
    assert game.finished_at is not None and game.finished_at >= game.created_at
    assert [g.match_id for g in list_games(db)] == [mid]
    assert list_games(db, status="live") == [] and fetch_game(db, "nosuch") is None
    with closing(sqlite3.connect(db)) as conn:
        ratings = dict(conn.execute("SELECT p.name, r.rating FROM ratings r JOIN players p ON p.id = r.player_id"))
    assert ratings["bob"] > 1500 > ratings["alice"]
    path = default_db_path()
    assert path.name == "arena.sqlite3" and path.parent.name == "kalah-arena"


def test_match_logic_imports_no_io() -> None:
    """The sans-I/O match and clocks import no socket, storage, event loop or time source."""
    forbidden = {"websockets", "aiosqlite", "sqlite3", "asyncio", "socket", "time", "server.storage",
                 "server.app", "server.arena"}
    for name in ("match.py", "clocks.py", "errors.py"):
        tree = ast.parse((ROOT / "server" / name).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not {m for m in imported if m in forbidden or m.split(".")[0] in forbidden}, name

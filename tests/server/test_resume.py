"""Restart and resume in-process, hosted bots off the event loop, storage reads, and layering."""

from __future__ import annotations

import ast
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

from protocol import Action, Game, Position, Variant, parse_action
from server.assembly import RunningServer
from server.storage import default_db_path, fetch_game, list_games
from tests.conftest import Serve
from tests.helpers.paths import ROOT_DIR
from tests.helpers.wire import Client, FakeClock, FirstLegal, action_msg, eventually, is_game_over, live_match

ROOT = ROOT_DIR


class BlockingBot:
    """A stand-in bot whose `choose` holds its thread until the test lets go, like a C search holding no GIL."""

    def __init__(self) -> None:
        self.thinking = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()

    def make(self, name: str) -> BlockingBot:
        """The factory the server calls with a bot name: this one bot, whatever the name."""
        return self

    def decide(self, position: Position, budget_s: float) -> Action:
        """Block the calling thread until released, then play the last legal action."""
        self.thinking.set()
        self.release.wait(30)
        self.done.set()
        return position.legal_actions()[-1]

    async def choose(self, position: Position, budget_s: float) -> Action:
        """The asynchronous form of `decide` (blocking just the same)."""
        return self.decide(position, budget_s)


async def test_restart_resumes_matches_clocks_and_bots(serve: Serve, clock: FakeClock) -> None:
    """After a graceful restart, live matches resume: seats, events, the clocks as stored (the time the server
    was down is charged to no one) and the bot's turn."""
    running = await serve(bot_factory=FirstLegal.make, clock=clock)
    alice, bob, mid = await live_match(running.url, "kalah(6,4,clock=60+1)")
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    carol = await Client.open(running.url, "carol")
    bot_match = (await carol.request("snapshot", type="create", variant="kalah(4,3)", seat="south",
                                     opponent="first"))["match_id"]
    await running.close()

    clock.advance(600)
    running = await serve(bot_factory=FirstLegal.make, clock=clock)
    bob = await Client.open(running.url, "bob", token=bob.welcome["token"])
    assert bob.welcome["seats"] == [mid]
    caught = await bob.request("catch_up", type="sync", match_id=mid, since=0)
    assert caught["seq"] == 3 and [e["kind"] for e in caught["events"]] == ["joined", "joined", "action"]
    clock.advance(2.5)
    snap = await bob.request("snapshot", type="sync", match_id=mid)
    assert snap["record"] == ["1"] and snap["clocks"]["running"] == "north"
    assert (snap["clocks"]["south_ms"], snap["clocks"]["north_ms"]) == (61_000, 57_500)
    carol = await Client.open(running.url, "carol", token=carol.welcome["token"])
    await carol.send(type="move", match_id=bot_match, ply=0, bin=1)
    await carol.expect("ack")
    caught = await carol.request("catch_up", type="sync", match_id=bot_match, since=0)
    answers = [e for e in caught["events"] if e["kind"] == "action" and e["side"] == "north"]
    reply = answers[0] if answers else await carol.expect("event", where=lambda m: m["kind"] == "action")
    assert reply["ply"] == 1 and reply["side"] == "north"


async def test_hosted_bot_thinks_off_the_event_loop(serve: Serve) -> None:
    """While a bot blocks its worker thread, the server keeps answering other clients."""
    bot = BlockingBot()
    running = await serve(bot_factory=bot.make)
    alice = await Client.open(running.url, "alice")
    try:
        await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="north", opponent="blocking")
        await eventually(bot.thinking.is_set, what="the bot starting to think")
        other = await Client.open(running.url, "other")
        listing = (await other.request("matches", type="list"))["matches"]
        assert not bot.done.is_set()  # answered while the bot's thread was still held
        assert [m["north"] for m in listing] == ["alice"]
    finally:
        bot.release.set()
    event = await alice.expect("event", where=lambda m: m["kind"] == "action")
    assert event["side"] == "south" and event["ply"] == 0


async def test_real_hosted_bot_plays_a_whole_game(arena: RunningServer) -> None:
    """A match against the `bots/` random player runs to its end; unknown bot names are refused."""
    alice = await Client.open(arena.url, "alice")
    await alice.send(type="create", variant="kalah(3,2)", seat="north", opponent="nosuchbot")
    assert await alice.error() == "unknown_bot"
    snap = await alice.request("snapshot", type="create", variant="kalah(3,2)", seat="north", opponent="random")
    mid, game = snap["match_id"], Game(Variant.parse("kalah(3,2)"))
    while not game.over:
        if game.position.to_move.name == "NORTH":
            action = game.position.legal_actions()[0]
            await alice.send(**action_msg(action, mid, game.ply))
        event = await alice.expect("event", where=lambda m: m["kind"] == "action" and m["ply"] == game.ply)
        game.play(parse_action(event["action"]))
    over = await alice.expect("event", where=is_game_over)
    assert over["result"] == game.result


async def test_stored_games_and_default_path(serve: Serve, tmp_path: Path) -> None:
    """Finished games sync after a restart and list over the wire, and without a server; default DB per user."""
    db = tmp_path / "arena.sqlite3"
    running = await serve(db)
    alice, _bob, mid = await live_match(running.url)
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await alice.send(type="resign", match_id=mid)
    over = await alice.expect("event", where=is_game_over)
    await running.close()
    running = await serve(db)
    again = await Client.open(running.url, "alice", token=alice.welcome["token"])
    assert again.welcome["seats"] == []
    caught = await again.request("catch_up", type="sync", match_id=mid, since=over["seq"] - 1)
    assert caught["events"] == [over] and caught["seq"] == over["seq"]
    listed = (await again.request("game_list", type="games"))["games"]
    assert [(g["match_id"], g["record"], g["winner"]) for g in listed] == [(mid, ["1"], "bob")]
    record = (await again.request("game_record", type="game", match_id=mid))["game"]
    assert (record["south"], record["north"], record["status"]) == ("alice", "bob", "finished")
    await again.send(type="game", match_id="nosuch")
    assert await again.error() == "unknown_match"
    snap = await again.request("snapshot", type="watch", match_id=mid)
    assert (snap["status"], snap["reason"], snap["winner"]) == ("finished", "resign", "north")
    assert snap["record"] == ["1"]
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
                 "server.assembly", "server.core.arena"}
    for name in ("match.py", "clocks.py", "errors.py"):
        tree = ast.parse((ROOT / "server" / "core" / name).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not {m for m in imported if m in forbidden or m.split(".")[0] in forbidden}, name

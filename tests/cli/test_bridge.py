"""`kalah bridge`: a standalone KGP engine (a subprocess on stdin/stdout) plays in an in-process arena.

The bridge runs in-process (or as the `kalah` command in a subprocess) against a real server;
the engine is `tests/helpers/agents/kgp_stdio_engine.py`, which imports nothing of the project.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from cli.bridge_loop import Bridge
from cli.bridge_options import BridgeError, BridgeOptions
from cli.main import main
from protocol import Position, Variant
from server.assembly import RunningServer
from server.storage import StoredGame, list_games
from tests.conftest import Serve
from tests.helpers.paths import ROOT_DIR
from tests.helpers.processes import KALAH, spawn
from tests.helpers.wire import Client, FirstLegal, eventually

ROOT = ROOT_DIR
AGENT = ROOT / "tests" / "helpers" / "agents" / "kgp_stdio_engine.py"


def engine(*args: str) -> str:
    """The command line of the test engine with `args`."""
    return shlex.join([sys.executable, str(AGENT), *args])


def stored(db: Path, name: str, count: int) -> list[StoredGame]:
    """The finished stored games of `name` once there are `count` of them (none before)."""
    games = list_games(db, player=name)
    return games if len(games) >= count else []


async def bridge(running: RunningServer, lines: list[str], **options: object) -> int:
    """Run a bridge against `running` until its games are played; its status (what it says goes to `lines`)."""
    opts = BridgeOptions(server=running.url, engine=str(options.pop("engine", engine())), **options)  # type: ignore[arg-type]
    return await asyncio.wait_for(Bridge(opts, say=lines.append).run(), 60)


async def test_plays_games_against_a_hosted_bot(serve: Serve, tmp_path: Path) -> None:
    """Two games against the hosted bot, each stored under the engine's own name with a board result."""
    running = await serve(bot_factory=FirstLegal.make)
    lines: list[str] = []
    status = await bridge(running, lines, find="bot", bot="first", games=2)
    assert status == 0, lines
    games = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:stdio-engine", 2),
                             what="two stored games")
    assert all(g.reason in ("empty", "majority") and "bot:first" in (g.south, g.north) for g in games)
    assert [line.split(":")[0] for line in lines if line.startswith("game ") and "(" in line][-1] == "game 2"
    welcome = "playing as engine:stdio-engine; to keep this identity, pass --token "
    assert any(line.startswith(welcome) for line in lines)


async def test_two_bridge_commands_seek_and_meet(serve: Serve, tmp_path: Path) -> None:
    """Two `kalah bridge` processes seeking the same variant are paired, play, and exit 0."""
    running = await serve()

    async def command(name: str) -> asyncio.subprocess.Process:
        return await spawn(*KALAH, "bridge", "--server", running.url, "--engine", engine(),
                           "--name", name, "--seek", "--games", "1",
                           stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

    procs = [await command("left"), await command("right")]
    outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 60)
    assert [p.returncode for p in procs] == [0, 0], [err.decode()[-400:] for _, err in outputs]
    out = outputs[0][0].decode()
    assert "game 1: " in out and "against engine:right" in out
    [game] = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:left", 1), what="the stored game")
    assert {game.south, game.north} == {"engine:left", "engine:right"}


async def test_a_dropped_connection_is_resumed_and_the_game_goes_on(serve: Serve, tmp_path: Path) -> None:
    """The server side of the bridge's websocket is cut mid-game (a timed one): the bridge reconnects with
    its token, resyncs, and the game is played to its end on the board."""
    running = await serve()
    alice = await Client.open(running.url, "alice")
    timed = "kalah(6,4,clock=60+0)"
    snap = await alice.request("snapshot", type="create", variant=timed, seat="south", rated=False)
    match_id, variant = snap["match_id"], Variant.parse(timed)
    lines: list[str] = []
    task = asyncio.create_task(bridge(running, lines, find="accept", poll_s=0.05, name="remote", variant=timed))
    await alice.expect("event", where=lambda m: m["kind"] == "joined" and m["side"] == "north")
    position, dropped = Position.initial(variant), False
    while True:
        if position.to_move == 0 and not position.end:
            await alice.send(type="move", match_id=match_id, ply=position.ply, bin=position.legal_bins()[0])
        event = await alice.expect("event", timeout=20, where=lambda m: m["kind"] in ("action", "game_over"))
        if event["kind"] == "game_over":
            break
        position = Position.from_fen(variant, event["position"])
        if event["side"] == "north" and not dropped:
            [session] = [s for p in running.admission.peers.values() for s in p.sessions if s.name == "engine:remote"]
            assert session.ws.transport is not None
            session.ws.transport.abort()
            dropped = True
    assert event["reason"] in ("empty", "majority")
    assert await task == 0, lines
    assert "connection lost: reconnecting (the game waits on the server; the clock runs)" in lines
    assert sum(line.startswith("connected to ") for line in lines) == 2
    [game] = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:remote", 1), what="the stored game")
    assert game.reason in ("empty", "majority") and game.north == "engine:remote"
    await alice.close()


async def test_an_open_match_of_the_bridge_is_joined_and_played(serve: Serve, tmp_path: Path) -> None:
    """With `--open` the bridge creates an open match; a person who joins it from the lobby plays the engine."""
    running = await serve()
    lines: list[str] = []
    task = asyncio.create_task(bridge(running, lines, find="open", seat="south", rated=False))
    bob = await Client.open(running.url, "bob")

    async def open_match() -> str | None:
        listing = await bob.request("matches", type="list")
        return next((m["match_id"] for m in listing["matches"] if m["south"] == "engine:stdio-engine"), None)

    match_id = await eventually(open_match, what="the bridge's open match")
    await bob.request("snapshot", type="join", match_id=match_id)
    variant = Variant.parse("kalah(6,4)")
    while True:
        event = await bob.expect("event", timeout=20, where=lambda m: m["kind"] in ("action", "game_over"))
        if event["kind"] == "game_over":
            break
        position = Position.from_fen(variant, event["position"])
        if position.to_move == 1 and not position.end:
            await bob.send(type="move", match_id=match_id, ply=position.ply, bin=position.legal_bins()[0])
    assert await task == 0, lines
    assert f"game 1: {match_id} as south against (open seat), kalah(6,4)" in lines
    assert event["reason"] in ("empty", "majority")
    await bob.close()


async def test_an_illegal_move_resigns_and_stops_the_bridge(serve: Serve, tmp_path: Path) -> None:
    """With `--on-fault stop`, an illegal move resigns the game, says why in one line, and ends with status 1."""
    running = await serve(bot_factory=FirstLegal.make)
    lines: list[str] = []
    status = await bridge(running, lines, engine=engine("--fault", "illegal"), find="bot", bot="first", games=3,
                          seat="south", on_fault="stop", move_s=0.2)
    assert status == 1
    assert "game 1: the engine sent an illegal move (99): resigned; stopping" in lines
    [game] = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:stdio-engine", 1), what="the game")
    assert game.reason == "resign" and game.winner == "bot:first"


async def test_a_crashed_engine_is_restarted_and_play_goes_on(serve: Serve, tmp_path: Path) -> None:
    """The engine exits in game 1: that game is resigned, the engine restarted, and game 2 is played out."""
    running = await serve(bot_factory=FirstLegal.make)
    lines: list[str] = []
    faulty = engine("--fault", "crash", "--once", str(tmp_path / "crashed"))
    status = await bridge(running, lines, engine=faulty, find="bot", bot="first", games=2, seat="south")
    assert status == 0, lines
    assert "game 1: the engine exited (status 3): resigned; restarting the engine" in lines
    games = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:stdio-engine", 2), what="two games")
    assert sorted(str(g.reason) for g in games) in (["empty", "resign"], ["majority", "resign"])


async def test_an_engine_with_no_move_gets_a_random_legal_one_inside_the_clock(serve: Serve, tmp_path: Path) -> None:
    """On a 1 s per-move clock, an engine that never moves is stopped inside the margin and a random legal
    move is played for it (KGP's rule): the game ends on the board, never on time."""
    running = await serve(bot_factory=FirstLegal.make)
    lines: list[str] = []
    status = await bridge(running, lines, engine=engine("--fault", "silent"), find="bot", bot="first", games=1,
                          variant="kalah(6,4,clock=1/move)", margin_s=0.9, seat="south")
    assert status == 0, lines
    assert any("the engine sent no move in 0." in line and line.endswith("a random legal move") for line in lines)
    [game] = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:stdio-engine", 1), what="the game")
    assert game.reason in ("empty", "majority")


async def test_a_hung_engine_is_taken_for_gone_and_its_game_resigned(serve: Serve, tmp_path: Path) -> None:
    """An engine that stops reading gets no answer to its ping: its game is resigned, the engine restarted."""
    running = await serve(bot_factory=FirstLegal.make)
    lines: list[str] = []
    hung = engine("--fault", "hang", "--once", str(tmp_path / "hung"))
    status = await bridge(running, lines, engine=hung, find="bot", bot="first", games=2, seat="south", move_s=0.05,
                          pong_s=0.2)
    assert status == 0, lines
    assert "game 1: the engine stopped: received no pong within 0.2 s: resigned; restarting the engine" in lines
    games = await eventually(lambda: stored(tmp_path / "arena.sqlite3", "engine:stdio-engine", 2), what="two games")
    assert sorted(str(g.reason) for g in games) in (["empty", "resign"], ["majority", "resign"])


async def test_a_seat_held_at_the_start_is_resumed(serve: Serve, tmp_path: Path) -> None:
    """Started with the token of an identity seated in a live match, the bridge plays that match first."""
    running = await serve()
    alice = await Client.open(running.url, "alice")
    snap = await alice.request("snapshot", type="create", variant="kalah(6,4)", seat="south", rated=False)
    seated = await Client.open(running.url, "seated")
    await seated.request("snapshot", type="join", match_id=snap["match_id"])
    token = seated.welcome["token"]
    await seated.close()
    lines: list[str] = []
    task = asyncio.create_task(bridge(running, lines, token=token, find="seek"))
    variant = Variant.parse("kalah(6,4)")
    position = Position.initial(variant)
    while True:
        if position.to_move == 0 and not position.end:
            await alice.send(type="move", match_id=snap["match_id"], ply=position.ply, bin=position.legal_bins()[0])
        event = await alice.expect("event", timeout=20, where=lambda m: m["kind"] in ("action", "game_over"))
        if event["kind"] == "game_over":
            break
        position = Position.from_fen(variant, event["position"])
    assert await task == 0, lines
    assert f"game 1: {snap['match_id']} as north against alice, kalah(6,4)" in lines
    assert not any(line.startswith("playing as") for line in lines)  # a known identity: no token to show
    await alice.close()


async def test_an_engine_that_cannot_start_is_one_line(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """A command that does not exist: `kalah bridge` says so in one line and exits 1, without connecting."""
    running = await serve()
    with pytest.raises(BridgeError, match="cannot start the engine"):
        await bridge(running, [], engine="/nonexistent/kgp-engine")
    status = await asyncio.to_thread(main, ["bridge", "--server", running.url, "--engine", "/nonexistent/kgp-engine"])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and err.startswith("kalah bridge: cannot start the engine")

"""Standalone KGP agents as processes: a good one and broken ones; each failure is stored, none disturbs others."""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from pathlib import Path

from protocol import Position, Variant
from server.front.outside_engines.gateway import Gateway
from server.front.outside_engines.results import forfeits
from server.storage import StoredGame, list_games
from tests.conftest import Serve
from tests.helpers import processes
from tests.helpers.agents.kgp_client import gateway, port_of
from tests.helpers.paths import ROOT_DIR
from tests.helpers.wire import Client, action_msg, eventually, live_match

AGENTS = ROOT_DIR / "tests" / "helpers" / "agents"


async def spawn(script: str, *args: str) -> asyncio.subprocess.Process:
    """Start an agent script (it imports nothing of the project) with this Python."""
    return await processes.spawn(sys.executable, str(AGENTS / script), *args,  # killed after the test if left
                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


def game_of(db: Path, name: str) -> StoredGame | None:
    """The one finished stored game of engine `name`, if there is one (and only one)."""
    games = list_games(db, player=name)
    return games[0] if len(games) == 1 else None


def more_games(gateway_: Gateway, than: int) -> bool:
    """Whether the gateway has started more than `than` games."""
    return gateway_.games > than


async def person_moves(south: Client, north: Client, match_id: str, game: list[Position]) -> None:
    """One move by the side to move in the people's match, acknowledged (they play the first legal house)."""
    position = game[-1]
    player = south if position.to_move == 0 else north
    action = position.legal_actions()[0]
    await player.send(**action_msg(action, match_id, position.ply))
    ack = await player.expect("ack")
    assert ack["ply"] == position.ply
    game.append(position.apply(action))


async def test_a_standalone_agent_plays_a_stored_rated_game(serve: Serve, tmp_path: Path) -> None:
    """The test agent script connects over TCP, plays a hosted bot, and leaves after its result."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve)
    agent = await spawn("kgp_agent.py", "127.0.0.1", str(port_of(running)), "--name", "script",
                        "--token", "script-token", "--games", "1")
    out, err = await asyncio.wait_for(agent.communicate(), 30)
    assert agent.returncode == 0, err.decode()
    assert "< 2 kgp 1 1 0" in out.decode()
    game = await eventually(lambda: game_of(db, "engine:script"), what="the script's stored game")
    assert game is not None and game.reason in ("empty", "majority") and "bot:first" in (game.south, game.north)
    assert len(running.arena.ratings) == 2  # the engine and the bot


async def test_broken_agents_lose_with_their_reason_and_disturb_no_one(serve: Serve, tmp_path: Path) -> None:
    """Garbage and a 20 KiB line are shrugged off; an illegal move, silence on a ping and a vanished
    agent each lose by forfeit with the reason stored; meanwhile a people's match and a good agent's
    game go on undisturbed."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve, kgp_variant="kalah(6,4)", kgp_move_s=1.0, kgp_pong_s=1.0)
    port = str(port_of(running))
    south, north, match_id = await live_match(running.url)
    people = [Position.initial(Variant.parse("kalah(6,4)"))]
    procs = []
    gateway_ = running.kgp
    assert gateway_ is not None
    for fault in ("garbage", "illegal", "hang", "vanish"):
        started = gateway_.games
        procs.append(await spawn("broken_agent.py", "127.0.0.1", port, fault, "--name", fault,
                                 "--token", f"{fault}-token"))
        await eventually(partial(more_games, gateway_, started), timeout=10, what=f"the {fault} agent's game")
        await person_moves(south, north, match_id, people)
    good = await spawn("kgp_agent.py", "127.0.0.1", port, "--name", "good", "--token", "good-token")
    await person_moves(south, north, match_id, people)
    outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in [*procs, good])), 60)
    assert all(p.returncode == 0 for p in [*procs, good]), [err.decode()[-500:] for _, err in outputs]

    garbage_errors = [line for line in outputs[0][0].decode().splitlines() if " error " in line]
    assert len(garbage_errors) >= 8 and any("bytes ignored" in line for line in garbage_errors)
    for name in ("engine:garbage", "engine:good"):
        game = await eventually(partial(game_of, db, name), what=f"the finished game of {name}")
        assert game is not None and game.reason in ("empty", "majority"), (name, game)
    why = {}
    for fault in ("illegal", "hang", "vanish"):
        game = await eventually(partial(game_of, db, f"engine:{fault}"), what=f"the {fault} agent's forfeit")
        assert game is not None and game.reason == "forfeit" and game.winner != f"engine:{fault}", game
        [forfeit] = forfeits(db, game.match_id)
        why[fault] = forfeit.detail
    assert why["illegal"].startswith("illegal move 7: pits are numbered 1 to 6")
    assert why["hang"] == "connection closed (received no pong within 1 s)"
    assert why["vanish"] == "connection closed (disconnected)"

    await person_moves(south, north, match_id, people)
    snapshot = await south.request("snapshot", type="sync", match_id=match_id)
    assert snapshot["status"] == "live" and snapshot["position"] == people[-1].fen()
    for client in (south, north):
        assert client.received("error") == []
        await client.close()

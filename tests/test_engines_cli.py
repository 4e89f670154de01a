"""`kalah engine BOT --server HOST:PORT`: our own bots, as KGP agents in their own processes, play on our gateway."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cli.engine import server_address
from server.storage import list_games
from tests.agents.kgp_client import port_of
from tests.conftest import Serve

ROOT = Path(__file__).resolve().parent.parent


async def kalah_engine(*args: str) -> asyncio.subprocess.Process:
    """Start `kalah engine ARGS...` as a process."""
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "cli.main", "engine", *args, cwd=ROOT,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_perfect_and_alphabeta_play_each_other_through_kalah_engine(serve: Serve, tmp_path: Path) -> None:
    """Two `kalah engine` processes (perfect and alphabeta:4) are paired on the gateway, play two rated games,
    report each result, and leave; the stored games are won on the board, never forfeited."""
    db = tmp_path / "arena.sqlite3"
    running = await serve(kgp_port=0, kgp_pair_wait_s=60, kgp_variant="kalah(4,3,clock=5/move)")
    server = f"127.0.0.1:{port_of(running)}"
    perfect = await kalah_engine("perfect", "--server", server, "--token", "perfect-token", "--games", "2",
                                 "--think", "0.2")
    alphabeta = await kalah_engine("alphabeta:4", "--server", server, "--token", "alphabeta-token",
                                   "--games", "2", "--think", "0.2")
    outputs = await asyncio.wait_for(asyncio.gather(perfect.communicate(), alphabeta.communicate()), 90)
    for proc, (out, err) in zip((perfect, alphabeta), outputs, strict=True):
        assert proc.returncode == 0, err.decode()
        assert [line.split()[0] for line in out.decode().splitlines()] == ["game", "result", "game", "result"]
    games = list_games(db)
    assert len(games) == 2
    for game in games:
        assert {game.south, game.north} == {"engine:perfect", "engine:alphabeta-4"}
        assert game.reason in ("empty", "majority") and game.record
    assert len(running.arena.ratings) == 2


async def test_kalah_engine_refuses_unknown_bots_and_addresses() -> None:
    """A bot id that is not canonical, or a server that is not HOST:PORT, ends with status 2 and one line."""
    for args in (("alphabeta", "--server", "127.0.0.1:2671"), ("random", "--server", "localhost")):
        proc = await kalah_engine(*args)
        _, err = await proc.communicate()
        assert proc.returncode == 2, err.decode()
        assert err.decode().startswith("kalah engine: ") and err.decode().count("\n") == 1


def test_server_address_parses_host_and_port() -> None:
    """`HOST:PORT` with a name, an IPv4 or a bracketed IPv6 address; anything else is a ValueError."""
    assert server_address("127.0.0.1:2671") == ("127.0.0.1", 2671)
    assert server_address("kalah.example:80") == ("kalah.example", 80)
    assert server_address("[::1]:2671") == ("::1", 2671)
    for bad in ("localhost", ":2671", "host:0", "host:port", "host:70000"):
        with pytest.raises(ValueError):
            server_address(bad)

"""`kalah engine BOT --server HOST:PORT`: our own bots, as KGP agents in their own processes, play on our gateway."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from cli.engine import server_address
from server.storage import list_games
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import port_of
from tests.helpers.processes import KALAH, spawned


def kalah_engine(*args: str) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
    """`kalah engine ARGS...` as a process (killed on the way out if it has not ended)."""
    return spawned(*KALAH, "engine", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_perfect_and_alphabeta_play_each_other_through_kalah_engine(serve: Serve, tmp_path: Path) -> None:
    """Two `kalah engine` processes (perfect and alphabeta:4) are paired on the gateway, play two rated games,
    report each result, and leave; the stored games are won on the board, never forfeited."""
    db = tmp_path / "arena.sqlite3"
    running = await serve(kgp_port=0, kgp_pair_wait_s=60, kgp_variant="kalah(4,3,clock=5/move)")
    server = f"127.0.0.1:{port_of(running)}"
    async with (kalah_engine("perfect", "--server", server, "--token", "perfect-token", "--games", "2",
                             "--think", "0.2") as perfect,
                kalah_engine("alphabeta:4", "--server", server, "--token", "alphabeta-token",
                             "--games", "2", "--think", "0.2") as alphabeta):
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
    for args in (("alphabeta", "--server", "127.0.0.1:2671"), ("random", "--server", "localhost"),
                 ("random", "--server", "ws://:8765/kgp")):
        async with kalah_engine(*args) as proc:
            _, err = await asyncio.wait_for(proc.communicate(), 60)
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


async def test_kalah_engine_plays_over_the_kgp_websocket(serve: Serve, tmp_path: Path) -> None:
    """`kalah engine --server ws://HOST:PORT/kgp` (as docs/engines.md offers it) plays a stored game on the gateway's
    websocket; without a path it goes to /kgp as well."""
    running = await serve(kgp_port=0, kgp_pair_wait_s=0.2, kgp_variant="kalah(3,2,clock=5/move)")
    for url in (f"{running.url}/kgp", running.url):
        async with kalah_engine("greedy", "--server", url, "--games", "1", "--think", "0.1") as proc:
            out, err = await asyncio.wait_for(proc.communicate(), 90)
        assert proc.returncode == 0, err.decode()
        assert [line.split()[0] for line in out.decode().splitlines()] == ["game", "result"]
    games = list_games(tmp_path / "arena.sqlite3")
    assert len(games) == 2 and all(f"{g.south} {g.north}".startswith("engine:greedy")
                                   or " engine:greedy" in f"{g.south} {g.north}" for g in games)


async def test_kalah_engine_on_a_port_that_is_not_kgp_says_so_in_one_line(serve: Serve) -> None:
    """The websocket port given as HOST:PORT (it sends no greeting), a websocket path that is not KGP, and a closed
    port each end `kalah engine` with status 1 and one line saying what answered and where KGP is."""
    running = await serve(kgp_port=0)
    cases = {f"127.0.0.1:{running.port}": "sent no KGP greeting within 5 s (KGP is on the port of `kalah serve "
                                          "--kgp-port` (TCP) or at ws://HOST:PORT/kgp",
             f"{running.url}/elsewhere": "sent no KGP greeting within 5 s (is the path the server's KGP endpoint",
             "127.0.0.1:1": "cannot play on 127.0.0.1:1: connection refused"}

    async def run(server: str) -> tuple[int | None, str]:
        """Its exit status and what it said on stderr."""
        async with kalah_engine("random", "--server", server) as proc:
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode, err.decode()

    ended = await asyncio.gather(*map(run, cases))  # at once: two of them wait out the greeting's 5 s
    for (status, err), why in zip(ended, cases.values(), strict=True):
        assert status == 1 and err.count("\n") == 1, err
        assert err.startswith("kalah engine: ") and why in err

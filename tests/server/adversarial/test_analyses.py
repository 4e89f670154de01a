"""An attacker with many addresses (loopback 127.1.x.y stands in for them; honest clients use 127.0.0.2) filling the
analysis queue: analyses are shared by network before address, and players who played here come before fresh
identities."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from protocol import Game, Variant
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, Json, action_msg, attacker, eventually, live_match

POSITION = "6,6,6,6,6,6,0,6,6,6,6,6,6,0 S 0 -"
"""Kalah(6,6)'s start: no book holds it and no proof fits in a short budget, so an analysis of it takes its time."""


async def ask(client: Client, budget_ms: int = 150) -> Json:
    """One analysis request of Kalah(6,6)'s start and its answer (an analysis or an error)."""
    await client.send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=budget_ms)
    while True:
        reply = await client.next(30)
        if reply["type"] in ("analysis", "error"):
            return reply


async def test_analyses_are_shared_fairly_across_the_addresses_of_a_network(serve: Serve) -> None:
    """Addresses of one /24 that keep the analysis queue full do not starve a newcomer of that /24 (so the networks'
    turns do not help it): it takes the place of the address that used the most analysis time lately (refused
    `too_many` with a retry hint) and is served next."""
    server = await serve()
    server.router.analyst.max_queued = 4
    stop = asyncio.Event()
    served: dict[int, int] = {}
    refused: list[Json] = []

    async def hog(i: int) -> None:
        """Keep one short analysis in flight from the `i`-th address, asking again at once."""
        client = await Client.open(server.url, f"hog{i}", source=attacker(i))
        with contextlib.suppress(ConnectionClosed):
            while not stop.is_set():
                reply = await ask(client)
                if reply["type"] == "analysis":
                    served[i] = served.get(i, 0) + 1
                else:
                    refused.append(reply)
                    await asyncio.sleep(0.02)
        await client.close()

    hogs = [asyncio.create_task(hog(i)) for i in range(6)]
    try:
        await eventually(lambda: len(served) == 6, timeout=30, what="every hog to have used some analysis time")
        newcomer = await Client.open(server.url, "newcomer", source=attacker(6))
        answer = await ask(newcomer)
        assert answer["type"] == "analysis", answer
        await newcomer.close()
    finally:
        stop.set()
        await asyncio.gather(*hogs)
    assert refused and all(r["code"] == "too_many" and isinstance(r["retry_ms"], int) for r in refused)


@pytest.mark.parametrize("networks", [1, 6])
async def test_analyses_are_shared_by_network_before_address(serve: Serve, networks: int) -> None:
    """12 addresses that fill the analysis queue and used more analysis time in all than an honest client's network
    (but each less than it) make room for it when they share one /24 (its newcomer's request takes the place of one
    of theirs, refused `too_many` with a retry hint); spread over 6 networks, each of which used less than the
    honest one but had its second analysis already, they make room for it too: each network has one analysis a turn
    (before, they kept their places and the honest request was refused)."""
    server = await serve()
    analyst = server.router.analyst
    analyst.max_queued = 4
    analyst.pressure = lambda: False  # not pacing: on a busy machine a late loop would cut the running one to 250 ms
    honest = await Client.open(server.url, "honest", source=HONEST)
    # each analysis is charged its wall time, which a loaded machine stretches for each one: when this asked 300 ms,
    # two 60 ms analyses once outweighed it; with 600 ms each network of two stays below unless each run stretched by
    # more than 480 ms
    assert (await ask(honest, 600))["type"] == "analysis"
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(i // networks, network=10 + i % networks))
            for i in range(12)]
    for hog in hogs:  # 12 x 60 ms: more than the honest network's 600 ms in all, less on each network of 2
        assert (await ask(hog, 60))["type"] == "analysis"
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1500)  # alone: all of it
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    waiting = [asyncio.create_task(ask(hog, 60)) for hog in hogs[1:4]]
    await eventually(lambda: analyst.pending == 4, what="the queue to be full")
    answer = await ask(honest, 60)
    replies = await asyncio.gather(*waiting)
    refusals = [r for r in (answer, *replies) if r["type"] == "error"]
    assert len(refusals) == 1 and refusals[0]["code"] == "too_many" and isinstance(refusals[0]["retry_ms"], int)
    assert answer["type"] == "analysis", answer
    assert (await hogs[0].next(30))["type"] == "analysis"
    for client in (honest, *hogs):
        await client.close()


async def test_a_new_person_is_served_before_any_network_has_a_second_analysis(serve: Serve) -> None:
    """20 addresses in 20 networks keep the analysis queue full with fresh identities asking again at once, and the
    honest network used more analysis time lately than each of theirs: a new person of that network is served before
    any of those networks has a second analysis after it asked (before: refused `too_many`, then kept waiting for as
    long as their networks had used less)."""
    server = await serve()
    server.router.analyst.pressure = lambda: False  # not pacing: this is about the order, not the pace
    honest = await Client.open(server.url, "honest", source=HONEST)
    assert (await ask(honest, 1500))["type"] == "analysis"  # alone: the honest network used 1.5 s lately
    stop = asyncio.Event()
    served: dict[int, int] = {}

    async def hog(i: int) -> None:
        """Keep one short analysis in flight from network 127.(10 + i).0.0, asking again at once."""
        client = await Client.open(server.url, f"hog{i}", source=attacker(0, network=10 + i))
        with contextlib.suppress(ConnectionClosed):
            while not stop.is_set():
                if (await ask(client))["type"] == "analysis":
                    served[i] = served.get(i, 0) + 1
                else:
                    await asyncio.sleep(0.02)
        await client.close()

    hogs = [asyncio.create_task(hog(i)) for i in range(20)]
    try:
        await eventually(lambda: len(served) == 20, timeout=60, what="every network to have had an analysis")
        newcomer = await Client.open(server.url, "newcomer", source="127.0.0.3")
        before = dict(served)
        answer = await ask(newcomer)
        after = dict(served)
        await newcomer.close()
    finally:
        stop.set()
        await asyncio.gather(*hogs)
    assert answer["type"] == "analysis", answer
    assert all(after[i] - before[i] <= 1 for i in range(20)), (before, after)
    await honest.close()


@pytest.mark.parametrize("restart", [False, True])
async def test_a_player_who_played_here_is_served_before_fresh_identities(serve: Serve, tmp_path: Path,
                                                                        restart: bool) -> None:
    """An identity that played a game of 10 plies here (in memory, or stored and finished before a restart) is
    served before fresh identities: its analysis takes the place of one of theirs in a full queue (refused
    `too_many` with a retry hint) although each of their 6 networks used less analysis time than its own; a fresh
    identity of its network never served an analysis (a new person) takes the place of another of theirs, as each of
    them was served before (before, it was refused); the hogs would need games of their own to weigh as much as the
    player."""
    db = tmp_path / "arena.sqlite3"
    server = await serve(db)
    alice, bob, match_id = await live_match(server.url)
    await play_plies(alice, bob, match_id, 10)
    if restart:
        await alice.request("event", type="resign", match_id=match_id)
        await server.close()
        server = await serve(db)
    for client in (alice, bob):
        await client.close()
    analyst = server.router.analyst
    analyst.max_queued = 4
    analyst.pressure = lambda: False  # not pacing: on a busy machine a late loop would cut the running one to 250 ms
    player = await Client.open(server.url, "alice", token=alice.welcome["token"], source=HONEST)
    assert (await ask(player, 300))["type"] == "analysis"
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(i // 6, network=10 + i % 6)) for i in range(12)]
    for hog in hogs:  # 2 x 60 ms on each of 6 networks: each used less than the player's
        assert (await ask(hog, 60))["type"] == "analysis"
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1500)
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    waiting = [asyncio.create_task(ask(hog, 60)) for hog in hogs[1:4]]
    await eventually(lambda: analyst.pending == 4, what="the queue to be full")
    fresh = await Client.open(server.url, "fresh", source="127.0.0.3")
    fresh_answer = asyncio.create_task(ask(fresh, 60))
    await eventually(lambda: any(task.done() for task in waiting), what="a hog to give the new person its place")
    answer = await ask(player, 60)
    replies = await asyncio.gather(*waiting)
    assert answer["type"] == "analysis", answer
    assert (await fresh_answer)["type"] == "analysis"
    refusals = [r for r in replies if r["type"] == "error"]
    assert len(refusals) == 2 and all(r["code"] == "too_many" and isinstance(r["retry_ms"], int) for r in refusals)
    assert (await hogs[0].next(30))["type"] == "analysis"
    for client in (player, fresh, *hogs):
        await client.close()


async def play_plies(south: Client, north: Client, match_id: str, plies: int) -> None:
    """Play the first legal action of each position until the match has `plies` plies."""
    game = Game(Variant.parse("kalah(6,4)"))
    while game.ply < plies:
        action = game.position.legal_actions()[0]
        await (south if game.position.to_move.name == "SOUTH" else north).request(
            "ack", **action_msg(action, match_id, game.ply))
        game.play(action)


async def test_a_waiting_analysis_is_served_as_a_players_once_its_game_has_begun(serve: Serve) -> None:
    """A request queued while its asker's game had fewer than 10 plies behind fresh identities' (of networks that
    used less) is served before theirs once the game reaches its tenth ply while it waits."""
    server = await serve()
    analyst = server.router.analyst
    analyst.pressure = lambda: False  # not pacing: on a busy machine a late loop would cut the running one to 250 ms
    alice, bob, match_id = await live_match(server.url)
    player = await Client.open(server.url, "alice", token=alice.welcome["token"], source=HONEST)
    assert (await ask(player, 100))["type"] == "analysis"  # its network used more than the hogs'
    hogs = [await Client.open(server.url, f"hog{i}", source=attacker(0, network=10 + i)) for i in range(3)]
    await hogs[0].send(type="analyse", variant="kalah(6,6)", position=POSITION, budget_ms=1000)
    await eventually(lambda: analyst.pending == 1, what="the first hog's analysis to run")
    order: list[str] = []

    async def asked(client: Client, name: str) -> None:
        """Ask an analysis (the hogs' long enough that the order of the answers is the order they ran in)."""
        assert (await ask(client, 60 if client is player else 400))["type"] == "analysis"
        order.append(name)

    waiting = [asyncio.create_task(asked(hog, f"hog{i}")) for i, hog in enumerate(hogs[1:], 1)]
    await eventually(lambda: analyst.pending == 3, what="two hogs to wait")
    waiting.append(asyncio.create_task(asked(player, "player")))
    await eventually(lambda: analyst.pending == 4, what="the player to wait")
    await play_plies(alice, bob, match_id, 10)
    await asyncio.gather(*waiting)
    assert order[0] == "player", order
    for client in (alice, bob, player, *hogs):
        await client.close()

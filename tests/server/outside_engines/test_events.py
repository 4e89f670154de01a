"""KGP engines in events over real connections: a round-robin of three engines (one broken) and the sanity stage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import Game, Position, Variant
from protocol.actions import Action
from protocol.kgp import Board, Line
from server.assembly import RunningServer
from server.front.outside_engines.results import forfeits
from tests.cli.test_bridge import engine
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, KgpClients, gateway, port_of
from tests.helpers.processes import KALAH, spawned
from tests.helpers.wire import Client, FirstLegal, Json, eventually

VARIANT = "kalah(4,3,clock=2/move)"
"""A short board; two seconds a move (the engine gets 1.8 s), so a silent engine forfeits soon."""


class StandIns(FirstLegal):
    """Stand-in hosted bots `first` and `random`, both playing the first legal action (a `random` that an
    engine beats for sure, so the sanity stage is reproducible)."""

    @classmethod
    def make(cls, name: str) -> StandIns:
        """The factory the server calls with a bot name."""
        if name not in ("first", "random"):
            raise ValueError(f"no bot {name}")
        return cls()

    def decide(self, position: Position, budget_s: float) -> Action:
        """The first legal action."""
        return position.legal_actions()[0]


@pytest.fixture
async def kgp() -> AsyncIterator[KgpClients]:
    """Opens KGP clients; all are closed at the end."""
    clients = KgpClients()
    yield clients
    await clients.close()


@pytest.fixture
async def host() -> AsyncIterator[list[Client]]:
    """Websocket clients of the test (the event's creator); closed at the end, even on failure."""
    opened: list[Client] = []
    yield opened
    for client in opened:
        await client.close()


async def enter(agent: KgpClient, name: str, event_id: str) -> tuple[int, Line]:
    """Greet as `name` with a token and ask for the event before freeplay; the id of that `set` and the
    gateway's answer to it (`ok`, or `error`)."""
    await agent.expect("kgp")
    await agent.command(f'set info:name "{name}"')
    await agent.command(f'set auth:token "{name}-secret-token"')
    ref = agent.next_id
    await agent.command(f"set arena:event {event_id}")
    await agent.command("mode freeplay")
    while (line := await agent.next()).ref != ref or line.name not in ("ok", "error"):
        pass
    return ref, line


async def organise(running: RunningServer, host: list[Client], settings: Json) -> tuple[Client, str]:
    """The organiser's connection (closed at the end of the test) and the id of the event it created."""
    creator = await Client.open(running.url, "organiser")
    host.append(creator)
    return creator, str((await creator.request("event_state", type="event_create", settings=settings))["event_id"])


def first_pit(board: Board) -> int:
    """The engine's first non-empty pit (it is always South)."""
    return next(i + 1 for i, seeds in enumerate(board.south) if seeds)


async def play_games(agent: KgpClient, games: int, broken: bool = False) -> list[str]:
    """Answer states (first legal pit) and pings for `games` results; broken: an illegal pit in the first game,
    silence (pings still answered) in the others."""
    results: list[str] = []
    while len(results) < games:
        line = await agent.next(15.0)
        if line.name == "ping":
            await agent.command("pong", ref=line.id)
        elif line.name == "state" and not (broken and results):
            board = line.args[0]
            assert isinstance(board, Board)
            await agent.command(f"move {99 if broken else first_pit(board)}", ref=line.id)
            await agent.command("yield", ref=line.id)
        elif line.name == "set" and line.args[0] == "arena:result":
            results.append(str(line.args[1]))
    return results


def first_legal_game(variant: str) -> float:
    """South's score (1, 1/2, 0) when both sides play their first legal house from the start."""
    game = Game(Variant.parse(variant))
    while not game.over:
        game.play(game.position.legal_actions()[0])
    result = game.result or 0
    return 0.5 if result == 0 else 1.0 if result > 0 else 0.0


async def test_round_robin_of_three_engines_one_broken_finishes_with_the_right_crosstable(
        serve: Serve, kgp: KgpClients, host: list[Client], tmp_path: Path) -> None:
    """Three engines enter over KGP (`set arena:event`); the round-robin pairs them into games played over their
    connections; the broken one forfeits both its games (an illegal move, then silence) and stays in the table."""
    running = await gateway(serve, bot_factory=StandIns.make)
    settings = {"name": "KGP final", "kind": "round_robin", "cycles": 1, "variant": VARIANT, "min_entrants": 3,
                "entry": "engines"}
    creator, eid = await organise(running, host, settings)
    agents = {name: await kgp.open(port_of(running)) for name in ("alpha", "beta", "broken")}
    for name, agent in agents.items():
        assert (await enter(agent, name, eid))[1].name == "ok" and agent.games == []  # entered, then its games
    results = await asyncio.gather(*(play_games(agent, 2, broken=name == "broken") for name, agent in agents.items()))
    assert results[2] == ["loss forfeit", "loss forfeit"]
    final: Json = await creator.expect("event_state", 15.0, lambda m: m["status"] == "finished")
    assert first_legal_game(VARIANT) == 0.0  # the game of the two sound engines: North wins
    # Berger's table for four places, the entrants in joining order (none rated yet), the fourth place a free round
    assert [(p["round"], p["south"], p["north"], p["result"]) for p in final["pairings"]] == [
        (1, "engine:beta", "engine:broken", "1-0"), (1, "engine:alpha", None, "bye"),
        (2, "engine:alpha", "engine:beta", "0-1"), (2, "engine:broken", None, "bye"),
        (3, "engine:broken", "engine:alpha", "0-1"), (3, "engine:beta", None, "bye")]
    assert final["crosstable"] == [
        {"rank": 1, "name": "engine:beta", "score": 2.0, "cells": ["3s1", "2n1", "+"]},
        {"rank": 2, "name": "engine:alpha", "score": 1.0, "cells": ["+", "1s0", "3n1"]},
        {"rank": 3, "name": "engine:broken", "score": 0.0, "cells": ["1n0", "+", "2s0"]}]
    broken = next(row for row in final["standings"] if row["name"] == "engine:broken")
    assert broken["active"] and broken["losses"] == 2 and broken["kind"] == "engine"
    details = [(f.match_id, f.detail) for f in forfeits(tmp_path / "arena.sqlite3")]
    assert details[0] == (f"{eid}-r1-t1", "illegal move 99: pits are numbered 1 to 4 (legal now: 1, 2, 3, 4)")
    assert details[1][0] == f"{eid}-r3-t1" and details[1][1].startswith("no move within 1.")  # the clock less margin


async def test_an_engine_short_of_wins_against_random_is_refused_plays_random_then_is_entered(
        serve: Serve, kgp: KgpClients, host: list[Client]) -> None:
    """An event asking for two wins against `random`: the engine's `set arena:event` is refused (`not_eligible`,
    naming what is missing) before any game; the gateway then gives it games against `random` only, and enters it
    (`ok`) after its second win."""
    running = await gateway(serve, bot_factory=StandIns.make, kgp_variant=VARIANT)
    settings = {"name": "Sane only", "kind": "round_robin", "cycles": 1, "variant": VARIANT, "min_entrants": 3,
                "entry": "engines", "sanity_games": 2}
    creator, eid = await organise(running, host, settings)
    agent = await kgp.open(port_of(running))
    ref, refusal = await enter(agent, "novice", eid)
    assert refusal.name == "error" and refusal.ref == ref and agent.games == []
    assert refusal.args == (f"not_eligible: event {eid} asks an engine for 2 wins against random first"
                            " (engine:novice has 0): playing random until then",)
    results: list[str] = []
    while results.count("win") < 2:  # first legal pit each time: it wins as North (an ok before would be skipped)
        results.append((await agent.play()).split()[0])
    assert (await agent.expect("ok", where=lambda line: line.ref == ref)).ref == ref
    opponents = {line.args[1] for line in agent.received("set") if line.args[0] == "game:opponent"}
    assert opponents == {"bot:random"} and agent.received("error") == [refusal]
    entered = await creator.expect("event_state", 5.0, lambda m: len(m["standings"]) == 1)
    assert entered["standings"][0]["name"] == "engine:novice" and entered["standings"][0]["kind"] == "engine"


async def test_a_bridged_engine_and_a_kgp_engine_play_a_round_robin_and_the_bridge_stops_at_its_end(
        serve: Serve, kgp: KgpClients, host: list[Client]) -> None:
    """`kalah bridge --event ID` enters its engine over the websocket (`event_join` as an engine), the other engine
    enters over KGP; both play the event's game, and the bridge exits 0 once the event has finished."""
    running = await gateway(serve, bot_factory=StandIns.make)
    settings = {"name": "Two ways in", "kind": "round_robin", "cycles": 1, "variant": VARIANT, "entry": "engines"}
    creator, eid = await organise(running, host, settings)
    argv = [*KALAH, "bridge", "--server", running.url, "--engine", engine(), "--event", eid]
    async with spawned(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as bridge:
        await creator.expect("event_state", 30.0, lambda m: len(m["standings"]) == 1)
        agent = await kgp.open(port_of(running))
        assert (await enter(agent, "kgp-side", eid))[1].name == "ok"
        assert await agent.play() == "win empty +6"  # North, as the second entrant: first legal pits, North wins
        out, err = await asyncio.wait_for(bridge.communicate(), 30)
        assert bridge.returncode == 0, err.decode()[-400:]
    final = await creator.expect("event_state", 10.0, lambda m: m["status"] == "finished")
    assert [(p["south"], p["north"], p["result"]) for p in final["pairings"]] == [
        ("engine:stdio-engine", "engine:kgp-side", "0-1")]
    lines = out.decode().splitlines()
    assert f"entered event Two ways in ({eid}): round_robin, open, {VARIANT}" in lines, lines
    assert lines[-1] == f"event {eid} finished: 1 game(s) played"


async def test_a_bridge_short_of_wins_against_random_is_refused_in_one_line(serve: Serve, host: list[Client]) -> None:
    """`kalah bridge --event` for an event asking for a win against `random` the engine never had: status 1 and
    one line naming what is missing."""
    running = await serve()
    settings = {"name": "Sane", "kind": "swiss", "rounds": 1, "entry": "engines", "sanity_games": 1}
    _, eid = await organise(running, host, settings)
    argv = [*KALAH, "bridge", "--server", running.url, "--engine", engine(), "--event", eid]
    async with spawned(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as bridge:
        _, err = await asyncio.wait_for(bridge.communicate(), 30)
    assert bridge.returncode == 1
    assert err.decode().strip().splitlines()[-1] == (
        f"kalah bridge: the server refused to enter event {eid}: not_eligible: event {eid} asks an engine for 1 win"
        " against random first (engine:stdio-engine has 0)")


async def test_an_engine_that_drops_out_forfeits_that_game_and_plays_on_when_it_connects_again(
        serve: Serve, kgp: KgpClients, host: list[Client], tmp_path: Path) -> None:
    """A double round-robin: one engine closes its connection at its first state (that game is forfeited), connects
    again with its token and only `mode freeplay`; it is still entered, so it waits for and plays its other games."""
    running = await gateway(serve, bot_factory=StandIns.make)
    settings = {"name": "Comeback", "kind": "round_robin", "variant": VARIANT, "min_entrants": 3, "entry": "engines"}
    creator, eid = await organise(running, host, settings)
    agents = {name: await kgp.open(port_of(running)) for name in ("alpha", "beta", "gamma")}
    for name, agent in agents.items():
        assert (await enter(agent, name, eid))[1].name == "ok"
    others = asyncio.gather(play_games(agents["alpha"], 4), play_games(agents["beta"], 4))
    try:
        await agents["gamma"].expect("state", 10.0)  # round 1, against beta
        await agents["gamma"].close()
        await eventually(lambda: forfeits(tmp_path / "arena.sqlite3"), what="the forfeit of round 1")
        back = await kgp.open(port_of(running))
        await back.hello("gamma", token="gamma-secret-token")
        await play_games(back, 3)
        await others
    finally:
        others.cancel()
    assert back.games == [f"{eid}-r3-t1", f"{eid}-r4-t1", f"{eid}-r6-t1"]
    final: Json = await creator.expect("event_state", 15.0, lambda m: m["status"] == "finished")
    gamma = next(row for row in final["standings"] if row["name"] == "engine:gamma")
    assert gamma["active"] and gamma["wins"] + gamma["draws"] + gamma["losses"] == 4
    [(match, detail)] = [(f.match_id, f.detail) for f in forfeits(tmp_path / "arena.sqlite3")]
    assert match == f"{eid}-r1-t1" and detail.startswith("connection closed")


async def test_engines_on_a_node_not_owning_the_event_get_its_games(
        serve: Serve, kgp: KgpClients, host: list[Client], pg_url: str, bus_url: str) -> None:
    """In a cluster, an event created on node A is owned by A; two engines connected to node B's gateway enter
    it there, are paired by A and get their game over their connections on B, and the event finishes."""
    owner = await serve(pg_url, bus=bus_url, bot_factory=StandIns.make)
    other = await gateway(serve, db=pg_url, bus=bus_url, bot_factory=StandIns.make)
    settings = {"name": "Far engines", "kind": "round_robin", "cycles": 1, "variant": VARIANT, "min_entrants": 2,
                "entry": "engines"}
    creator, eid = await organise(owner, host, settings)
    agents = [await kgp.open(port_of(other)) for _ in range(2)]
    for name, agent in zip(("alpha", "beta"), agents, strict=True):
        assert (await enter(agent, name, eid))[1].name == "ok"
    results = await asyncio.gather(*(play_games(agent, 1) for agent in agents))
    assert sorted(r[0].split()[0] for r in results) == ["loss", "win"]  # first legal pits: North wins
    final: Json = await creator.expect("event_state", 15.0, lambda m: m["status"] == "finished")
    assert [(p["round"], p["match_id"]) for p in final["pairings"]] == [(1, f"{eid}-r1-t1")]


async def test_an_engine_earning_its_entry_waits_for_a_place_against_random_when_all_are_taken(
        serve: Serve, kgp: KgpClients, host: list[Client]) -> None:
    """The sanity stage's games against `random` count against the cap on games against hosted bots: with the only
    place taken, the engine is told `too_many` after `not_eligible`, plays `random` once the place is free, and is
    entered after its win."""
    running = await gateway(serve, bot_factory=StandIns.make, kgp_variant="kalah(4,3)", kgp_move_s=30,
                            kgp_bot_games=1)
    settings = {"name": "Sane", "kind": "round_robin", "cycles": 1, "variant": VARIANT, "min_entrants": 3,
                "entry": "engines", "sanity_games": 1}
    _, eid = await organise(running, host, settings)
    holder = await kgp.open(port_of(running))
    await holder.hello("holder")
    await holder.until_game()  # untimed, 30 s a move: it holds the one place while it thinks
    agent = await kgp.open(port_of(running))
    ref, refusal = await enter(agent, "novice", eid)
    assert refusal.name == "error" and str(refusal.args[0]).startswith("not_eligible: ")
    waiting = str((await agent.expect("error")).args[0])
    assert waiting.startswith("too_many: all places for games against hosted bots are taken (1 at once)"), waiting
    assert agent.games == []
    await holder.close()
    results: list[str] = []
    while "win" not in results:
        results.append((await agent.play()).split()[0])
    assert (await agent.expect("ok", where=lambda line: line.ref == ref)).ref == ref
    assert {line.args[1] for line in agent.received("set") if line.args[0] == "game:opponent"} == {"bot:random"}

"""KGP agents play real arena matches: moves, deadlines, pings, forfeits, identities, pairing and spectators."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import Game, Variant, parse_actions
from protocol.kgp import Board
from server.front.outside_engines.gateway import engine_id
from server.front.outside_engines.results import forfeits
from server.storage import fetch_game
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClients, gateway, port_of
from tests.helpers.wire import Client, eventually, is_game_over
from tests.server.test_metrics import scrape


@pytest.fixture
async def kgp() -> AsyncIterator[KgpClients]:
    """Opens KGP clients; all are closed at the end."""
    clients = KgpClients()
    yield clients
    await clients.close()


def legal(board: Board) -> list[int]:
    """The agent's non-empty pits (it is always South)."""
    return [i + 1 for i, seeds in enumerate(board.south) if seeds]


def finished(db: Path, game_id: str) -> bool:
    """Whether the stored game has ended (its end is stored after the forfeit's reason)."""
    game = fetch_game(db, game_id)
    return game is not None and game.status == "finished"


async def test_the_last_move_before_stop_counts_and_late_moves_are_ignored(serve: Serve, kgp: KgpClients,
                                                                           tmp_path: Path) -> None:
    """Moves refine each other (out of range, last pit, first pit): the first pit is played; a move after
    `stop` draws no error; the board is always from the agent's side, so the game ends on the board."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve)
    agent = await kgp.open(port_of(running))
    await agent.hello()
    result = None
    while result is None:
        line = await agent.next()
        if line.name == "ping":
            await agent.command("pong", ref=line.id)
        elif line.name == "state":
            assert isinstance(line.args[0], Board)
            pits = legal(line.args[0])
            for pit in (99, pits[-1], pits[0]):
                await agent.command(f"move {pit}", ref=line.id)
            await agent.command("yield", ref=line.id)
        elif line.name == "stop":
            await agent.command("move 1", ref=line.ref)  # too late: silently ignored
        elif line.name == "set" and line.args[0] == "arena:result":
            result = str(line.args[1])
    assert agent.received("error") == []
    assert result.split()[1] in ("empty", "majority")
    options = {str(line.args[0]): line.args[1] for line in agent.received("set")}
    assert options["game:opponent"] == "bot:first" and options["time:mode"] == "relative"
    assert options["time:clock"] == 4  # 5 s a move, less the gateway's margin
    game = fetch_game(db, agent.games[0])
    assert game is not None
    replay = Game(Variant.parse(game.variant))
    for action in parse_actions(game.record):  # both sides played their first legal house every time
        assert action.token() == str(min(replay.position.legal_bins()))
        replay.play(action)


async def test_an_agent_that_sends_no_move_gets_a_random_one_and_a_ping(serve: Serve, kgp: KgpClients,
                                                                        tmp_path: Path) -> None:
    """At the deadline: `stop`, a random legal move is played, then `ping`; answering `pong` keeps it playing."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve, kgp_variant="kalah(6,4)", kgp_move_s=0.5)  # untimed: no clock to lose on
    agent = await kgp.open(port_of(running))
    await agent.hello()
    await agent.until_game()
    state = await agent.expect("state")
    stop = await agent.expect("stop")
    assert stop.ref == state.id
    ping = await agent.expect("ping")
    await agent.command("pong", ref=ping.id)
    assert (await agent.play()).split()[1] in ("empty", "majority")
    game = fetch_game(db, agent.games[0])
    assert game is not None and game.reason in ("empty", "majority")
    assert forfeits(db) == []


async def test_an_agent_that_asks_for_a_game_but_never_moves_is_let_go(serve: Serve, kgp: KgpClients,
                                                                        tmp_path: Path) -> None:
    """An agent that answers pings but sends no move forfeits after two states in a row without one (the reason
    stored), is told so and let go: it holds no game, no hosted bot and no place in the queue."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve, kgp_variant="kalah(6,4)", kgp_move_s=0.2)
    agent = await kgp.open(port_of(running))
    await agent.hello()
    game_id = await agent.until_game()
    states = 0
    while states <= 4 and (line := await agent.next(timeout=5)).name != "goodbye":  # never a move; pings answered
        states += line.name == "state"
        if line.name == "ping":
            await agent.command("pong", ref=line.id)
    assert states == 2
    assert any("no move" in str(line.args[0]) for line in agent.received("error")), agent.received("error")
    assert await agent.closed() == []
    await eventually(lambda: finished(db, game_id), what="the stored forfeit")
    game = fetch_game(db, game_id)
    assert game is not None and (game.reason, game.winner) == ("forfeit", "bot:first")
    assert game.detail is not None and "no move in 2 states in a row" in game.detail
    gateway_ = running.kgp
    assert gateway_ is not None
    await eventually(lambda: not gateway_.agents and not gateway_.sessions and not gateway_.waiting,
                     what="the gateway to let the agent go")
    assert all(room.match.status != "live" for room in running.arena.rooms.values())

async def test_no_pong_forfeits_the_game_with_the_reason_stored(serve: Serve, kgp: KgpClients, tmp_path: Path) -> None:
    """An agent silent on a ping is told, dropped, and loses by forfeit; the reason is stored with the match."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve, kgp_variant="kalah(6,4)", kgp_move_s=0.3, kgp_pong_s=0.3)
    agent = await kgp.open(port_of(running))
    await agent.hello()
    await agent.until_game()
    rest = await agent.closed()
    assert [line.name for line in rest][-2:] == ["error", "goodbye"]
    assert "no pong" in str(rest[-2].args[0])
    await eventually(lambda: finished(db, agent.games[0]), what="the stored forfeit")
    game = fetch_game(db, agent.games[0])
    assert game is not None and (game.reason, game.winner) == ("forfeit", "bot:first")
    [forfeit] = forfeits(db, agent.games[0])
    assert "received no pong within 0.3 s" in forfeit.detail
    assert game.detail == forfeit.detail
    reader = await Client.open(running.url, "reader")  # what `kalah games --server` and replay are sent
    record = await reader.request("game_record", type="game", match_id=agent.games[0])
    assert record["game"]["detail"] == forfeit.detail


async def test_an_illegal_move_loses_by_forfeit_and_the_agent_plays_on(serve: Serve, kgp: KgpClients,
                                                                       tmp_path: Path) -> None:
    """A pit out of range is a loss (reason stored, the agent told); the connection stays and the next game follows."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve)
    agent = await kgp.open(port_of(running))
    await agent.hello("clumsy", token="clumsy-token-1")
    assert await agent.play(lambda board: 9) == "loss forfeit"
    told = [str(line.args[0]) for line in agent.received("error")]
    assert any(t.startswith("you forfeit this game: illegal move 9: pits are numbered 1 to 6") for t in told)
    assert (await agent.play()).split()[1] in ("empty", "majority")
    first, second = (fetch_game(db, game_id) for game_id in agent.games[:2])
    assert first is not None and first.reason == "forfeit" and first.record.split() in ([], ["1"])
    assert second is not None and second.status == "finished" and second.reason != "forfeit"
    assert [f.detail.split(":")[0] for f in forfeits(db)] == ["illegal move 9"]
    assert running.arena.ratings[engine_id("clumsy-token-1")][1] == 2  # rated: two games against a hosted bot


async def test_a_lost_connection_forfeits_the_game(serve: Serve, kgp: KgpClients, tmp_path: Path) -> None:
    """An agent that disconnects in the middle of a game loses it by forfeit."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve)
    agent = await kgp.open(port_of(running))
    await agent.hello()
    await agent.until_game()
    await agent.expect("state")
    await agent.close()
    await eventually(lambda: finished(db, agent.games[0]), what="the forfeit of the disconnected agent")
    assert forfeits(db)[0].detail == "connection closed (disconnected)"
    game = fetch_game(db, agent.games[0])
    assert game is not None and (game.reason, game.winner) == ("forfeit", "bot:first")


async def test_a_token_is_a_persistent_engine_account(serve: Serve, kgp: KgpClients, tmp_path: Path) -> None:
    """The same token comes back as the same `engine:` account; people cannot take `engine:` names;
    an agent without a token plays unrated under a name of its own connection."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve)
    port = port_of(running)
    first = await kgp.open(port)
    await first.hello("Deep-Sow", token="deep-sow-secret")
    await first.play()
    await first.close()
    again = await kgp.open(port)
    await again.hello("Renamed", token="deep-sow-secret")
    await again.play()
    names = set()
    for game_id in (*first.games[:1], *again.games[:1]):
        game = fetch_game(db, game_id)
        assert game is not None
        names |= {game.south, game.north}
    assert names == {"engine:Deep-Sow", "bot:first"}
    assert running.arena.ratings[engine_id("deep-sow-secret")][1] == 2
    for name in ("engine:Deep-Sow", "ENGINE:someone"):
        person = await Client.open(running.url, None)
        await person.send(type="hello", name=name)
        assert await person.error() == "reserved_name"
        await person.close()
    anonymous = await kgp.open(port)
    await anonymous.hello("nameless")
    await anonymous.play()
    game = fetch_game(db, anonymous.games[0])
    assert game is not None
    [anon_name] = {game.south, game.north} - {"bot:first"}
    assert anon_name is not None and anon_name.startswith("engine:nameless-")
    assert not any(pid.startswith("e") and pid != engine_id("deep-sow-secret") for pid in running.arena.ratings)


async def test_two_agents_are_paired_and_their_match_is_watched_like_any(serve: Serve, kgp: KgpClients) -> None:
    """Two waiting agents play each other (no bot); a person watches the live match over the websocket,
    gets every event to the end, and the stored game and the standings show both engines."""
    running = await gateway(serve, kgp_pair_wait_s=60)
    port = port_of(running)
    alpha, beta = await kgp.open(port), await kgp.open(port)
    await alpha.hello("alpha", token="alpha-token-1")
    await beta.hello("beta", token="beta-token-22")
    game_a, game_b = await asyncio.gather(alpha.until_game(), beta.until_game())
    assert game_a == game_b
    watcher = await Client.open(running.url, "watcher")
    snapshot = await watcher.request("snapshot", type="watch", match_id=game_a)
    assert snapshot["status"] == "live"
    assert {snapshot["south"], snapshot["north"]} == {"engine:alpha", "engine:beta"}
    results = await asyncio.gather(alpha.play(), beta.play())
    assert sorted(r.split()[0] for r in results) in (["loss", "win"], ["draw", "draw"])
    over = await watcher.expect("event", where=is_game_over)
    assert over["reason"] in ("empty", "majority")
    stored = await watcher.request("game_record", type="game", match_id=game_a)
    assert stored["game"]["status"] == "finished" and stored["game"]["record"]
    table = await watcher.request("standings_table", type="standings", limit=10)
    assert {"engine:alpha", "engine:beta"} <= {row["name"] for row in table["rows"]}
    await watcher.close()


async def test_an_agent_whose_partner_left_before_the_game_goes_back_to_the_queue(serve: Serve,
                                                                                 kgp: KgpClients) -> None:
    """Paired agents are pinged first; when one is gone, the other waits for the next partner."""
    running = await gateway(serve, kgp_pair_wait_s=60)
    port = port_of(running)
    staying, leaving = await kgp.open(port), await kgp.open(port)
    await staying.hello("staying", token="staying-token")
    await leaving.hello("leaving", token="leaving-token")
    await leaving.expect("ping")
    await leaving.close()
    ping = await staying.expect("ping")
    await staying.command("pong", ref=ping.id)
    late = await kgp.open(port)
    await late.hello("late", token="late-token")
    first, second = await asyncio.gather(staying.until_game(), late.until_game())
    assert first == second
    assert running.kgp is not None and running.kgp.games == 1



@pytest.mark.parametrize(("cap", "playing"), [({"kgp_bot_games": 2}, 2), ({"kgp_bot_games_per_address": 1}, 1)])
async def test_games_against_hosted_bots_are_capped_and_a_refused_agent_plays_when_one_ends(
        serve: Serve, kgp: KgpClients, cap: dict[str, int], playing: int) -> None:
    """With every place for a game against a hosted bot taken (in all, or of the agent's address), the next agent
    due one is told `too_many` with a retry hint, counted in /metrics, and stays queued: it plays the bot as soon
    as one of the running games ends."""
    running = await gateway(serve, kgp_variant="kalah(6,4)", kgp_move_s=30, **cap)  # untimed: games stay live
    port = port_of(running)
    agents = [await kgp.open(port) for _ in range(playing)]
    for agent in agents:
        await agent.hello()
        await agent.until_game()
    late = await kgp.open(port)
    await late.hello()
    refusal = str((await late.expect("error")).args[0])
    assert refusal.startswith("too_many: ") and "you stay queued" in refusal, refusal
    assert "retry_ms=30001" in refusal
    assert late.games == []
    samples = await scrape(running)
    assert samples[("kalah_refusals_total", (("code", "too_many"),))] == 1
    await agents[0].close()  # its game ends (forfeit): its place goes to the agent waiting for one
    await late.until_game()
    opponent = await late.expect("set", where=lambda line: line.args[0] == "game:opponent")
    assert opponent.args[1] == "bot:first"

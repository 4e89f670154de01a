"""The KGP gateway's protocol over real TCP: greeting, modes, options, bad input, limits, shutdown."""

from __future__ import annotations

import asyncio
import fcntl
import struct
import termios
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol.kgp import Board, gateway_variant
from server.front.outside_engines.agent import Agent, AgentLimits
from server.front.outside_engines.gateway import GatewayOptions, engine_id
from server.front.outside_engines.links import TcpLink
from server.storage import fetch_game
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClients, gateway, port_of
from tests.helpers.wire import eventually


@pytest.fixture
async def kgp() -> AsyncIterator[KgpClients]:
    """Opens KGP clients; all are closed at the end."""
    clients = KgpClients()
    yield clients
    await clients.close()


async def test_greeting_and_freeplay_are_acknowledged(serve: Serve, kgp: KgpClients) -> None:
    """The server speaks first (`kgp 1 1 0`, an even id); `mode freeplay` gets `ok` referencing it."""
    client = await kgp.open(port_of(await gateway(serve, kgp_pair_wait_s=60)))
    greeting = await client.next()
    assert (greeting.name, greeting.args, greeting.ref) == ("kgp", (1, 1, 0), None)
    assert greeting.id is not None and greeting.id % 2 == 0
    await client.command('mode "freeplay"')
    ok = await client.expect("ok")
    assert ok.ref == 1


async def test_unknown_mode_is_refused_and_closed(serve: Serve, kgp: KgpClients) -> None:
    """An activity the server does not run: `error "Unsupported activity"`, `goodbye`, and the connection ends."""
    client = await kgp.open(port_of(await gateway(serve)))
    await client.expect("kgp")
    await client.command("mode eval")
    rest = await client.closed()
    assert [(line.name, line.args, line.ref) for line in rest] == [
        ("error", ("Unsupported activity",), 1), ("goodbye", (), None)]


async def test_no_mode_in_time_or_a_second_mode_ends_the_connection(serve: Serve, kgp: KgpClients) -> None:
    """An agent that asks for no activity within the mode timeout, or asks twice, is told and dropped."""
    port = port_of(await gateway(serve, kgp_mode_s=0.2, kgp_pair_wait_s=60))
    silent = await kgp.open(port)
    assert [line.name for line in await silent.closed()][-2:] == ["error", "goodbye"]
    assert "no mode" in str(silent.received("error")[0].args[0])
    twice = await kgp.open(port)
    await twice.hello()
    await twice.command("mode freeplay")
    rest = await twice.closed()
    assert [line.name for line in rest] == ["error", "goodbye"]
    assert "Duplicate" in str(rest[0].args[0])


async def test_bad_input_gets_errors_and_the_agent_plays_on(serve: Serve, kgp: KgpClients) -> None:
    """Junk bytes, malformed and unknown commands, a 20 KiB line: an error each; unknown options: nothing."""
    running = await gateway(serve)
    client = await kgp.open(port_of(running))
    await client.expect("kgp")
    for option in ("set unknown:option 1", "set time:clock 5", 'set game:id "mine"', "set arena:result win",
                   "ok", 'error "whatever"'):
        await client.command(option)
    await client.send(b"\xff\xfe\x00 junk")  # malformed
    await client.send("frobnicate 1 2")  # unknown command
    await client.send("set only-a-key")  # set without a value
    await client.send("@5 move 1")  # a state that was never sent
    await client.send("set info:comment " + "x" * 20480)  # over the 16 KiB line limit
    await client.send("set auth:token short")  # too weak: refused, still connected
    await client.command("mode freeplay")
    await client.expect("ok")
    errors = [str(line.args[0]) for line in client.received("error")]
    assert len(errors) == 6, errors
    assert any("malformed" in e for e in errors) and any("Unknown command" in e for e in errors)
    assert any("No state" in e for e in errors) and any("20498 bytes ignored" in e for e in errors)
    assert any("token refused" in e for e in errors)
    assert (await client.play()).split()[1] in ("empty", "majority")


async def test_a_single_legal_move_is_played_without_asking(serve: Serve, kgp: KgpClients, tmp_path: Path) -> None:
    """Kalah(1, s) has one house a side: every move is forced, so the agent gets no `state` at all."""
    db = tmp_path / "arena.sqlite3"
    running = await gateway(serve, kgp_variant="kalah(1,3,clock=5/move)")
    client = await kgp.open(port_of(running))
    await client.hello()
    result = await client.play()
    game_id = client.games[0]
    assert client.received("state") == []
    game = fetch_game(db, game_id)
    assert game is not None and game.status == "finished" and game.reason in ("empty", "majority")
    assert result.split()[0] in ("win", "loss", "draw")


async def test_connections_per_address_are_capped(serve: Serve, kgp: KgpClients) -> None:
    """Past the per-address limit a connection gets an error and goodbye; a freed slot is usable again."""
    port = port_of(await gateway(serve, kgp_max_per_address=2, kgp_pair_wait_s=60))
    first, second = await kgp.open(port), await kgp.open(port)
    await first.expect("kgp")
    await second.expect("kgp")
    third = await kgp.open(port)
    assert [line.name for line in await third.closed()] == ["error", "goodbye"]
    first.writer.close()
    again = await kgp.open(port)
    assert (await again.next()).name == "kgp"


async def test_shutdown_says_goodbye_to_every_agent(serve: Serve, kgp: KgpClients) -> None:
    """Closing the server ends every agent connection with `goodbye`."""
    running = await gateway(serve, kgp_pair_wait_s=60)
    waiting = await kgp.open(port_of(running))
    await waiting.hello()
    await running.close()
    assert [line.name for line in await waiting.closed()][-1:] == ["goodbye"]


async def test_a_token_of_digits_is_a_token(serve: Serve, kgp: KgpClients) -> None:
    """`set auth:token 1234567890` (an integer to the grammar) keeps its text as the token: a rated account."""
    running = await gateway(serve)
    client = await kgp.open(port_of(running))
    await client.expect("kgp")
    await client.command("set auth:token 1234567890")
    await client.command("mode freeplay")
    await client.expect("ok")
    await client.play()
    assert client.received("error") == []
    assert running.arena.ratings[engine_id("1234567890")][1] == 1


def test_gateway_options_and_ids() -> None:
    """Options split off by their `kgp_` names; engine ids are stable per token; KGP variants only sow."""
    mine, rest = GatewayOptions.split({"kgp_port": 0, "grace_s": 5})
    assert mine.kgp_port == 0 and rest == {"grace_s": 5}
    assert engine_id("secret-token") == engine_id("secret-token") != engine_id("other-token")
    assert engine_id("secret-token").startswith("e") and len(engine_id("secret-token")) == 12
    assert gateway_variant("kalah(8,8,majority=on)").houses == 8
    for bad in ("kalah(6,4,pie=on)", "kalah(6,4,transfer=on)"):
        try:
            gateway_variant(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")


async def test_a_state_whose_write_finds_the_connection_lost_is_not_waited_for() -> None:
    """A `state` whose write is the first to find the connection lost (the peer reset it during an earlier write,
    before the agent read the end) returns at once with no move, the agent closed: its game is forfeited now, not
    after the whole think time (it used to wait that long, holding the game and its hosted bot)."""
    accepted: list[asyncio.StreamWriter] = []

    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Hold the server's end of the connection."""
        accepted.append(writer)

    server = await asyncio.start_server(keep, "127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        agent = Agent(TcpLink(reader, writer), AgentLimits(), lambda agent: None, lambda agent: None)
        writer.transport.abort()  # lost, as a failed write leaves it; the agent has not read its end yet
        answer = await asyncio.wait_for(agent.ask(Board(0, 0, (4,) * 6, (4,) * 6), 30.0, []), 2.0)
        assert answer.move is None and agent.closed.is_set()
        assert agent.close_reason == "connection lost"
    finally:
        for end in accepted:
            end.close()
        server.close()
        await server.wait_closed()


async def test_a_line_the_agent_sends_as_it_is_dropped_costs_it_no_line_before_the_goodbye(
        serve: Serve, kgp: KgpClients) -> None:
    """An agent's line still unread when the server drops it (a `pong` crossing its `goodbye`) makes the close a
    reset; the agent still reads the `error` and `goodbye` before it, then the end (it used to get a reset instead
    of them, a test agent an exception, as when a forfeit crossed the pong of its last ping)."""
    running = await gateway(serve, kgp_pair_wait_s=60)
    client = await kgp.open(port_of(running))
    await client.hello()
    assert running.kgp is not None
    [agent] = running.kgp.agents
    assert isinstance(agent.link, TcpLink)
    transport = agent.link.writer.transport
    assert isinstance(transport, asyncio.Transport)
    transport.pause_reading()  # the server reads nothing more: the agent's next line stays unread
    await client.command("ping")
    sock = agent.link.writer.get_extra_info("socket")

    def unread() -> int:
        """Bytes of the agent's waiting, unread, in the server's socket."""
        return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0])

    await eventually(lambda: unread() > 0, what="the agent's line to reach the server")
    agent.kill("dropped for the test")
    rest = await client.closed()
    assert [line.name for line in rest] == ["error", "goodbye"]
    assert rest[0].args[0] == "dropped for the test"

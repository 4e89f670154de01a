"""Attacks on the server's resources, each against a real server: every one meets a limit and a typed error,
and an honest client (on another loopback address) is served all along."""

from __future__ import annotations

import asyncio

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from protocol import Variant
from server.core.match import Seat
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, eventually, live_match


async def honest_round_trip(url: str, name: str = "honest") -> None:
    """An honest client from another address says hello, lists matches and gets its answers."""
    honest = await Client.open(url, name, source=HONEST)
    try:
        await honest.request("matches", type="list")
    finally:
        await honest.close()


async def test_connections_that_never_say_hello_are_closed(serve: Serve) -> None:
    """A connection silent past the hello timeout is closed with 1008; one that says hello stays."""
    server = await serve(hello_timeout=0.2)
    silent = await connect(server.url)
    greeted = await Client.open(server.url, "greeted")
    await asyncio.wait_for(silent.wait_closed(), 5)
    assert silent.close_code == 1008
    await greeted.request("matches", type="list")  # still served
    await greeted.close()


async def test_one_address_cannot_hold_every_slot(serve: Serve) -> None:
    """Past the per-address cap the handshake is refused (HTTP 429); another address still connects."""
    server = await serve(max_per_address=3)
    held = [await connect(server.url) for _ in range(3)]
    try:
        try:
            await connect(server.url)
        except InvalidStatus as exc:
            assert exc.response.status_code == 429
        else:
            raise AssertionError("a fourth connection from one address was accepted")
        await honest_round_trip(server.url)
    finally:
        for ws in held:
            await ws.close()


async def test_a_client_that_does_not_read_is_dropped(serve: Serve) -> None:
    """A client that asks for replies and never reads them is disconnected once its backlog passes the limit."""
    server = await serve(send_buffer=64 * 1024, rate=10_000, burst=10_000, read_rows_rate=1e9, read_rows_burst=10**9,
                         all_read_rows_rate=1e9, network_read_rows_rate=1e9)
    for i in range(200):
        await server.arena.create(Variant(), False, 0, [(0, Seat(f"p{i}", f"p{i}")), (1, Seat(f"q{i}", f"q{i}"))])
    reader = await connect(server.url)
    reader.transport.pause_reading()  # the client's kernel buffers fill, then the server's
    try:
        for _ in range(2000):
            await reader.send('{"type": "list"}')
    except ConnectionClosed:
        pass
    await eventually(lambda: server.admission.connections == 0, timeout=60, what="the unread connection to be dropped")
    await honest_round_trip(server.url)
    reader.transport.abort()


async def test_public_reads_are_charged_by_rows(serve: Serve) -> None:
    """Anonymous `games {limit: 200}` floods from one address run out of rows (`rate_limited`); others are served."""
    server = await serve(read_rows_rate=100, read_rows_burst=500)
    flooders = [await Client.open(server.url, None) for _ in range(4)]
    codes = []
    for _ in range(3):
        for flooder in flooders:
            await flooder.send(type="games", limit=200)
            reply = await flooder.next()
            codes.append(reply.get("code", reply["type"]))
    assert codes.count("game_list") == 2 and codes.count("rate_limited") == 10
    await honest_round_trip(server.url)
    for flooder in flooders:
        await flooder.close()


async def test_open_matches_per_identity_are_capped(serve: Serve) -> None:
    """One identity cannot fill the open-match list: past its cap a create is `too_many`; leaving frees a slot."""
    server = await serve(open_per_player=3)
    spammer = await Client.open(server.url, "spammer")
    ids = [(await spammer.request("snapshot", type="create"))["match_id"] for _ in range(3)]
    await spammer.send(type="create")
    assert await spammer.error() == "too_many"
    await spammer.send(type="leave", match_id=ids[0])
    await spammer.request("snapshot", type="create")
    other = await Client.open(server.url, "other", source=HONEST)
    await other.request("snapshot", type="create")
    await spammer.close()
    await other.close()


async def test_stale_open_matches_expire(serve: Serve) -> None:
    """An open match nobody joins is cancelled after the open-match lifetime and frees its creator's slot."""
    server = await serve(open_ttl_s=0.05, open_per_player=1)
    alice = await Client.open(server.url, "alice")
    first = (await alice.request("snapshot", type="create"))["match_id"]
    await eventually(lambda: first not in server.arena.rooms, what="the stale open match to expire")
    await alice.request("snapshot", type="create")
    await alice.close()


async def test_analyses_are_bounded_per_address_and_dropped_with_the_connection(serve: Serve) -> None:
    """One analysis at a time per address (`too_many` past it); a closed client's queued analysis is dropped at
    once while the running one ends within its budget; then another address is served."""
    server = await serve()
    analyst = server.router.analyst
    analyst.pressure = lambda: False  # not pacing: on a busy machine a late loop would cut the running one to 250 ms
    position = "6,6,6,6,6,6,0,6,6,6,6,6,6,0 S 0 -"  # no book holds it and no proof fits: it thinks its budget
    running, same = await Client.open(server.url, "a0"), await Client.open(server.url, "a1")
    queued = await Client.open(server.url, "a2", source="127.0.0.3")
    await running.send(type="analyse", variant="kalah(6,6)", position=position, budget_ms=2000)
    # each asker's history is looked up before its request is queued, so requests on two connections may be
    # queued in either order: the second is sent once the first is in
    await eventually(lambda: analyst.pending == 1, what="the first analysis to be queued")
    for client in (same, queued):
        await client.send(type="analyse", variant="kalah(6,6)", position=position, budget_ms=2000)
    assert await same.error() == "too_many"
    await eventually(lambda: analyst.pending == 2, what="one analysis running and one queued")
    await queued.ws.close()
    await eventually(lambda: analyst.pending == 1, what="the queued analysis to be dropped with its connection")
    await running.ws.close()
    await eventually(lambda: analyst.pending == 0, timeout=10, what="the running analysis to end")
    honest = await Client.open(server.url, "honest", source=HONEST)
    await honest.send(type="analyse", variant="kalah(6,6)", position=position, budget_ms=50)
    assert (await honest.expect("analysis"))["position"] == position
    await honest.close()
    await same.close()


async def test_following_is_capped_per_connection(serve: Serve) -> None:
    """A connection cannot follow every match on the server: past its cap a watch is `too_many`."""
    server = await serve(max_follow=3)
    for i in range(5):
        await server.arena.create(Variant(), False, 0, [(0, Seat(f"p{i}", f"p{i}")), (1, Seat(f"q{i}", f"q{i}"))],
                                  match_id=f"m{i}")
    watcher = await Client.open(server.url, "watcher")
    for i in range(3):
        await watcher.request("snapshot", type="watch", match_id=f"m{i}")
    await watcher.send(type="watch", match_id="m3")
    assert await watcher.error() == "too_many"
    await watcher.send(type="leave", match_id="m0")
    await watcher.request("snapshot", type="watch", match_id="m3")
    await watcher.close()


async def test_many_connections_share_one_address_budget(serve: Serve) -> None:
    """Connections from one address share a message budget: spreading a flood over connections does not
    multiply it; another address keeps its own."""
    server = await serve(rate=1000, burst=1000, address_rate=1, address_burst=10)
    flooders = [await Client.open(server.url, None) for _ in range(4)]
    for flooder in flooders:
        for _ in range(5):
            await flooder.send(type="list")
    served = refused = 0
    for flooder in flooders:  # each gets its lists until the budget runs out, then one rate_limited error
        for _ in range(5):
            reply = await flooder.next()
            if reply["type"] == "error":
                assert reply["code"] == "rate_limited"
                refused += 1
                break
            served += 1
    assert served <= 11 and refused >= 1
    await honest_round_trip(server.url)
    for flooder in flooders:
        await flooder.close()


async def test_finished_matches_kept_for_late_syncs_are_capped(serve: Serve) -> None:
    """Past `max_lingering` finished matches in memory, the one that finished longest ago leaves memory at once
    (before its five minutes), and a late watch of it is still answered with its end, read back from storage."""
    server = await serve(max_lingering=2)
    finished = []
    for i in range(3):
        south, north, mid = await live_match(server.url, names=(f"s{i}", f"n{i}"))
        await north.send(type="resign", match_id=mid)
        await south.expect("event", where=lambda m: m.get("kind") == "game_over")
        finished.append(mid)
        await south.close()
        await north.close()
    assert finished[0] not in server.arena.rooms
    assert all(mid in server.arena.rooms for mid in finished[1:])
    late = await Client.open(server.url, "late")
    snapshot = await late.request("snapshot", type="watch", match_id=finished[0])
    assert snapshot["status"] == "finished"
    assert finished[0] not in server.arena.rooms  # read back, not kept
    await late.close()


async def test_players_in_memory_are_capped(serve: Serve) -> None:
    """Past `max_cached_players`, the players used least recently leave the memory (identities made by the
    thousand cannot fill it): one that left says hello again with its token and is welcomed as itself, and a
    stored game between two that left is watched with their names, read back from the database."""
    server = await serve(max_cached_players=3, max_lingering=0)
    south, north, mid = await live_match(server.url, names=("ann", "ben"))
    token = south.welcome["token"]
    await north.send(type="resign", match_id=mid)
    await south.expect("event", where=lambda m: m.get("kind") == "game_over")
    await south.close()
    await north.close()
    for i in range(4):
        await (await Client.open(server.url, f"new{i}")).close()
    players = server.arena.identities.players
    assert len(players) <= 3 and {p.name for p in players.values()}.isdisjoint({"ann", "ben"})
    late = await Client.open(server.url, "late")
    snapshot = await late.request("snapshot", type="watch", match_id=mid)
    assert (snapshot["south"], snapshot["north"], snapshot["status"]) == ("ann", "ben", "finished")
    again = await Client.open(server.url, "ann", token=str(token))
    assert again.welcome["name"] == "ann"
    assert len(server.arena.identities.players) <= 3
    await late.close()
    await again.close()


async def test_players_who_left_are_forgotten_after_the_grace_period(serve: Serve) -> None:
    """When each player's last connection closed is kept only for the grace period (past it a claim gives the same
    answer without it): identities that connect and leave by the thousand do not stay in memory for good."""
    server = await serve(grace_s=0.2)
    for i in range(5):
        await (await Client.open(server.url, f"gone{i}")).close()
    away = server.arena.presence.away_since
    await eventually(lambda: len(away) == 5, what="the five departures noted")
    await asyncio.sleep(0.3)
    await (await Client.open(server.url, "last")).close()
    await eventually(lambda: list(away) == [server.arena.identities.owner("last")],
                     what="only the latest departure kept")

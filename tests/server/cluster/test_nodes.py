"""Several nodes on one PostgreSQL and one Redis, in one process: any node serves any client, every change is
stored once whichever node it reaches, copies follow by the bus, and a drained node's matches are taken over."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import cast

import pytest
import redis.asyncio as redis

from cli.ladder_runner import Ladder, LadderConfig, LadderState
from protocol import Game, Variant
from protocol.actions import parse_action
from server.assembly import RunningServer
from server.core.passwords import PasswordCost
from server.front.outside_engines.gateway import engine_id
from server.logs import LOGGER_NAME
from server.storage import StorageError
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClients, gateway, port_of
from tests.helpers.pg import query
from tests.helpers.redis_server import RedisServer
from tests.helpers.wire import OPERATOR, Client, Json, action_msg, assert_continuous, eventually, is_game_over


async def nodes(serve: Serve, pg_url: str, bus_url: str, count: int = 2, **options: object) -> list[RunningServer]:
    """`count` cluster nodes on one database and one bus."""
    return [await serve(pg_url, bus=bus_url, **options) for _ in range(count)]


async def play_out(seats: dict[str, Client], match_id: str, variant: str, rng: random.Random) -> Game:
    """Play random legal actions to the end, each seat on its own connection (maybe on another node)."""
    game = Game(Variant.parse(variant))
    while not game.over:
        action = rng.choice(game.position.legal_actions())
        mover = seats[game.position.to_move.name]
        ack = await mover.request("ack", **action_msg(action, match_id, game.ply))
        assert ack["ply"] == game.ply
        game.play(action)
    return game


async def across(a: RunningServer, b: RunningServer, variant: str) -> tuple[Client, Client, str]:
    """Alice creates a match (as South) on node A, Bob joins it on node B; both see it live."""
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant=variant, seat="south"))["match_id"])
    bob = await Client.open(b.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)
    await alice.expect("event", where=lambda e: e.get("kind") == "joined" and e["seq"] == 2)
    return alice, bob, mid


def seqs(client: Client, match_id: str) -> list[int]:
    """The event numbers a client received for a match, in order."""
    return [int(e["seq"]) for e in client.events(match_id)]


async def test_players_and_a_spectator_on_different_nodes_play_a_match_to_the_end(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Alice on node A creates, Bob joins on node B, a spectator watches on B: every action is stored once,
    the spectator sees every event in order without a gap or a duplicate, and the ratings move once."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice, bob, mid = await across(a, b, "kalah(4,3)")
    watcher = await Client.open(b.url, "watcher")
    await watcher.send(type="watch", match_id=mid)
    await watcher.expect("snapshot")
    game = await play_out({"SOUTH": alice, "NORTH": bob}, mid, "kalah(4,3)", random.Random(1))
    last = await watcher.expect("event", where=is_game_over)
    got = seqs(watcher, mid)
    assert got == list(range(got[0], last["seq"] + 1))
    rows = await query(pg_url, "SELECT ply FROM actions WHERE match_id = $1 ORDER BY ply", mid)
    assert [r[0] for r in rows] == list(range(game.ply))
    games = await query(pg_url, "SELECT games FROM ratings ORDER BY player_id")
    assert [r[0] for r in games] == [1, 1]


async def test_seq_continues_from_each_first_message_on_both_nodes(serve: Serve, pg_url: str, bus_url: str) -> None:
    """Alice creates on node A, a spectator on each node watches the open match, Bob joins on node B: from each
    one's first message of the match (Bob's is his snapshot), every event numbers one more than the last."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"])
    watchers = [await Client.open(node.url, f"watcher{i}") for i, node in enumerate((a, b))]
    for watcher in watchers:
        await watcher.request("snapshot", type="watch", match_id=mid)
    bob = await Client.open(b.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)
    assert [m["type"] for m in bob.seen if m.get("match_id") == mid] == ["snapshot"]
    await play_out({"SOUTH": alice, "NORTH": bob}, mid, "kalah(4,3)", random.Random(5))
    clients = [alice, bob, *watchers]
    ends = [await client.expect("event", where=is_game_over) for client in clients]
    for client, end in zip(clients, ends, strict=True):
        assert assert_continuous(client, mid)[-1] == end["seq"] == ends[0]["seq"]
    assert assert_continuous(bob, mid)[0] == 3


@contextlib.asynccontextmanager
async def notices_held(bus_url: str) -> AsyncIterator[None]:
    """Redis holds every node's notices back (its writers paused; reads and subscriptions go on) until the block
    ends, as a loaded bus would: what a node stores meanwhile reaches the others only through the database."""
    client = redis.from_url(bus_url)
    try:
        await client.client_pause(60_000, all=False)  # all=False: CLIENT PAUSE ... WRITE
        try:
            yield
        finally:
            await cast(Awaitable[str], client.client_unpause())
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def join_unheard(a: RunningServer, b: RunningServer, bus_url: str,
                       seat: str) -> AsyncIterator[tuple[Client, Client, str]]:
    """Alice creates a match on node A (taking `seat`), Bob joins it on node B; until the block ends, B's notice
    of the join is held back, so that A's copy still waits for a second player."""
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant="kalah(4,3)", seat=seat))["match_id"])
    bob = await Client.open(b.url, "bob")
    async with notices_held(bus_url):
        await bob.request("snapshot", type="join", match_id=mid)
        yield alice, bob, mid


@pytest.mark.parametrize("first", ["move", "resign"])
async def test_a_copy_that_has_not_heard_a_join_reads_the_match_before_refusing(
        serve: Serve, pg_url: str, bus_url: str, first: str) -> None:
    """Bob joins Alice's match on node B while B's notice is held back: Alice's move (or resignation) on node A,
    whose copy still waits for a second player, is served after A reads the match again (never `not_started`),
    and every player sees each event once, in order."""
    a, b = await nodes(serve, pg_url, bus_url)
    async with join_unheard(a, b, bus_url, "south") as (alice, bob, mid):
        if first == "move":
            reply = await next_reply(alice, type="move", match_id=mid, ply=0, bin=1)
            assert reply["type"] == "ack", reply
        else:
            await alice.send(type="resign", match_id=mid)
            reply = await alice.expect("event", where=is_game_over)
            assert reply["reason"] == "resign"
    kind = "action" if first == "move" else "game_over"
    for client in (alice, bob):
        await client.until_received("event", 1, where=lambda e: e["match_id"] == mid and e["kind"] == kind)
    assert assert_continuous(alice, mid) == [2, 3]
    assert assert_continuous(bob, mid) == [3]
    rows = await query(pg_url, "SELECT count(*) FROM actions WHERE match_id = $1", mid)
    assert rows[0][0] == (1 if first == "move" else 0)


async def test_a_copy_that_has_not_heard_a_join_reads_the_match_before_refusing_the_joiner(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Bob joins Alice's match (as South, to move first) on node B while B's notice is held back, then sends his
    move through node A, whose copy knows no seat of his: A reads the match again and serves it (never
    `not_your_match`)."""
    a, b = await nodes(serve, pg_url, bus_url)
    async with join_unheard(a, b, bus_url, "north") as (alice, bob_b, mid):
        bob_a = await Client.open(a.url, "bob", token=bob_b.welcome["token"])
        reply = await next_reply(bob_a, type="move", match_id=mid, ply=0, bin=1)
        assert reply["type"] == "ack", reply
    await alice.until_received("event", 1, where=lambda e: e["match_id"] == mid and e["kind"] == "action")
    assert assert_continuous(alice, mid) == [2, 3]
    rows = await query(pg_url, "SELECT count(*) FROM actions WHERE match_id = $1", mid)
    assert rows[0][0] == 1


async def test_a_join_on_a_copy_that_has_not_heard_the_cancel_is_refused_as_unknown(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Alice cancels her open match on node A (she leaves it) while the notice is held back; Bob, whose node B
    still holds it as open, asks to join: B reads the match, finds it cancelled and refuses with `unknown_match`
    (not `conflict`), and nothing of Bob's is stored."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    mid = str((await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"])
    bob = await Client.open(b.url, "bob")
    await bob.request("snapshot", type="watch", match_id=mid)

    async def cancelled() -> bool:
        """Whether the cancel is stored."""
        return bool((await query(pg_url, "SELECT status FROM matches WHERE id = $1", mid))[0][0] == "cancelled")

    async with notices_held(bus_url):
        await alice.send(type="leave", match_id=mid)
        await eventually(cancelled, what="the cancel stored")
        await bob.send(type="join", match_id=mid)
        assert await bob.error() == "unknown_match"
    rows = await query(pg_url, "SELECT seat1 FROM matches WHERE id = $1", mid)
    assert rows[0][0] is None


async def test_the_same_action_sent_to_two_nodes_at_once_is_stored_once(serve: Serve, pg_url: str,
                                                                        bus_url: str) -> None:
    """One player connected to two nodes sends the same ply with different moves to both at once: exactly
    one is stored, the other is refused (or acknowledged as a duplicate if it was the same move)."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice_a, _bob, mid = await across(a, b, "kalah(6,4)")
    alice_b = await Client.open(b.url, "alice", token=alice_a.welcome["token"])
    await alice_b.request("catch_up", type="sync", match_id=mid, since=0)
    await asyncio.gather(alice_a.send(type="move", match_id=mid, ply=0, bin=1),
                         alice_b.send(type="move", match_id=mid, ply=0, bin=2))
    outcomes = [await next_reply(alice_a), await next_reply(alice_b)]
    kinds = sorted(o["type"] for o in outcomes)
    assert kinds == ["ack", "error"], outcomes
    rows = await query(pg_url, "SELECT ply, action FROM actions WHERE match_id = $1", mid)
    assert len(rows) == 1


async def next_reply(client: Client, **request: object) -> Json:
    """The next ack or error a client gets (events skipped), after sending `request` if one is given."""
    if request:
        await client.send(**request)
    while True:
        msg = await client.next()
        if msg["type"] in ("ack", "error"):
            return msg


async def test_names_are_unique_across_nodes(serve: Serve, pg_url: str, bus_url: str) -> None:
    """A name taken on one node is refused on another, even by two hellos at once."""
    a, b = await nodes(serve, pg_url, bus_url)
    first, second = await asyncio.gather(Client.open(a.url, None), Client.open(b.url, None))
    await asyncio.gather(first.send(type="hello", name="Zoe"), second.send(type="hello", name="zoe"))
    got = [await first.next(), await second.next()]
    replies = sorted(m["type"] for m in got)
    assert replies == ["error", "welcome"], got


async def test_a_drained_node_hands_its_bot_match_to_another_node(serve: Serve, pg_url: str, bus_url: str) -> None:
    """Node A owns a game against a hosted bot and drains: node B takes the match over at once, the bot moves
    from B, and the player, reconnected to B with its token, plays on to the end."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    snap = await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south", opponent="random")
    mid = snap["match_id"]
    assert a.arena.replication.owns(mid)
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    await a.close()
    await eventually(lambda: b.arena.replication.owns(mid), what="the takeover")
    alice = await Client.open(b.url, "alice", token=alice.welcome["token"])
    assert mid in alice.welcome["seats"]
    state = await alice.request("snapshot", type="sync", match_id=mid)
    game = Game.from_record(Variant.parse("kalah(4,3)"), " ".join(state["record"]))
    rng = random.Random(2)
    while not game.over:
        if game.position.to_move.name == "SOUTH":
            action = rng.choice(game.position.legal_actions())
            await alice.request("ack", **action_msg(action, mid, game.ply))
            game.play(action)
        else:
            event = await alice.expect("event", where=lambda e: e.get("ply") == game.ply)
            game.play(parse_action(event["action"]))
    rows = await query(pg_url, "SELECT status FROM matches WHERE id = $1", mid)
    assert rows[0][0] == "finished"


async def test_a_lost_bus_costs_a_reread_not_an_event(serve: Serve, pg_url: str, bus_url: str,
                                                     redis_server: RedisServer) -> None:
    """While Redis is down, moves are still stored; when it is back, node B re-reads its copy and its
    spectator gets every event it missed, in order."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"]
    bob = await Client.open(a.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)
    watcher = await Client.open(b.url, "watcher")
    await watcher.send(type="watch", match_id=mid)
    await watcher.expect("snapshot")
    redis_server.stop()
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    redis_server.start()
    event = await watcher.expect("event", timeout=15, where=lambda e: e.get("ply") == 0)
    assert event["action"] == "1"


async def test_players_seeking_on_different_nodes_are_paired(serve: Serve, pg_url: str, bus_url: str) -> None:
    """A player waiting for an opponent on node A is paired with one who seeks on node B: both get the
    snapshot of the same new match, on their own nodes, and play it."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    assert (await alice.request("seeking", type="seek", variant="kalah(4,3)"))["variant"] == "kalah(4,3)"
    bob = await Client.open(b.url, "bob")
    bob_view = await bob.request("snapshot", type="seek", variant="kalah(4,3)")
    alice_view = await alice.expect("snapshot")
    assert alice_view["match_id"] == bob_view["match_id"]
    assert (alice_view["you"], bob_view["you"]) == ("south", "north")
    await alice.request("ack", type="move", match_id=alice_view["match_id"], ply=0, bin=1)
    event = await bob.expect("event", where=lambda e: e.get("ply") == 0)
    assert event["action"] == "1"


async def test_a_ladder_on_one_node_is_rated_and_read_on_another(serve: Serve, pg_url: str, bus_url: str,
                                                                tmp_path: Path) -> None:
    """A bot ladder run against node A plays its exhibitions there; node B lists the same stored games and the
    same standings, and a ladder resumed against node B finds every game already played."""
    a, b = await nodes(serve, pg_url, bus_url)
    config = LadderConfig(("random", "greedy"), games=4, seed=3, concurrency=2, operator_token=OPERATOR)
    finished = await Ladder(config, LadderState(tmp_path / "a.jsonl"), lambda _: None).run(a.url)
    assert len(finished) == 4
    viewer = await Client.open(b.url, "viewer")
    games = await viewer.request("game_list", type="games", limit=50)
    assert {g["match_id"] for g in games["games"]} == {f.match_id for f in finished}
    table = await viewer.request("standings_table", type="standings")
    assert sorted(row["games"] for row in table["rows"]) == [4, 4]
    again = await Ladder(config, LadderState(tmp_path / "b.jsonl"), lambda _: None).run(b.url)
    assert {f.match_id for f in again} == {f.match_id for f in finished}
    rows = await query(pg_url, "SELECT count(*) FROM matches")
    assert rows[0][0] == 4


async def test_a_bus_that_cannot_be_used_is_one_clear_error(serve: Serve, pg_url: str, tmp_path: Path) -> None:
    """A bus URL redis-py cannot read, a bus nobody answers on, and a bus with a SQLite file are each refused
    at start with a `StorageError` naming what is wrong (`kalah serve` prints it as one line)."""
    for db, bus, words in [(pg_url, "http://example", "redis://"), (pg_url, "redis://127.0.0.1:1", "cannot reach"),
                           (str(tmp_path / "arena.sqlite3"), "redis://127.0.0.1:1", "SQLite")]:
        with pytest.raises(StorageError, match=words):
            await serve(db, bus=bus)


async def test_a_node_restarted_under_its_name_takes_its_matches_back(serve: Serve, pg_url: str,
                                                                      bus_url: str) -> None:
    """A node that stops and starts again under the same `node_id` before its lease runs out (so no other node
    takes its matches) runs their hosted bots again itself."""
    first = await serve(pg_url, bus=bus_url, node_id="steady")
    alice = await Client.open(first.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south",
                               opponent="random"))["match_id"]
    first.arena.closing = True  # stop as a crash would: no handover, the node's row stays
    await first.arena.replication.close()
    again = await serve(pg_url, bus=bus_url, node_id="steady")
    assert again.arena.replication.owns(mid)
    alice = await Client.open(again.url, "alice", token=alice.welcome["token"])
    await alice.request("snapshot", type="sync", match_id=mid)
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    reply = await alice.expect("event", where=lambda e: e.get("side") == "north")
    assert reply["kind"] == "action"


async def test_the_lobby_of_every_node_lists_every_nodes_matches(serve: Serve, pg_url: str, bus_url: str) -> None:
    """An open match created on node A is in node B's lobby listing, and joining it from there makes it live
    in both nodes' listings."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"]
    bob = await Client.open(b.url, "bob")
    listed = await bob.request("matches", type="list")
    assert [(m["match_id"], m["status"], m["south"]) for m in listed["matches"]] == [(mid, "open", "alice")]
    await bob.request("snapshot", type="join", match_id=mid)
    for client in (alice, bob):
        listed = await client.request("matches", type="list")
        assert [(m["match_id"], m["status"], m["north"]) for m in listed["matches"]] == [(mid, "live", "bob")]


async def test_a_clusters_lobby_lists_an_open_match_only_while_its_creator_is_connected(serve: Serve, pg_url: str,
                                                                                          bus_url: str) -> None:
    """As on a single node, an open match is listed on every node while its creator is connected to one, and no
    longer once its creator's last connection closed (before, a cluster listed every stored open match)."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice = await Client.open(a.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"]
    bob = await Client.open(b.url, "bob")
    assert [m["match_id"] for m in (await bob.request("matches", type="list"))["matches"]] == [mid]
    await alice.close()
    listed: list[object] = [mid]
    for _ in range(20):  # a list is made at most about once a second and shared by those who ask meanwhile
        await asyncio.sleep(0.5)
        await bob.send(type="list")
        reply = await bob.next()
        if reply["type"] == "error":  # each list is charged the rows it may hold: wait as the refusal says
            assert reply["code"] == "rate_limited", reply
            continue
        listed = [m["match_id"] for m in reply["matches"]]
        if not listed:
            break
    assert listed == []
    await bob.close()


async def test_a_player_on_another_node_shows_as_connected_until_it_leaves(serve: Serve, pg_url: str,
                                                                          bus_url: str) -> None:
    """Alice on node A sees Bob, connected to node B, as connected; when Bob's connection closes, Alice's node
    tells her he is gone."""
    a, b = await nodes(serve, pg_url, bus_url)
    alice, bob, mid = await across(a, b, "kalah(4,3)")
    both = await alice.expect("presence", where=lambda p: p["south_connected"] and p["north_connected"])
    assert both["match_id"] == mid
    await bob.close()
    gone = await alice.expect("presence", where=lambda p: not p["north_connected"])
    assert gone["south_connected"]


async def test_a_win_cannot_be_claimed_from_a_player_connected_to_another_node(serve: Serve, pg_url: str,
                                                                              bus_url: str) -> None:
    """Alice on node A claims against Bob connected to node B: refused while he is connected there, even past
    the grace period; once his connection closes and the grace period passes, her claim wins."""
    a, b = await nodes(serve, pg_url, bus_url, grace_s=0.3)
    alice, bob, mid = await across(a, b, "kalah(4,3)")
    await alice.send(type="claim", match_id=mid)
    refused = await alice.expect("error")
    assert refused["code"] == "claim_refused" and "connected" in refused["message"]
    await bob.close()

    async def claimed() -> bool:
        """Claim again; whether the game ended by abandonment."""
        await alice.send(type="claim", match_id=mid)
        while True:
            msg = await alice.next()
            if msg["type"] == "error":
                return False
            if msg["type"] == "event" and msg.get("kind") == "game_over":
                return bool(msg["reason"] == "abandonment")

    assert await eventually(claimed, timeout=10, what="the claim after Bob left")


@pytest.mark.parametrize("order", ["hello_first", "kgp_first", "together"])
async def test_one_name_claimed_by_hello_on_one_node_and_kgp_on_another_is_one_player(
        serve: Serve, pg_url: str, bus_url: str, order: str, caplog: pytest.LogCaptureFixture) -> None:
    """A hello as engine `racer` on node A and a KGP agent named `racer` on node B (whose gateway makes its
    account) claim `engine:racer`, one after the other either way or at once: one player holds the name, and
    the other claim is refused by the database with a typed error (`name_taken` for the hello; for the agent,
    `NameTakenError`, after which the gateway takes its next name)."""
    a = await serve(pg_url, bus=bus_url)
    b = await gateway(serve, db=pg_url, bus=bus_url)
    human = await Client.open(a.url, None)
    kgp = KgpClients()
    try:
        agent = await kgp.open(port_of(b))

        async def by_hello() -> Json:
            """Say hello as an engine named racer on node A; the answer."""
            await human.send(type="hello", name="racer", engine=True)
            return await human.next()

        async def by_kgp() -> None:
            """Connect an agent named racer with a token to node B's gateway, until its first game starts."""
            await agent.hello("racer", token="racer-secret")
            await agent.until_game()

        with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
            if order == "hello_first":
                answer = await by_hello()
                await by_kgp()
            elif order == "kgp_first":
                await by_kgp()
                answer = await by_hello()
            else:
                answer, _ = await asyncio.gather(by_hello(), by_kgp())
    finally:
        await kgp.close()
    [(holder,)] = await query(pg_url, "SELECT id FROM players WHERE name_key = 'engine:racer'")
    account = engine_id("racer-secret")
    refused_kgp = [r for r in caplog.records if r.getMessage() == "kgp_name_taken"]
    if answer["type"] == "error":
        assert answer["code"] == "name_taken" and holder == account and not refused_kgp
    else:
        assert answer["type"] == "welcome" and holder == answer["player_id"] and len(refused_kgp) == 1
        [(name,)] = await query(pg_url, "SELECT name FROM players WHERE id = $1", account)
        assert name != "engine:racer" and name.startswith("engine:racer")
    if order != "together":
        assert (answer["type"] == "error") == (order == "kgp_first")


async def test_a_session_revoked_on_one_node_is_closed_on_the_other_within_a_second(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """An account signed in on two nodes revokes, on one, its session held on the other: that connection is closed
    within a second, and the session no longer says hello on either node."""
    a, b = await nodes(serve, pg_url, bus_url, password_cost=PasswordCost(1, 8, 1))
    first = await Client.open(a.url, name=None)
    made = await first.request("signed_in", type="register", name="revoker", password="a long password")
    second = await first.request("signed_in", type="login", name="revoker", password="a long password")
    on_a, on_b = await Client.open(a.url, name=None), await Client.open(b.url, name=None)
    await on_a.send(type="hello", name="x", session=made["session"])
    await on_a.expect("welcome")
    await on_b.send(type="hello", name="x", session=second["session"])
    await on_b.expect("welcome")
    await on_a.request("signed_out", type="revoke", session_id=second["session_id"])
    assert (await on_b.expect("error", timeout=1.0))["code"] == "bad_session"
    await eventually(lambda: on_b.ws.close_code is not None, timeout=1.0, what="the revoked connection closed")
    again = await Client.open(b.url, name=None)
    await again.send(type="hello", name="x", session=second["session"])
    assert await again.error() == "bad_session"


async def test_a_guest_made_an_account_on_one_node_is_refused_its_old_token_on_another(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """A guest known to two nodes registers on one: its guest token no longer says hello on the other."""
    a, b = await nodes(serve, pg_url, bus_url, password_cost=PasswordCost(1, 8, 1))
    guest = await Client.open(b.url, name="convert")
    await guest.close()
    on_a = await Client.open(a.url, name="convert", token=guest.welcome["token"])
    await on_a.request("signed_in", type="register", name="convert", password="a long password")
    again = await Client.open(b.url, name=None)
    await again.send(type="hello", name="convert", token=guest.welcome["token"])
    assert await again.error() == "bad_token"

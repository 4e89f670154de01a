"""Three `kalah serve` nodes on one PostgreSQL and one Redis, a few hundred matches spread over them at random,
and one node killed with SIGKILL in the middle: nothing acknowledged is lost or stored twice, every match
finishes, every spectator whose node survived saw every event in order, and each rated game is rated once."""

from __future__ import annotations

import asyncio
import random
import signal
from typing import cast

from server.cluster.presence import ClusterPresence
from tests.conftest import Serve
from tests.helpers.cluster_play import (
    Nodes,
    Peer,
    Tally,
    loopback,
    play,
    start_match,
    start_node,
    start_nodes,
    stop_nodes,
    watch,
)
from tests.helpers.pg import query
from tests.helpers.wire import Client

VARIANT = "kalah(4,3)"
MATCHES = 200


async def stored_state(url: str) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    """Every stored action by (match, ply), and every match's status."""
    actions = {(r[0], r[1]): r[2] for r in await query(url, "SELECT match_id, ply, action FROM actions")}
    return actions, {r[0]: r[1] for r in await query(url, "SELECT id, status FROM matches")}


async def plies(url: str, match_id: str) -> int:
    """How many actions of a match are stored."""
    return int((await query(url, "SELECT count(*) FROM actions WHERE match_id = $1", match_id))[0][0])


async def test_a_node_killed_mid_play_loses_nothing(pg_url: str, bus_url: str) -> None:
    """200 rated matches, players and a spectator each on a random one of three nodes; the second node is
    killed with SIGKILL once a third of the actions are in; its clients reconnect elsewhere with their tokens."""
    procs = await start_nodes(pg_url, bus_url, [f"node{i}" for i in range(3)])
    rng = random.Random(7)
    nodes = Nodes([url for _, url in procs], rng)
    tally = Tally()
    try:
        peers: list[tuple[Peer, Peer, Peer]] = []
        for i in range(MATCHES):
            trio = tuple(Peer(nodes, f"{role}{i}", loopback(3 * i + k), tally)
                         for k, role in enumerate(("s", "n", "w")))
            await asyncio.gather(*(peer.open() for peer in trio))
            peers.append((trio[0], trio[1], trio[2]))
        match_ids = [await start_match(s, n, VARIANT) for s, n, _ in peers]
        pairs = list(zip(peers, match_ids, strict=True))
        watchers = [asyncio.create_task(watch(w, mid, VARIANT)) for (_, _, w), mid in pairs]
        players = [asyncio.create_task(play(peer, mid, side, VARIANT, i))
                   for i, ((s, n, _), mid) in enumerate(pairs) for peer, side in ((s, "south"), (n, "north"))]
        while len(tally.acked) < MATCHES * 6:
            await asyncio.sleep(0.05)  # waiting on other processes' progress: nothing to await
        victim, victim_url = procs[1]
        nodes.up.remove(victim_url)
        victim.send_signal(signal.SIGKILL)
        await victim.wait()
        await asyncio.wait_for(asyncio.gather(*players), 180)
        seen = await asyncio.wait_for(asyncio.gather(*watchers), 60)
    finally:
        await stop_nodes(procs)
    stored, statuses = await stored_state(pg_url)
    games = [r[0] for r in await query(pg_url, "SELECT games FROM ratings")]
    plies = {r[0]: r[1] for r in await query(pg_url, "SELECT match_id, count(*) FROM actions GROUP BY match_id")}
    assert tally.reconnects > 0, "the killed node had clients"
    for match_id, ply, token in tally.acked:
        assert stored[(match_id, ply)] == token
    assert all(statuses[mid] == "finished" for mid in match_ids)
    assert sorted(games) == [1] * (2 * MATCHES)
    steady = [(view, mid) for (view, ok), mid in zip(seen, match_ids, strict=True) if ok]
    assert len(steady) > MATCHES // 2
    for view, mid in steady:  # after the first answer, every event once, in order, to the end
        assert view.seen == list(range(view.start + 1, view.seq + 1)), mid
        assert view.seq == plies[mid] + 3  # two joins, every action, the end


async def test_clocks_and_bots_of_a_killed_owner_go_on_on_another_node(pg_url: str, bus_url: str) -> None:
    """The node that owns a paced bot exhibition and a timed game is killed with SIGKILL: a surviving node takes
    both over, the bots play the exhibition to its end from there, and the timed game's flag falls there on the
    clock as stored (its player never moved), though no node was running it at the moment it fell."""
    (owner, owner_url), (other, other_url) = await start_nodes(pg_url, bus_url, ["clock0", "clock1"])
    tally = Tally()
    nodes = Nodes([owner_url], random.Random(3))
    try:
        host = Peer(nodes, "host", "127.0.0.1", tally)
        await host.open(owner_url)
        await host.send(type="exhibition", south="random", north="random", variant="kalah(6,4)", pace_ms=300,
                        rated=False)
        while (msg := await host.recv())["type"] != "snapshot":
            pass
        exhibition = msg["match_id"]
        south, north = Peer(nodes, "slow", "127.0.0.1", tally), Peer(nodes, "fast", "127.0.0.1", tally)
        await south.open(owner_url)
        await north.open(other_url)
        timed = await start_match(south, north, "kalah(4,3,clock=4/move)")
        watchers = [Peer(nodes, f"watcher{i}", "127.0.0.1", tally) for i in range(2)]
        for watcher in watchers:
            await watcher.open(other_url)
        owner.send_signal(signal.SIGKILL)
        await owner.wait()
        at_kill = await plies(pg_url, exhibition)
        nodes.up = [other_url]
        results = await asyncio.wait_for(asyncio.gather(watch(watchers[0], exhibition, "kalah(6,4)"),
                                                        watch(watchers[1], timed, VARIANT)), 90)
        assert all(steady and view.over for view, steady in results)
    finally:
        await stop_nodes([(owner, owner_url), (other, other_url)])
    ends = {r[0]: (r[1], r[2]) for r in await query(pg_url, "SELECT id, status, reason FROM matches")}
    assert ends[exhibition][0] == "finished" and ends[exhibition][1] != "time"
    assert await plies(pg_url, exhibition) > at_kill  # the bots moved on from the surviving node
    assert ends[timed] == ("finished", "time")


async def test_a_node_lost_without_goodbye_is_forgotten_and_one_back_from_a_lapsed_lease_is_learned_again(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Alice on node A plays Bob, connected to node B (a process of its own): when B is stopped (SIGSTOP) past its
    lease, A forgets that Bob is connected there and tells Alice he is gone; when B goes on, A learns from Redis
    again that he is there (B says nothing new) and tells Alice; when B is killed with SIGKILL, A forgets him."""
    a = await serve(pg_url, bus=bus_url)
    proc, url = await start_node(pg_url, bus_url, "lapse0")
    try:
        alice = await Client.open(a.url, "alice")
        mid = (await alice.request("snapshot", type="create", variant=VARIANT, seat="south"))["match_id"]
        bob = await Client.open(url, "bob")
        await bob.request("snapshot", type="join", match_id=mid)
        bob_id = bob.welcome["player_id"]
        others = cast(ClusterPresence, a.arena.presence).others
        await alice.expect("presence", where=lambda p: p["south_connected"] and p["north_connected"])
        assert others.get(bob_id) == {"lapse0"}
        proc.send_signal(signal.SIGSTOP)
        await alice.expect("presence", timeout=15, where=lambda p: not p["north_connected"])
        assert bob_id not in others
        proc.send_signal(signal.SIGCONT)
        await alice.expect("presence", timeout=15, where=lambda p: p["north_connected"])
        assert others.get(bob_id) == {"lapse0"}
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        await alice.expect("presence", timeout=15, where=lambda p: not p["north_connected"])
        assert bob_id not in others
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGCONT)
        await stop_nodes([(proc, url)])


async def test_a_rolling_restart_of_every_node_loses_no_game(pg_url: str, bus_url: str) -> None:
    """Three nodes are restarted one after another with SIGTERM while 60 matches are played over them: each
    drained node hands its matches over and closes with 1001, its clients move on, and every game finishes
    with every acknowledged action stored as sent."""
    procs = await start_nodes(pg_url, bus_url, [f"roll{i}" for i in range(3)])
    nodes = Nodes([url for _, url in procs], random.Random(11))
    tally = Tally()
    matches = 60
    try:
        seats = []
        for i in range(matches):
            pair = [Peer(nodes, f"{role}{i}", loopback(2 * i + k), tally) for k, role in enumerate(("rs", "rn"))]
            await asyncio.gather(*(peer.open() for peer in pair))
            seats.append(pair)
        match_ids = [await start_match(s, n, "kalah(6,4)") for s, n in seats]
        players = [asyncio.create_task(play(peer, mid, side, "kalah(6,4)", i))
                   for i, ((s, n), mid) in enumerate(zip(seats, match_ids, strict=True))
                   for peer, side in ((s, "south"), (n, "north"))]
        for turn in range(3):
            target = len(tally.acked) + matches * 3
            while len(tally.acked) < target and not all(p.done() for p in players):
                await asyncio.sleep(0.05)  # waiting on other processes' progress: nothing to await
            proc, url = procs[turn]
            nodes.up.remove(url)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 30) == 0
            procs[turn] = await start_node(pg_url, bus_url, f"roll{turn}")
            nodes.up.append(procs[turn][1])
        await asyncio.wait_for(asyncio.gather(*players), 180)
    finally:
        await stop_nodes(procs)
    stored, statuses = await stored_state(pg_url)
    assert tally.reconnects > 0
    assert all(stored[(mid, ply)] == token for mid, ply, token in tally.acked)
    assert all(statuses[mid] == "finished" for mid in match_ids)

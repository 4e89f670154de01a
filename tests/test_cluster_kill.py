"""Three `kalah serve` nodes on one PostgreSQL and one Redis, a few hundred matches spread over them at random,
and one node killed with SIGKILL in the middle: nothing acknowledged is lost or stored twice, every match
finishes, every spectator whose node survived saw every event in order, and each rated game is rated once."""

from __future__ import annotations

import asyncio
import random
import re
import signal
import sys
from pathlib import Path

import asyncpg

from tests.cluster_play import Nodes, Peer, Tally, loopback, play, start_match, watch

ROOT = Path(__file__).resolve().parent.parent
VARIANT = "kalah(4,3)"
MATCHES = 200


async def start_node(db: str, bus: str, name: str) -> tuple[asyncio.subprocess.Process, str]:
    """Run one cluster node in a child process; returns it and its URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cli.main", "serve", "--port", "0", "--db", db, "--bus", bus, "--node-id", name,
        "--log-level", "warning", "--max-per-address", "1000", "--rate", "200", "--burst", "400",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    found = re.search(r"ws://\S+", line)
    assert found, line
    return proc, found[0]


async def test_a_node_killed_mid_play_loses_nothing(pg_url: str, bus_url: str) -> None:
    """200 rated matches, players and a spectator each on a random one of three nodes; the second node is
    killed with SIGKILL once a third of the actions are in; its clients reconnect elsewhere with their tokens."""
    procs = [await start_node(pg_url, bus_url, f"node{i}") for i in range(3)]
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
        for proc, _ in procs:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()
    conn = await asyncpg.connect(pg_url)
    try:
        stored = {(r[0], r[1]): r[2] for r in await conn.fetch("SELECT match_id, ply, action FROM actions")}
        statuses = {r[0]: r[1] for r in await conn.fetch("SELECT id, status FROM matches")}
        games = [r[0] for r in await conn.fetch("SELECT games FROM ratings")]
        plies = {r[0]: r[1] for r in await conn.fetch("SELECT match_id, count(*) FROM actions GROUP BY match_id")}
    finally:
        await conn.close()
    assert tally.reconnects > 0, "the killed node had clients"
    for match_id, ply, token in tally.acked:
        assert stored[(match_id, ply)] == token
    assert all(statuses[mid] == "finished" for mid in match_ids)
    assert sorted(games) == [1] * (2 * MATCHES)
    steady = [(numbers, mid) for (numbers, ok), mid in zip(seen, match_ids, strict=True) if ok]
    assert len(steady) > MATCHES // 2
    for numbers, mid in steady:
        assert numbers == list(range(numbers[0], numbers[-1] + 1)), mid
        assert numbers[-1] == plies[mid] + 3  # two joins, every action, the end

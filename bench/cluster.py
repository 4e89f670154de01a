"""Cluster benchmark: durable actions per second and ack latency for 1 SQLite node and 1, 2, 3 PostgreSQL nodes.

Starts a throwaway PostgreSQL and redis-server (as the tests do), then for each setting runs
`kalah serve` nodes in child processes and MATCHES pairs of random players, each player on a
node picked at random, playing rated games back to back for SECONDS. Prints, per setting, the
actions acknowledged per second (each one committed before its ack), the latency from sending
an action to its ack (p50, p99), the nodes' CPU and the clients' own CPU share of the machine
(the clients run here too, so they compete with the nodes for the same cores).

    python bench/cluster.py --matches 100 --seconds 15

`--baseline DIR` also runs every setting on the code of another source tree (a `git worktree` of an
earlier commit, its C extension built), alternating with this one in the same run, on fresh
databases for each, and prints the change of each figure: a before/after on one loaded machine.

    git worktree add /tmp/before <commit> && cp bots/_search*.so /tmp/before/bots/
    python bench/cluster.py --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import FrozenHeap  # noqa: E402

from tests.helpers.cluster_play import Nodes, Peer, Tally, loopback, play, start_match, start_node, stop_nodes  # noqa: E402
from tests.helpers.pg import PostgresServer, find_bindir  # noqa: E402
from tests.helpers.redis_server import RedisServer  # noqa: E402

VARIANT = "kalah(6,4)"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def services_cpu() -> float:
    """CPU seconds so far of every postgres and redis-server process on the machine."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if name.startswith(("postgres", "redis-server")):
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def slot(nodes: Nodes, index: int, tally: Tally, until: float) -> None:
    """Two players on random nodes play games back to back until `until`."""
    south = Peer(nodes, f"s{index}", loopback(2 * index, 2), tally)  # under each address's message budget
    north = Peer(nodes, f"n{index}", loopback(2 * index + 1, 2), tally)
    await asyncio.gather(south.open(), north.open())
    game = 0
    while time.perf_counter() < until:
        match_id = await start_match(south, north, VARIANT)
        await asyncio.gather(play(south, match_id, "south", VARIANT, game),
                             play(north, match_id, "north", VARIANT, game))
        game += 1
    await asyncio.gather(south.close(), north.close())


async def run(setting: str, dbs: list[str], bus: str | None, matches: int, seconds: float,
              root: Path = ROOT) -> dict[str, Any]:
    """One setting: start its nodes (the code of source tree `root`), play, stop them; the figures."""
    procs = [await start_node(db, bus, f"{setting}-{i}", root=root) for i, db in enumerate(dbs)]
    try:
        nodes = Nodes([url for _, url in procs], random.Random(1))
        tally = Tally()
        cpu0 = [cpu_seconds(p.pid) for p, _ in procs]
        services0 = services_cpu()
        frozen = FrozenHeap()  # the clients' own collections are not the nodes' latency
        own0, wall0 = time.process_time(), time.perf_counter()
        try:
            await asyncio.gather(*(slot(nodes, i, tally, wall0 + seconds) for i in range(matches)))
        finally:
            frozen.stop()
        wall = time.perf_counter() - wall0
        own = time.process_time() - own0
        cpu = sum(cpu_seconds(p.pid) - c for (p, _), c in zip(procs, cpu0, strict=True))
        services = services_cpu() - services0
    finally:
        await stop_nodes(procs)
    lat = sorted(tally.latencies)
    return {"actions_s": len(tally.acked) / wall, "p50_ms": 1000 * statistics.median(lat),
            "p99_ms": 1000 * lat[int(0.99 * (len(lat) - 1))], "nodes_cpu": cpu / wall, "clients_cpu": own / wall,
            "services_cpu": services / wall, "node_ms_per_action": 1000 * cpu / max(1, len(tally.acked)),
            "errors": sum(tally.errors.values()), "codes": dict(tally.errors)}


def settings(pg: PostgresServer, redis: RedisServer, tmp: Path, tag: str) -> list[tuple[str, list[str], str | None]]:
    """Every setting on fresh databases (named by `tag`): one SQLite node, one PostgreSQL node, two and three nodes."""
    found: list[tuple[str, list[str], str | None]] = [
        ("1 SQLite node", [str(tmp / f"arena-{tag}.sqlite3")], None), ("1 PostgreSQL node", [pg.new_database()], None)]
    for n in (2, 3):
        db = pg.new_database()
        found.append((f"{n} PostgreSQL nodes", [db] * n, redis.url))
    return found


def line(name: str, figures: dict[str, Any]) -> str:
    """One setting's figures."""
    return (f"{name:28} {figures['actions_s']:8.0f} actions/s  p50 {figures['p50_ms']:6.1f} ms  "
            f"p99 {figures['p99_ms']:6.1f} ms  CPU: nodes {figures['nodes_cpu']:.2f} "
            f"({figures['node_ms_per_action']:.2f} ms/action), "
            f"PostgreSQL+Redis {figures['services_cpu']:.2f}, "
            f"clients {figures['clients_cpu']:.2f} cores  errors {figures['codes'] or 0}")


async def main(args: argparse.Namespace) -> None:
    """Every setting in turn on fresh databases (with `--baseline`, each also on the baseline's code); print it."""
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL's server binaries are needed: bash tests/install-test-deps.sh")
    baseline = None if args.baseline is None else Path(args.baseline).resolve()
    pg = PostgresServer(bindir)
    pg.start()
    redis = RedisServer("redis-server")
    redis.start()
    rows = []
    pairs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            mine = settings(pg, redis, Path(tmp), "this")
            theirs = settings(pg, redis, Path(tmp), "base") if baseline is not None else [None] * len(mine)
            for (name, dbs, bus), base in zip(mine, theirs, strict=True):
                tag = name.split()[0] + name.split()[1][:2]
                if base is not None and baseline is not None:
                    before = await run(tag + "b", base[1], base[2], args.matches, args.seconds, baseline)
                    print(line(f"{name} (baseline)", before), flush=True)
                figures = await run(tag, dbs, bus, args.matches, args.seconds)
                rows.append((name, figures))
                print(line(name, figures), flush=True)
                if base is not None:
                    pairs.append((name, before, figures))
    finally:
        redis.close()
        pg.stop()
    base_rate = rows[0][1]["actions_s"]
    print(f"\n{args.matches} matches of {VARIANT} for {args.seconds:.0f} s each, {os.cpu_count()} cores shared "
          "by nodes, clients, PostgreSQL and Redis; relative to one SQLite node:")
    for name, figures in rows:
        print(f"  {name:20} {figures['actions_s'] / base_rate:5.2f}x")
    if pairs:
        print(f"\nthis tree against the baseline {baseline} (same run, alternating):")
        for name, before, after in pairs:
            print(f"  {name:20} actions/s {after['actions_s'] / before['actions_s']:5.2f}x  "
                  f"p50 {after['p50_ms'] - before['p50_ms']:+6.1f} ms  "
                  f"p99 {after['p99_ms'] - before['p99_ms']:+6.1f} ms  "
                  f"node ms/action {after['node_ms_per_action'] - before['node_ms_per_action']:+.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100, help="pairs of players playing at once")
    parser.add_argument("--seconds", type=float, default=15.0, help="how long each setting plays")
    parser.add_argument("--baseline", help="another source tree to run every setting on too, for a before/after")
    asyncio.run(main(parser.parse_args()))

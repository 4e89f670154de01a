"""Benchmark of the opening explorer: the answer's time from a database of many stored games, against 50 ms.

Run: `python bench/explore.py [--games 100000] [--variant "kalah(6,4)"] [--db PATH] [--asks 200]`.

It fills a fresh SQLite database (or reuses `--db` if it already holds the games) with random games between
200 players (a tenth of them hosted bots; ratings 1000-2200; three in four rated), each written straight through
the storage layer with its index rows, as the arena writes a game that ends (many games to a write). Then it times
the answers (a first, cold one printed apart): the server's own work (the index read by its key and the answer
built, no values) at the start, at positions sampled from the stored games at plies 1-10, and with filters (rated,
a rating range, one player); and whole `explore` requests over a websocket to a server on the database. Each
prints the median and the 99th percentile against the goal, with the size of the database. A figure, not a test:
nothing fails on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from websockets.asyncio.client import connect

from protocol.actions import Sow
from protocol.explore_messages import Explore
from protocol.game import Game
from protocol.names import name_key
from protocol.variant import Variant
from server.core.explorer import after_moves, explored, start_of, tallied
from server.storage import Op, Storage, open_storage
from server.storage.explore import FinishedGame, Mover, explore_ops, merged, position_key
from server.storage.writer import op_action, op_create, op_finish, op_join, op_player

GOAL_MS = 50.0
PLAYERS = 200
GAMES_PER_WRITE = 500


def random_game(variant: Variant, rng: random.Random) -> Game:
    """A game of random legal sowings to its end."""
    game = Game(variant)
    while not game.over:
        game.play(Sow(rng.choice(game.position.legal_bins())))
    return game


def game_ops(index: int, variant: Variant, game: Game, rng: random.Random,
             players: list[tuple[str, float, bool]]) -> tuple[list[Op], list[Op]]:
    """The rows of one finished game (match, seats, actions, end) and its index rows."""
    match_id = f"b{index:07d}"
    (p0, r0, bot0), (p1, r1, bot1) = rng.sample(players, 2)
    rated = rng.random() < 0.75
    result = game.result or 0
    winner = None if result == 0 else int(result < 0)
    reason = game.position.end
    assert reason is not None
    ops = [op_create(match_id, variant.text(), rated, 0), op_join(match_id, 0, p0, False),
           op_join(match_id, 1, p1, True)]
    ops += [op_action(match_id, ply, int(game.positions[ply].to_move), action.token(), (0, 0))
            for ply, action in enumerate(game.actions)]
    ops.append(op_finish(match_id, result, winner, reason))
    finished = FinishedGame(match_id, variant, [a.token() for a in game.actions], rated,
                            (Mover(p0, r0, bot0), Mover(p1, r1, bot1)), winner, reason, float(index))
    return ops, explore_ops(finished, game)


async def fill(storage: Storage, variant: Variant, games: int, rng: random.Random) -> list[Game]:
    """Store `games` random games with their index rows; returns a few of them (to sample positions from)."""
    players = [(f"bp{i:03d}", rng.uniform(1000, 2200), i % 10 == 0) for i in range(PLAYERS)]
    await storage.write([op_player(pid, pid, None, "greedy" if bot else None) for pid, _, bot in players])
    kept: list[Game] = []
    started = time.perf_counter()
    for first in range(0, games, GAMES_PER_WRITE):
        rows: list[Op] = []
        index_rows: list[Op] = []
        for index in range(first, min(games, first + GAMES_PER_WRITE)):
            game = random_game(variant, rng)
            if len(kept) < 500:
                kept.append(game)
            ops, explore = game_ops(index, variant, game, rng, players)
            rows += ops
            index_rows += explore
        await storage.write(rows + merged(index_rows))
        done = min(games, first + GAMES_PER_WRITE)
        if done % 10_000 == 0 or done == games:
            print(f"  {done:,} games stored ({time.perf_counter() - started:.0f} s)", flush=True)
    return kept


def percentiles(times: list[float]) -> str:
    """Median and 99th percentile in ms, against the goal."""
    ordered = sorted(times)
    median = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    verdict = "within" if p99 < GOAL_MS else "over"
    return f"median {median:6.2f} ms, p99 {p99:6.2f} ms ({verdict} the {GOAL_MS:.0f} ms goal)"


async def answer(storage: Storage, msg: Explore) -> Any:
    """The server's answer without values: the index read by its key, the filters, the answer built."""
    variant, position = start_of(msg)
    player = None if msg.player is None else name_key(msg.player)
    tallies = tallied(msg, await storage.explored(position_key(variant, position), player))
    return explored(msg, position, tallies, after_moves(position, list(tallies)), {})


async def time_direct(storage: Storage, requests: list[Explore]) -> tuple[list[float], int]:
    """Each request's answer time (ms), and the most games one answer counted."""
    times = []
    most = 0
    for msg in requests:
        started = time.perf_counter()
        reply = await answer(storage, msg)
        times.append((time.perf_counter() - started) * 1000)
        most = max(most, reply.games)
    return times, most


async def time_wire(db: Path, requests: list[Explore]) -> list[float]:
    """Each request's time (ms) as a client sees it: sent on a websocket to a server on the database, answered."""
    from server.assembly import start_server

    running = await start_server(db, synchronous="NORMAL", shared_reads_s=0.0)
    times = []
    try:
        async with connect(f"ws://{running.host}:{running.port}/", max_size=2**22) as ws:
            for msg in requests:
                started = time.perf_counter()
                await ws.send(msg.model_dump_json())
                reply = json.loads(await ws.recv())
                times.append((time.perf_counter() - started) * 1000)
                if reply.get("type") == "error" and reply.get("code") == "rate_limited":
                    await asyncio.sleep(reply.get("retry_ms", 1000) / 1000)
                    times.pop()
    finally:
        await running.close()
    return times


async def main() -> None:
    """Fill (or reuse) the database, then print the answer times."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--variant", default="kalah(6,4)")
    parser.add_argument("--db", type=Path, default=Path("/tmp/kalah-bench-explore.sqlite3"))
    parser.add_argument("--asks", type=int, default=200, help="requests timed of each kind")
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    variant = Variant.parse(args.variant)
    rng = random.Random(args.seed)
    storage = await open_storage(args.db, synchronous="NORMAL")
    try:
        stored = await storage.fetch_rows("SELECT count(*) FROM matches")
        if int(stored[0][0]) >= args.games:
            print(f"{args.db}: {int(stored[0][0]):,} games already stored")
            kept = [Game.from_record(variant, g.record) for g in await storage.list_games(500, variant=variant.text())]
        else:
            if int(stored[0][0]):
                raise SystemExit(f"{args.db} holds other games: remove it, or name another with --db")
            print(f"storing {args.games:,} random {variant.text()} games in {args.db} ...")
            kept = await fill(storage, variant, args.games, rng)
        index_rows = int((await storage.fetch_rows("SELECT count(*) FROM explore"))[0][0])
        size = args.db.stat().st_size / 2**20
        print(f"database: {size:,.0f} MiB, {index_rows:,} index rows")
        text = variant.text()
        start = [Explore(variant=text, values=False) for _ in range(args.asks)]
        sampled = []
        for _ in range(args.asks):
            game = rng.choice(kept)
            ply = rng.randint(1, min(10, len(game.positions) - 1))
            sampled.append(Explore(variant=text, position=game.positions[ply].fen(), values=False))
        filtered = [Explore(variant=text, values=False, rated=True, min_rating=1400, max_rating=1800,
                            player=f"bp{rng.randrange(PLAYERS):03d}" if i % 2 else None, movers="people")
                    for i in range(args.asks)]
        started = time.perf_counter()
        await answer(storage, start[0])
        cold = (time.perf_counter() - started) * 1000
        print(f"first answer (cold: the database's pages not yet read): {cold:.1f} ms")
        for name, requests in (("the start", start), ("plies 1-10", sampled), ("start, filtered", filtered)):
            times, most = await time_direct(storage, requests)
            print(f"answer, {name:<16} (up to {most:,} games): {percentiles(times)}")
    finally:
        await storage.close()
    wire = await time_wire(args.db, [*start[:50], *sampled[:50], *filtered[:50]])
    print(f"explore over a websocket, 150 requests:       {percentiles(wire)}")


if __name__ == "__main__":
    asyncio.run(main())

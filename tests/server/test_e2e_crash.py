"""A server process killed with SIGKILL mid-play loses no acknowledged action, and play goes on."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from protocol import Game, Variant, parse_action
from server.storage import fetch_game
from tests.helpers.cluster_play import start_node
from tests.helpers.wire import Client, Json, action_msg, eventually, is_game_over, live_match

VARIANT = "kalah(6,4,pie=on)"
MATCHES = 4


async def hammer(south: Client, north: Client, match_id: str, seed: int, acked: list[tuple[int, str]]) -> None:
    """Play random actions as fast as acks come back, noting each acknowledged one, until cut off."""
    rng = random.Random(seed)
    game = Game(Variant.parse(VARIANT))
    seats = {"SOUTH": south, "NORTH": north}
    try:
        while not game.over:
            mover = seats[game.position.to_move.name]
            action = rng.choice(game.position.legal_actions())
            await mover.send(**action_msg(action, match_id, game.ply))
            ack = await mover.expect("ack", timeout=10)
            assert ack["ply"] == game.ply
            acked.append((game.ply, action.token()))
            game.play(action)
            if action.token() == "swap":
                seats = {"SOUTH": north, "NORTH": south}
    except (ConnectionClosed, OSError):
        return


async def finish(south: Client, north: Client, snapshot: Json, seed: int) -> Game:
    """Play a resumed match to its end from its snapshot."""
    rng = random.Random(seed)
    game = Game.from_record(Variant.parse(VARIANT), " ".join(snapshot["record"]))
    by_name = {south.welcome["name"]: south, north.welcome["name"]: north}
    seats = {"SOUTH": by_name[snapshot["south"]], "NORTH": by_name[snapshot["north"]]}
    while not game.over:
        mover = seats[game.position.to_move.name]
        action = rng.choice(game.position.legal_actions())
        await mover.send(**action_msg(action, snapshot["match_id"], game.ply))
        ack = await mover.expect("ack")
        assert ack["ply"] == game.ply and not ack["duplicate"]
        game.play(action)
        if action.token() == "swap":
            seats = {"SOUTH": seats["NORTH"], "NORTH": seats["SOUTH"]}
    return game


async def test_sigkill_loses_no_acknowledged_action(tmp_path: Path) -> None:
    """Kill -9 during several matches; after a restart every acked action is there and play continues."""
    db = tmp_path / "arena.sqlite3"
    proc, url = await start_node(str(db), None, "crash")
    pairs: list[tuple[Client, Client, str]] = []
    try:
        for i in range(MATCHES):
            pairs.append(await live_match(url, VARIANT, (f"s{i}", f"n{i}")))
        acked: list[list[tuple[int, str]]] = [[] for _ in pairs]
        tasks = [asyncio.create_task(hammer(s, n, m, i, acked[i])) for i, (s, n, m) in enumerate(pairs)]
        await eventually(lambda: min(len(a) for a in acked) >= 5, timeout=30, what="five acked actions per match")
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await asyncio.wait_for(asyncio.gather(*tasks), 15)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()

    proc, url = await start_node(str(db), None, "crash")
    resumed = 0
    try:
        for i, (south, north, match_id) in enumerate(pairs):
            stored = fetch_game(db, match_id)
            assert stored is not None
            record = stored.record.split()
            assert [(ply, record[ply]) for ply, _ in acked[i]] == acked[i]
            back = [await Client.open(url, c.welcome["name"], token=c.welcome["token"]) for c in (south, north)]
            if stored.status == "finished":
                continue
            assert all(c.welcome["seats"] == [match_id] for c in back)
            events = (await back[0].request("catch_up", type="sync", match_id=match_id, since=0))["events"]
            assert len(events) == 2 + len(record) and [e["action"] for e in events if e["kind"] == "action"] == record
            await back[1].send(type="sync", match_id=match_id)
            snapshot = await back[1].expect("snapshot")
            assert snapshot["record"] == record and snapshot["status"] == "live"
            game = await finish(back[0], back[1], snapshot, seed=100 + i)
            resumed += 1
            over = await back[0].expect("event", where=is_game_over)
            assert over["result"] == game.result
            replayed = Game.from_record(Variant.parse(VARIANT), [parse_action(t) for t in game.record().split()])
            assert replayed.result == game.result
        assert resumed >= 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0

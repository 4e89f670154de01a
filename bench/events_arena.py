"""Arena pairing benchmark: E entrants in one arena for a fixed time, then the same players paired by `seek`.

Starts `kalah serve` in a child process with a fresh database. E clients (from loopback
addresses, 5 to an address: under its message budget) say hello and play random legal moves in whatever game they are
given. First, for the given length, each looks for its next game with `seek` (the lobby's
pairing: two players waiting for the same variant), the baseline of the same run; then they
all enter one arena of that length (it starts when the last has joined; only the first
follows the event's standings, since one process reads every player's messages). After each phase
every player resigns the game it is still in. For both
it prints the games played, the latency from a game's end (the client's `game_over`) to its
next game (that game's `snapshot`), p50 and p99, and the server's CPU seconds per game.

    python bench/events_arena.py --entrants 200 --seconds 120
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import action_msg, loopback, proc_usage, quantile, spawn_server
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol import Game, Variant, parse_action

VARIANT = "kalah(4,3,clock=300+5)"


@dataclass
class Phase:
    """What the players measured in one phase (the arena, or seeks)."""

    name: str
    games: int = 0
    waits: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cpu: float = 0.0


class Player:
    """One client: plays random legal actions in each game it gets, and times the wait between games."""

    def __init__(self, ws: ClientConnection, name: str, rng: random.Random) -> None:
        self.ws = ws
        self.name = name
        self.rng = rng
        self.games: dict[str, tuple[Game, str]] = {}
        self.ended_at: float | None = None

    async def send(self, **msg: Any) -> None:
        """Send one message."""
        await self.ws.send(json.dumps(msg))

    async def move_if_mine(self, match_id: str) -> None:
        """Play a random legal action when it is this player's turn."""
        game, side = self.games[match_id]
        if not game.over and game.position.to_move.name.lower() == side:
            action = self.rng.choice(game.position.legal_actions())
            await self.ws.send(action_msg(action, match_id, game.ply))

    async def run(self, phase: Phase, until: float, seek: bool) -> None:
        """Play game after game until `until` (loop time); in seek mode look for the next game after each."""
        loop = asyncio.get_running_loop()
        if seek:
            await self.send(type="seek", variant=VARIANT)
        while loop.time() < until:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), max(0.01, until - loop.time()))
            except TimeoutError:
                return
            msg = json.loads(raw)
            kind = msg["type"]
            if kind == "snapshot" and msg.get("you") and msg["status"] == "live" and msg["match_id"] not in self.games:
                if self.ended_at is not None:
                    phase.waits.append(loop.time() - self.ended_at)
                    self.ended_at = None
                game = Game.from_record(Variant.parse(msg["variant"]), [parse_action(t) for t in msg["record"]])
                self.games[msg["match_id"]] = (game, msg["you"])
                await self.move_if_mine(msg["match_id"])
            elif kind == "event" and msg["match_id"] in self.games:
                game, _ = self.games[msg["match_id"]]
                if msg["kind"] == "action":
                    game.play(parse_action(msg["action"]))
                    await self.move_if_mine(msg["match_id"])
                elif msg["kind"] == "game_over":
                    del self.games[msg["match_id"]]
                    phase.games += 1
                    self.ended_at = loop.time()
                    if seek and loop.time() < until:
                        await self.send(type="seek", variant=VARIANT)
            elif kind == "error" and msg["code"] not in ("stale_ply", "game_over", "out_of_turn"):
                phase.errors.append(f"{self.name}: {msg['code']}: {msg['message']}")


async def run(args: argparse.Namespace) -> int:
    """Run both phases and print their figures."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = await spawn_server(Path(tmp) / "arena.sqlite3", "--log-level", "warning",
                                       "--max-per-address", "1000")
        try:
            return await _measure(args, proc.pid, url)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 30)
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def _phase(players: list[Player], pid: int, name: str, until: float, seek: bool) -> Phase:
    """One phase: every player plays until `until`; then each resigns what it still plays, and the rest is read."""
    phase = Phase(name)
    cpu0 = proc_usage(pid)[0]
    await asyncio.gather(*(p.run(phase, until, seek) for p in players))
    phase.cpu = proc_usage(pid)[0] - cpu0
    for p in players:
        for match_id in list(p.games):
            await p.send(type="resign", match_id=match_id)
        p.games.clear()
        p.ended_at = None
    for p in players:
        with contextlib.suppress(TimeoutError, ConnectionClosed):
            while True:
                await asyncio.wait_for(p.ws.recv(), 0.2)
    return phase


async def _measure(args: argparse.Namespace, pid: int, url: str) -> int:
    """Connect the players, run the seeks, then the arena; print the figures."""
    rng = random.Random(args.seed)
    players: list[Player] = []
    try:
        for i in range(args.entrants):
            ws = await connect(url, local_addr=(loopback(i, per_address=5), 0), max_size=2**22)
            player = Player(ws, f"b{i}", random.Random(rng.random()))
            await player.send(type="hello", name=player.name)
            json.loads(await ws.recv())
            players.append(player)
        loop = asyncio.get_running_loop()
        seeks = await _phase(players, pid, "seek", loop.time() + args.seconds, seek=True)
        host = players[0]
        settings = {"name": "Bench", "kind": "arena", "duration_s": args.seconds, "variant": VARIANT,
                    "min_entrants": args.entrants, "max_entrants": max(args.entrants, 2)}
        await host.send(type="event_create", settings=settings)
        while (answer := json.loads(await host.ws.recv()))["type"] != "event_state":
            pass
        for p in players:  # entrants follow the event when they join; all but the host stop (one client
            await p.send(type="event_join", event_id=answer["event_id"])  # process reads every player's messages)
            if p is not host:
                await p.send(type="event", event_id=answer["event_id"], follow=False)
        arena = await _phase(players, pid, "arena", loop.time() + args.seconds, seek=False)
    finally:
        for p in players:
            await p.ws.close()
    print(f"{args.entrants} entrants, {args.seconds} s a phase, {VARIANT}, random legal moves, one server process")
    print(f"{'phase':<7} {'games':>6} {'wait p50 ms':>12} {'wait p99 ms':>12} {'cpu ms/game':>12} {'errors':>7}")
    for phase in (seeks, arena):
        waits = sorted(phase.waits)
        per_game = 1000 * phase.cpu / phase.games if phase.games else float("nan")
        print(f"{phase.name:<7} {phase.games:>6} {1000 * quantile(waits, 0.5):>12.1f} "
              f"{1000 * quantile(waits, 0.99):>12.1f} {per_game:>12.2f} {len(phase.errors):>7}")
    for error in (arena.errors + seeks.errors)[:5]:
        print("  error:", error)
    return 1 if arena.errors or seeks.errors else 0


def main() -> None:
    """Parse the flags and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=120, help="length of each phase (the arena's duration)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.time()
    status = asyncio.run(run(args))
    print(f"({time.time() - started:.0f} s in all)", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()

"""Players and spectators of a cluster: each on a node of its own, reconnecting to another when theirs dies.

Used by the multi-node kill test and by `bench/cluster.py`. A player follows its match only from
what its own connection tells it (events, catch-ups, snapshots), moves when it is its turn, and
notes every acknowledged action; when its node goes away it says hello to another node with its
token and re-syncs from the last event it saw. A spectator notes the number of every event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from protocol.actions import parse_action
from protocol.game import Game
from protocol.variant import Variant
from tests.helpers.paths import ROOT_DIR
from tests.helpers.processes import KALAH, spawn

Json = dict[str, Any]
ROOT = ROOT_DIR
Node = tuple[asyncio.subprocess.Process, str]
"""A `kalah serve` child process and its websocket URL."""


async def start_node(db: str, bus: str | None, name: str, *flags: str, root: Path = ROOT,
                     kalah: Sequence[str] = KALAH) -> Node:
    """One `kalah serve` in a child process (a cluster node when `bus` is given; more `flags` for it), with room
    for many clients from one address, running the code of the source tree `root` (this one by default) with the
    command `kalah`; returns it and its URL."""
    extra = [*flags] if bus is None else ["--bus", bus, "--node-id", name, *flags]
    proc = await spawn(  # killed after the test if it is left running
        *kalah, "serve", "--port", "0", "--db", db, *extra, "--log-level", "warning",
        "--max-per-address", "1000", "--rate", "500", "--burst", "1000",
        cwd=root, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    found = re.search(r"ws://\S+", line)
    assert found, line
    return proc, found[0]


async def start_nodes(db: str, bus: str, names: Sequence[str], *flags: str) -> list[Node]:
    """Cluster nodes named `names` (each as `start_node` starts one), started at once."""
    return list(await asyncio.gather(*(start_node(db, bus, name, *flags) for name in names)))


async def stop_nodes(nodes: list[Node]) -> None:
    """Stop the nodes still running (SIGTERM: each drains, all at once) and wait for them (30 s, then SIGKILL)."""
    running = [proc for proc, _ in nodes if proc.returncode is None]
    for proc in running:
        proc.terminate()
    await asyncio.gather(*map(_stopped, running))


async def _stopped(proc: asyncio.subprocess.Process) -> None:
    """Wait for a node told to stop (30 s, then SIGKILL)."""
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def loopback(index: int, per: int = 20) -> str:
    """The loopback source address of the `index`-th connection, 127.1.x.y, `per` connections to one, each
    address in a /24 network of its own (each address has its own message budget on a node, and each network
    its own connection budget: the clients of a node killed in a test reconnect to the others)."""
    n = index // per
    return f"127.1.{n % 250}.{n // 250 + 1}"


@dataclass
class Tally:
    """What the clients saw: acknowledged actions, their latencies, reconnections and errors."""

    acked: list[tuple[str, int, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    reconnects: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    finished: int = 0


class Nodes:
    """The nodes' URLs, and which are still up."""

    def __init__(self, urls: list[str], rng: random.Random) -> None:
        self.urls = urls
        self.up = list(urls)
        self.rng = rng

    def pick(self) -> str:
        """A node that is up, at random."""
        return self.rng.choice(self.up)


class Peer:
    """One websocket client with an identity that survives reconnection."""

    def __init__(self, nodes: Nodes, name: str, source: str, tally: Tally) -> None:
        self.nodes = nodes
        self.name = name
        self.source = source
        self.tally = tally
        self.token: str | None = None
        self.ws: ClientConnection | None = None
        self.url = ""

    async def open(self, url: str | None = None) -> None:
        """Connect to `url` (or a node that is up) and say hello (with the token after the first time)."""
        for _attempt in range(50):
            self.url = url or self.nodes.pick()
            try:
                self.ws = await connect(self.url, max_size=2**22, local_addr=(self.source, 0), open_timeout=10)
                hello: Json = {"type": "hello", "name": self.name}
                if self.token is not None:
                    hello["token"] = self.token
                await self.ws.send(json.dumps(hello))
                while True:
                    msg = await self.recv()
                    if msg["type"] == "welcome":
                        self.token = msg["token"]
                        return
                    if msg["type"] == "error":
                        raise RuntimeError(f"hello refused: {msg}")
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError):
                url = None
                await asyncio.sleep(0.1)
        raise RuntimeError(f"{self.name} could not reach any node")

    async def send(self, **msg: Any) -> None:
        """Send one message."""
        assert self.ws is not None
        await self.ws.send(json.dumps(msg))

    async def recv(self) -> Json:
        """The next message."""
        assert self.ws is not None
        data: Json = json.loads(await self.ws.recv())
        return data

    async def close(self) -> None:
        """Close the connection."""
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()


class MatchView:
    """A match as one connection has been told it: the game and the last event number."""

    def __init__(self, variant: str) -> None:
        self.variant = Variant.parse(variant)
        self.game = Game(self.variant)
        self.seq = 0
        self.over = False
        self.live = False
        self.seen: list[int] = []
        """The number of every event received, repeats included (a repeat is a fault of the server)."""
        self.start = 0
        """The number of the last event the first snapshot stood for (0: the first answer was events)."""

    def take(self, msg: Json) -> None:
        """Apply an event, a catch-up or a snapshot."""
        if msg["type"] == "snapshot":
            if not self.seen and not self.seq:
                self.start = msg["seq"]
            self.game = Game.from_record(self.variant, " ".join(msg["record"]))
            self.seq = msg["seq"]
            self.over = msg["status"] == "finished"
            self.live = msg["status"] != "open"
        elif msg["type"] == "catch_up":
            for event in msg["events"]:
                self.take(event | {"type": "event"})
        elif msg["type"] == "event":
            self.seen.append(msg["seq"])
            if msg["seq"] <= self.seq:
                return
            self.seq = msg["seq"]
            if msg["kind"] == "joined" and msg["seq"] >= 2:
                self.live = True
            if msg["kind"] == "action" and msg["ply"] == self.game.ply:
                self.game.play(parse_action(msg["action"]))
            elif msg["kind"] == "game_over":
                self.over = True


async def rejoin(peer: Peer, request: str, match_id: str, since: int) -> None:
    """Reconnect to a node that is up and ask for the match again from event `since` (until it works)."""
    peer.tally.reconnects += 1
    while True:
        await peer.close()
        await peer.open()
        try:
            await peer.send(type=request, match_id=match_id, since=since)
            return
        except (ConnectionClosed, OSError):
            continue


async def play(peer: Peer, match_id: str, side: str, variant: str, seed: int) -> None:
    """Play one seat of a match to its end from what the connection shows, through node deaths.

    The action at a ply is a function of the match, the ply and `seed`, so one resent after an
    error or a reconnection is the same action (acknowledged as a duplicate if it was stored)."""
    view = MatchView(variant)
    sent: dict[int, tuple[float, str]] = {}
    """Ply -> when and what this connection sent (kept until the game has moved past it)."""
    acked: set[int] = set()
    try:
        await peer.send(type="sync", match_id=match_id)
    except (ConnectionClosed, OSError):
        await rejoin(peer, "sync", match_id, 0)
    while not view.over:
        try:
            msg = await asyncio.wait_for(peer.recv(), 30)
            if msg.get("match_id") != match_id:
                continue
            if msg["type"] == "ack":
                mine = sent.get(msg["ply"])
                if mine is not None and msg["ply"] not in acked:
                    acked.add(msg["ply"])
                    peer.tally.latencies.append(time.perf_counter() - mine[0])
                    peer.tally.acked.append((match_id, msg["ply"], mine[1]))
            elif msg["type"] == "error":
                peer.tally.errors[msg["code"]] = peer.tally.errors.get(msg["code"], 0) + 1
                sent.clear()
                await peer.send(type="sync", match_id=match_id, since=view.seq)
                continue
            view.take(msg)
            game = view.game
            if view.live and not view.over and not game.over and game.position.to_move.name.lower() == side \
                    and game.ply not in sent:
                legal = game.position.legal_actions()  # the same choice at a ply every time it is sent
                action = legal[random.Random(f"{match_id}:{game.ply}:{seed}").randrange(len(legal))]
                sent[game.ply] = (time.perf_counter(), action.token())
                await peer.send(type="move", match_id=match_id, ply=game.ply, bin=int(action.token()))
        except (ConnectionClosed, OSError, TimeoutError):
            sent.clear()
            await rejoin(peer, "sync", match_id, view.seq)
    peer.tally.finished += 1


async def watch(peer: Peer, match_id: str, variant: str) -> tuple[MatchView, bool]:
    """Follow a match to its end; what was seen, and whether the connection never dropped."""
    view = MatchView(variant)
    steady = True
    try:
        await peer.send(type="watch", match_id=match_id)
    except (ConnectionClosed, OSError):
        steady = False
        await rejoin(peer, "watch", match_id, 0)
    while not view.over:
        try:
            msg = await asyncio.wait_for(peer.recv(), 60)
        except (ConnectionClosed, OSError, TimeoutError):
            steady = False
            await rejoin(peer, "watch", match_id, view.seq)
            continue
        if msg.get("match_id") == match_id:
            view.take(msg)
    return view, steady


async def start_match(south: Peer, north: Peer, variant: str) -> str:
    """South creates a rated match on its node, North joins on its own; returns the match id."""
    await south.send(type="create", variant=variant, seat="south")
    while (msg := await south.recv())["type"] != "snapshot":
        pass
    match_id = str(msg["match_id"])
    await north.send(type="join", match_id=match_id)
    while (msg := await north.recv())["type"] not in ("snapshot", "error"):
        pass
    if msg["type"] == "error":
        raise RuntimeError(f"join refused: {msg}")
    return match_id

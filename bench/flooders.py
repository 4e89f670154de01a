"""Flooding clients for `bench/flood.py`, in a process of their own so they do not slow the honest clients.

From each of `--addresses` (loopback source addresses), at once:

- exhibitors: identities asking for a bot exhibition every `--exhibit-every` seconds (the quotas
  say `too_many` while they hold their share);
- analysts: one `analyse` of the longest budget (5 s) in flight each, asked again at once;
- listers: `games {limit: 200}` and `list` faster than the message rate limit (`rate_limited`,
  then closed with 1008);
- stalled readers: spectators that stop reading their socket (a small receive buffer) and keep
  asking to `watch` live exhibitions from their first event and for 200 stored games, the
  replies and the followed matches' events piling up unread;
- idlers: connections that never say hello, opened past the per-address cap;
- newcomers: connect, say hello under a new name, close, again at once (new identities);
- openers: identities creating open matches as fast as the quotas allow.

Every one reconnects after the server drops it. Runs until its standard input closes, then
prints one JSON line: replies by type, refusals by error code, handshakes refused, connections
dropped by role and reason, how long the stalled readers lasted.

    python bench/flooders.py ws://127.0.0.1:8765 --addresses 127.0.0.1,127.0.0.3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import re
import statistics
import sys
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from harness import HandshakeRefused, LeanConnection

from cli.serve import fast_loop_factory
from protocol import Position, Sow, Variant

TYPE = re.compile(rb'^\{"type":"([a-z_]+)"')
STALLED_RCVBUF = 4096
"""Receive buffer of a stalled reader: the server's unsent bytes pile up in its own buffer at once."""


def kind_of(raw: bytes) -> str:
    """A server message's type, read from its first bytes (the server writes `type` first)."""
    found = TYPE.match(raw[:40])
    return found[1].decode() if found else "?"


def sample_positions(variant: Variant, count: int, seed: int = 7) -> list[str]:
    """Text forms of positions 4 to 16 sowings into random games (for `analyse` requests)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        pos = Position.initial(variant)
        for _ in range(rng.randint(4, 16)):
            if pos.over:
                break
            pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
        if not pos.over and not pos.transfer_pending:
            out.append(pos.fen())
    return out


@dataclass
class Tally:
    """What the flooders saw."""

    replies: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    handshakes_refused: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    opened: int = 0
    stalled_lifetimes: list[float] = field(default_factory=list)
    stalled_survivors: list[float] = field(default_factory=list)
    """Ages of the stalled readers still connected when the flood stopped."""

    def summary(self) -> dict[str, Any]:
        """The tally as one JSON-ready object."""
        life = self.stalled_lifetimes
        return {"replies": dict(self.replies), "refusals": dict(self.refusals),
                "handshakes_refused": dict(self.handshakes_refused), "dropped": dict(self.dropped),
                "opened": self.opened, "stalled_median_s": statistics.median(life) if life else None,
                "stalled_survivors": len(self.stalled_survivors),
                "stalled_oldest_s": max(self.stalled_survivors, default=None)}


class Flood:
    """The flooding clients of every address, and what they saw."""

    def __init__(self, url: str, args: argparse.Namespace) -> None:
        self.url = url
        self.args = args
        self.variant = args.variant
        self.tally = Tally()
        self.stop = asyncio.Event()
        self.gate = asyncio.Semaphore(20)
        self.positions = sample_positions(Variant.parse(args.variant), 200)
        self.pairs = [tuple(pair.split("/")) for pair in args.exhibitions.split(",")]
        self.live: deque[str] = deque(maxlen=64)
        self.names = itertools.count()

    async def pause(self, seconds: float, conn: LeanConnection | None = None) -> bool:
        """Wait `seconds`, less if `conn` closes; whether to carry on (neither closed nor stopping)."""
        if conn is None:
            await asyncio.sleep(seconds)
        else:
            await asyncio.wait({conn.closed}, timeout=seconds)
        return not self.stop.is_set() and (conn is None or not conn.closed.done())

    def count(self, raw: bytes) -> None:
        """Count one message a flooder read: a refusal by its code, anything else by its type."""
        kind = kind_of(raw)
        if kind == "error":
            self.tally.refusals[json.loads(raw)["code"]] += 1
        else:
            self.tally.replies[kind] += 1
            if kind == "snapshot":  # an exhibition started: something for the stalled readers to watch
                self.live.append(json.loads(raw)["match_id"])

    async def connect(self, address: str, rcvbuf: int | None = None) -> LeanConnection | None:
        """A new connection from `address`, retried after each refusal; None once the flood stops."""
        while not self.stop.is_set():
            try:
                async with self.gate:
                    conn = await LeanConnection.open(self.url, address, rcvbuf)
            except HandshakeRefused as exc:
                self.tally.handshakes_refused[f"HTTP {exc.status}"] += 1
            except (OSError, TimeoutError) as exc:
                self.tally.handshakes_refused[type(exc).__name__] += 1
            else:
                self.tally.opened += 1
                return conn
            await self.pause(1.0)
        return None

    async def hello(self, conn: LeanConnection, role: str, token: str | None) -> str:
        """Say hello (as a new name, or with the identity's token); the identity's token."""
        name = f"flood-{role}-{next(self.names)}"
        conn.send(json.dumps({"type": "hello", "name": name, "token": token}))
        reply = await asyncio.wait_for(conn.recv(), 30)
        if reply["type"] != "welcome":
            raise ConnectionError(f"hello refused: {reply}")
        token = reply["token"]
        assert isinstance(token, str)
        return token

    async def session(self, role: str, address: str, body: Callable[[LeanConnection], Awaitable[None]],
                      hello: bool = True, rcvbuf: int | None = None) -> None:
        """Run a role's `body` over a connection, and again over a new one each time the server drops it."""
        token: str | None = None
        while (conn := await self.connect(address, rcvbuf)) is not None:
            opened = time.monotonic()
            with contextlib.suppress(ConnectionError, TimeoutError):
                if hello:
                    token = await self.hello(conn, role, token)
                await body(conn)
            if self.stop.is_set() and role == "stalled" and not conn.closed.done():
                self.tally.stalled_survivors.append(time.monotonic() - opened)
            if not self.stop.is_set():
                if not conn.closed.done():
                    await self.pause(5.0, conn)  # a write failed: the close comes next
                self.tally.dropped[f"{role}: {conn.close_reason}"] += 1
                if role == "stalled":
                    self.tally.stalled_lifetimes.append(time.monotonic() - opened)
            conn.abort()
            await self.pause(0.5)

    async def repeat(self, conn: LeanConnection, every: float, message: Callable[[], dict[str, Any]]) -> None:
        """Send `message()` every `every` seconds until the connection closes or the flood stops."""
        while True:
            conn.send(json.dumps(message()))
            if not await self.pause(every, conn):
                return

    async def exhibitor(self, conn: LeanConnection) -> None:
        """Ask for exhibitions as fast as the quotas allow (and follow those started)."""
        conn.handler = self.count
        pairs = itertools.cycle(self.pairs)

        def ask() -> dict[str, Any]:
            """The next exhibition request."""
            south, north = next(pairs)
            return {"type": "exhibition", "variant": self.variant, "south": south, "north": north, "rated": False}

        await self.repeat(conn, self.args.exhibit_every, ask)

    async def analyst(self, conn: LeanConnection) -> None:
        """Keep one longest-budget analysis in flight; ask again at once when it is answered or refused."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[None] = loop.create_future()

        def on_message(raw: bytes) -> None:
            """Count the answer and let the next request go."""
            self.count(raw)
            if kind_of(raw) in ("analysis", "error") and not answer.done():
                answer.set_result(None)

        conn.handler = on_message
        rng = random.Random(self.tally.opened)
        while not self.stop.is_set() and not conn.closed.done():
            answer = loop.create_future()
            conn.send(json.dumps({"type": "analyse", "variant": self.variant, "position": rng.choice(self.positions),
                                  "budget_ms": 5000}))
            await asyncio.wait({answer, conn.closed}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
            await self.pause(0.05)

    async def lister(self, conn: LeanConnection) -> None:
        """Ask for 200 stored games and the match list, faster than the message rate limit."""
        conn.handler = self.count
        reads: list[dict[str, Any]] = [{"type": "games", "limit": 200, "status": None}, {"type": "list"}]
        asks = itertools.cycle(reads)
        await self.repeat(conn, 1 / self.args.lister_rate, lambda: next(asks))

    async def stalled(self, conn: LeanConnection) -> None:
        """Stop reading, and keep asking to watch live matches and for 200 stored games (replies pile up unread)."""
        conn.stop_reading()
        rng = random.Random(self.tally.opened)
        turn = itertools.count()

        def ask() -> dict[str, Any]:
            """In turn: every event of a recent exhibition (following it), or 200 stored games."""
            if next(turn) % 2:
                return {"type": "games", "limit": 200, "status": None}
            match_id = rng.choice(self.live) if self.live else "m-none"
            return {"type": "watch", "match_id": match_id, "since": 0}

        await self.repeat(conn, 1 / self.args.stalled_rate, ask)

    async def newcomer(self, address: str) -> None:
        """Make new identities from `address` one after another: connect, hello with a new name, close."""
        while not self.stop.is_set():
            conn = await self.connect(address)
            if conn is None:
                return
            conn.send(json.dumps({"type": "hello", "name": f"flood-new-{next(self.names)}"}))
            with contextlib.suppress(ConnectionError, TimeoutError):
                self.count_json(await asyncio.wait_for(conn.recv(), 30))
            conn.abort()
            await self.pause(0.01)

    def count_json(self, msg: dict[str, Any]) -> None:
        """`count` for a message already decoded."""
        if msg["type"] == "error":
            self.tally.refusals[msg["code"]] += 1
        else:
            self.tally.replies[msg["type"]] += 1

    async def opener(self, conn: LeanConnection) -> None:
        """Create open matches as fast as the quotas allow (each waits for an opponent who never comes)."""
        conn.handler = self.count
        await self.repeat(conn, self.args.open_every, lambda: {"type": "create", "variant": self.variant})

    async def idler(self, conn: LeanConnection) -> None:
        """Hold a connection without saying hello until the server closes it."""
        conn.handler = self.count
        await self.pause(3600, conn)

    async def run(self, ready: Callable[[], None]) -> None:
        """Start every role on every address (stalled readers and idlers last); run until `stop`."""
        a = self.args
        tasks: list[asyncio.Task[None]] = []

        def start(count: int, role: str, body: Callable[[LeanConnection], Awaitable[None]], **kw: Any) -> None:
            """`count` sessions of a role on each address."""
            for address in a.addresses.split(","):
                for _ in range(count):
                    tasks.append(asyncio.create_task(self.session(role, address, body, **kw)))

        start(a.exhibitors, "exhibitor", self.exhibitor)
        start(a.openers, "opener", self.opener)
        for address in a.addresses.split(","):
            for _ in range(a.newcomers):
                tasks.append(asyncio.create_task(self.newcomer(address)))
        start(a.analysts, "analyst", self.analyst)
        start(a.listers, "lister", self.lister)
        await self.pause(2.0)  # exhibitions are live by now: the stalled readers have matches to watch
        start(a.stalled, "stalled", self.stalled, rcvbuf=STALLED_RCVBUF)
        await self.pause(1.0)
        start(a.idlers, "idler", self.idler, hello=False)
        ready()
        await self.stop.wait()
        await asyncio.wait(tasks, timeout=3)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def add_flood_options(parser: argparse.ArgumentParser) -> None:
    """The options that size the flood (shared with `bench/flood.py`, which passes them on)."""
    parser.add_argument("--exhibitors", type=int, default=4, help="identities asking for exhibitions, per address")
    parser.add_argument("--exhibit-every", type=float, default=0.2, metavar="S",
                        help="seconds between one exhibitor's requests")
    parser.add_argument("--exhibitions", default="perfect/alphabeta:8,alphabeta:8/alphabeta:8",
                        help="bot pairs SOUTH/NORTH the exhibitors ask for, in turn")
    parser.add_argument("--analysts", type=int, default=3,
                        help="connections keeping a 5 s analysis in flight, per address")
    parser.add_argument("--listers", type=int, default=2, help="connections reading 200 games at a time, per address")
    parser.add_argument("--lister-rate", type=float, default=40.0, help="requests a second of one lister")
    parser.add_argument("--stalled", type=int, default=12, help="spectators that stop reading, per address")
    parser.add_argument("--stalled-rate", type=float, default=20.0,
                        help="requests a second of one (a watch and 200 games in turn)")
    parser.add_argument("--idlers", type=int, default=48, help="connections that never say hello, per address")
    parser.add_argument("--newcomers", type=int, default=0,
                        help="loops making new identities (connect, hello, close), per address")
    parser.add_argument("--openers", type=int, default=0, help="identities creating open matches, per address")
    parser.add_argument("--open-every", type=float, default=0.2, metavar="S",
                        help="seconds between one opener's requests")


async def run(args: argparse.Namespace) -> None:
    """Flood until standard input closes, then print the tally."""
    flood = Flood(args.url, args)
    loop = asyncio.get_running_loop()
    flooding = asyncio.create_task(flood.run(lambda: print("ready", flush=True)))
    await loop.run_in_executor(None, sys.stdin.read)
    flood.stop.set()
    await flooding
    print(json.dumps(flood.tally.summary()), flush=True)


def main() -> None:
    """Parse the options and flood."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--addresses", default="127.0.0.1", help="comma-separated source addresses")
    parser.add_argument("--variant", default="kalah(6,4)")
    add_flood_options(parser)
    with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
        runner.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

"""The Redis side of a cluster: change notices between nodes, node notices, and who is connected where.

Redis pub/sub delivers at most once: a notice can be lost while a node is slow or reconnecting.
Notices therefore carry only a match's id and version, and a node that sees a newer version
reads what it lacks from the database; after its subscription was lost it re-reads every match
it holds. Commands (notices and presence) go out in order through one queue, in pipelines.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from server.logs import event as log_event

MATCH_CHANNEL = "kalah:m:"
"""The channel of one match (`kalah:m:<match id>`): `<version> [<change as JSON>]` notices, one per stored
change, heard only by the nodes that hold the match."""
NODES = "kalah:nodes"
"""The channel of node notices: `left <node>` (a draining node's matches are free to take),
`paired <node> <player> <match>` (a player waiting on that node was given a seat by another),
and `on|off <node> <player>` (a player's first connection on a node opened, or its last closed)."""
MAX_QUEUED = 100_000
"""Commands kept while Redis is unreachable; beyond, the oldest are dropped (readers re-read on reconnect)."""


def describe_bus(url: str) -> str:
    """A Redis URL without its password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, userinfo = head.partition("://")
    return f"{scheme}://{userinfo.split(':')[0]}:***@{tail}"


def seeks_key(variant: str) -> str:
    """The queue of players waiting for an opponent in `variant`."""
    return f"kalah:seeks:{variant}"


def online_key(player_id: str) -> str:
    """The set of nodes where `player_id` has a connection."""
    return f"kalah:online:{player_id}"


def away_key(player_id: str) -> str:
    """When `player_id`'s last connection anywhere closed (UNIX seconds)."""
    return f"kalah:away:{player_id}"


class Bus:
    """One node's connection to Redis: an ordered publisher and a resubscribing listener."""

    def __init__(self, url: str, on_change: Callable[[str, int, str | None], None], on_gap: Callable[[], None],
                 on_node_left: Callable[[str], None], on_paired: Callable[[str, str, str], None],
                 on_presence: Callable[[bool, str, str], None], on_watching: Callable[[str], None]) -> None:
        self.url = url
        self.redis: redis.Redis = redis.from_url(url, decode_responses=True, health_check_interval=10)
        self.on_change = on_change
        self.on_gap = on_gap
        self.on_node_left = on_node_left
        self.on_paired = on_paired
        self.on_presence = on_presence
        self.on_watching = on_watching
        self.matches: set[str] = set()
        """The matches whose channels this node listens to (those it holds)."""
        self.channel_changes: asyncio.Queue[tuple[bool, str]] = asyncio.Queue()
        self.pubsub: Any = None
        self.queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.subscribed = False
        self.published = 0
        self.received = 0
        self.reconnects = 0
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Check Redis answers, then start publishing and listening (raises if it cannot be reached)."""
        await self.redis.ping()
        ready = asyncio.Event()
        self._tasks = [asyncio.create_task(self._publisher()), asyncio.create_task(self._listener(ready)),
                       asyncio.create_task(self._channels())]
        await ready.wait()

    @property
    def status(self) -> str:
        """`ok` while subscribed, else `reconnecting`."""
        return "ok" if self.subscribed else "reconnecting"

    def send(self, *command: Any) -> None:
        """Queue one Redis command (sent in order, soon, in a pipeline with its neighbours)."""
        if self.queue.qsize() >= MAX_QUEUED:
            self.queue.get_nowait()
            self.queue.task_done()
        self.queue.put_nowait(command)

    def changed(self, match_id: str, version: int, payload: str | None) -> None:
        """Tell the nodes holding `match_id` that it is now at `version` (and, if given, by what change)."""
        self.send("PUBLISH", MATCH_CHANNEL + match_id, str(version) if payload is None else f"{version} {payload}")

    def watch(self, match_id: str) -> None:
        """Listen to a match's channel (this node now holds it); `on_watching` follows once Redis confirms."""
        if match_id not in self.matches:
            self.matches.add(match_id)
            self.channel_changes.put_nowait((True, match_id))

    def unwatch(self, match_id: str) -> None:
        """Stop listening to a match's channel (this node let it go)."""
        if match_id in self.matches:
            self.matches.discard(match_id)
            self.channel_changes.put_nowait((False, match_id))

    def node_left(self, node_id: str) -> None:
        """Tell every node that `node_id` has let its matches go."""
        self.send("PUBLISH", NODES, f"left {node_id}")

    def seek(self, variant: str, entry: str) -> None:
        """Queue a player waiting for an opponent in `variant` (`<node> <player id> <name>`)."""
        self.send("RPUSH", seeks_key(variant), entry)

    def unseek(self, variant: str, entry: str) -> None:
        """Take a waiting player off the queue (paired on its own node, or gone)."""
        self.send("LREM", seeks_key(variant), 0, entry)

    async def take_seek(self, variant: str) -> str | None:
        """The longest-waiting player of `variant`, taken off the queue (None: nobody waits)."""
        entry = await self.redis.lpop(seeks_key(variant))
        return entry if isinstance(entry, str) else None

    def paired(self, node_id: str, player_id: str, match_id: str) -> None:
        """Tell `node_id` that its waiting player now has a seat in `match_id`."""
        self.send("PUBLISH", NODES, f"paired {node_id} {player_id} {match_id}")

    def online(self, player_id: str, node_id: str) -> None:
        """`player_id` has a connection on `node_id`."""
        self.send("SADD", online_key(player_id), node_id)
        self.send("PUBLISH", NODES, f"on {node_id} {player_id}")

    def offline(self, player_id: str, node_id: str) -> None:
        """`player_id`'s last connection on `node_id` closed."""
        self.send("SREM", online_key(player_id), node_id)
        self.send("SET", away_key(player_id), repr(time.time()), "EX", 7 * 86400)
        self.send("PUBLISH", NODES, f"off {node_id} {player_id}")

    async def presence(self, player_id: str) -> tuple[set[str], float | None]:
        """The nodes where `player_id` is connected, and since when it has been away (UNIX seconds)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.smembers(online_key(player_id))
            pipe.get(away_key(player_id))
            nodes, away = await pipe.execute()
        return set(nodes), None if away is None else float(away)

    async def _publisher(self) -> None:
        """Send queued commands in order, many per round trip; keep them while Redis is unreachable."""
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty() and len(batch) < 1000:
                batch.append(self.queue.get_nowait())
            delay = 0.05
            while True:
                try:
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for command in batch:
                            pipe.execute_command(*command)
                        await pipe.execute()
                    self.published += len(batch)
                    for _ in batch:
                        self.queue.task_done()
                    break
                except (RedisError, OSError) as exc:
                    log_event("bus_send_failed", error=repr(exc), waiting=len(batch), level=30)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)

    async def _listener(self, ready: asyncio.Event) -> None:
        """Subscribe and dispatch notices; after a lost subscription, subscribe again and re-read everything."""
        delay = 0.05
        first = True
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.subscribe(NODES)
                self.pubsub = pubsub  # from now on new matches are subscribed to as they come
                watched = sorted(self.matches)  # taken after: none is missed (one may be subscribed twice)
                for start in range(0, len(watched), 1000):
                    await pubsub.subscribe(*(MATCH_CHANNEL + m for m in watched[start:start + 1000]))
                self.subscribed = True
                delay = 0.05
                if first:
                    ready.set()
                else:
                    self.reconnects += 1
                    log_event("bus_resubscribed", reconnects=self.reconnects)
                    self.on_gap()
                first = False
                async for message in pubsub.listen():
                    self._dispatch(message)
            except (RedisError, OSError) as exc:
                self.subscribed = False
                self.pubsub = None
                log_event("bus_lost", error=repr(exc), level=30)
                if first:
                    ready.set()
                    first = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _channels(self) -> None:
        """Subscribe to and unsubscribe from match channels as matches come and go (many at once); while the
        bus is lost nothing is sent: the listener subscribes to every held match when it is back."""
        while True:
            changes = [await self.channel_changes.get()]
            while not self.channel_changes.empty() and len(changes) < 1000:
                changes.append(self.channel_changes.get_nowait())
            pubsub = self.pubsub
            if pubsub is None:  # the listener subscribes to every held match once the bus is back
                continue
            wanted = {m for on, m in changes if on and m in self.matches}
            dropped = {m for on, m in changes if not on and m not in self.matches}
            try:
                if wanted:
                    await pubsub.subscribe(*(MATCH_CHANNEL + m for m in wanted))
                if dropped:
                    await pubsub.unsubscribe(*(MATCH_CHANNEL + m for m in dropped))
            except (RedisError, OSError) as exc:  # the listener notices too, and subscribes again to all
                log_event("bus_subscribe_failed", error=repr(exc), level=30)

    def _dispatch(self, message: dict[str, Any]) -> None:
        """One message from a channel: a change notice, a node notice, or Redis confirming a subscription."""
        channel = str(message.get("channel", ""))
        kind = message.get("type")
        if kind == "subscribe" and channel.startswith(MATCH_CHANNEL):
            self.on_watching(channel[len(MATCH_CHANNEL):])
            return
        if kind != "message":
            return
        self.received += 1
        data = str(message.get("data", ""))
        if channel.startswith(MATCH_CHANNEL):
            version, _, payload = data.partition(" ")
            if version.isdigit():
                self.on_change(channel[len(MATCH_CHANNEL):], int(version), payload or None)
        elif data.startswith("left "):
            self.on_node_left(data[5:])
        elif data.startswith(("on ", "off ")):
            parts = data.split()
            if len(parts) == 3:
                self.on_presence(parts[0] == "on", parts[1], parts[2])
        elif data.startswith("paired "):
            parts = data.split()
            if len(parts) == 4:
                self.on_paired(parts[1], parts[2], parts[3])

    async def close(self) -> None:
        """Send what is queued (briefly), stop listening, close the connection."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), 1.0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.redis.aclose()

"""The Redis side of a cluster: change notices between nodes, node notices, and who is connected where.

Redis pub/sub delivers at most once: a notice can be lost while a node is slow or reconnecting.
Notices therefore carry a match's version (and the change, which a copy at the version before
applies at once), and a node that sees a newer version reads what it lacks from the database;
after its subscription was lost it re-reads every match it holds. Commands (notices and
presence) go out in order through one queue, in pipelines. What is sent and heard are the typed
messages of `server.cluster.messages`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from server.cluster.messages import (
    BusMessageError,
    MatchNotice,
    NodeNotice,
    Online,
    Waiting,
    parse_match_notice,
    parse_node_notice,
)
from server.logs import event as log_event

MATCH_CHANNEL = "kalah:m:"
"""The channel of one match (`kalah:m:<match id>`): a `MatchNotice` per stored change, heard only by the nodes
that hold the match."""
NODES = "kalah:nodes"
"""The channel of node notices (`NodeNotice`): a draining node left, a player waiting on a node was given a
seat by another, a player's first connection on a node opened or its last closed."""
ADDRESSES_TTL_S = 60
"""Who is connected to a node is kept this long after the node last renewed it (it does every heartbeat)."""
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


def sessions_key(node_id: str) -> str:
    """The hash of who is connected to `node_id`: player id -> its addresses there (separated by spaces)."""
    return f"kalah:sessions:{node_id}"


def away_key(player_id: str) -> str:
    """When `player_id`'s last connection anywhere closed (UNIX seconds)."""
    return f"kalah:away:{player_id}"


AWAY_NOW = ("local t = redis.call('TIME') "
            "redis.call('SET', KEYS[1], t[1] .. '.' .. string.format('%06d', t[2]), 'EX', ARGV[1]) return 1")
"""Note in KEYS[1] when a player's last connection closed, by Redis's clock (kept ARGV[1] seconds)."""


async def stop_tasks(tasks: list[asyncio.Task[None]], rounds: int = 50) -> None:
    """Cancel `tasks` until each has ended, again every 0.1 s while any runs on: a library may take one
    cancellation for its own timeout or a dropped connection and carry on. After `rounds` tries the rest are
    left running, logged `bus_task_stuck`."""
    for _ in range(rounds):
        running = [task for task in tasks if not task.done()]
        if not running:
            return
        for task in running:
            task.cancel()
        await asyncio.wait(running, timeout=0.1)
    log_event("bus_task_stuck", tasks=sum(1 for task in tasks if not task.done()), level=40)


class Bus:
    """One node's connection to Redis: an ordered publisher and a resubscribing listener."""

    def __init__(self, url: str, on_match: Callable[[str, MatchNotice | None], None],
                 on_node: Callable[[NodeNotice], None], on_gap: Callable[[], None],
                 on_watching: Callable[[str], None]) -> None:
        self.url = url
        self.redis: redis.Redis = redis.from_url(url, decode_responses=True, health_check_interval=10)
        self.on_match = on_match
        """Called with each notice of a held match (None: one this node could not read)."""
        self.on_node = on_node
        self.on_gap = on_gap
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
        self._closing = False
        """Set by `close`: the tasks end at their next turn, even where a cancellation reached them as an error."""

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

    def notify(self, match_id: str, notice: MatchNotice) -> None:
        """Tell the nodes holding `match_id` what changed."""
        self.send("PUBLISH", MATCH_CHANNEL + match_id, notice.text())

    def announce(self, notice: NodeNotice) -> None:
        """Tell every node."""
        self.send("PUBLISH", NODES, notice.text())

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

    def seek(self, variant: str, entry: Waiting) -> None:
        """Queue a player waiting for an opponent in `variant`."""
        self.send("RPUSH", seeks_key(variant), entry.text())

    def unseek(self, variant: str, entry: Waiting) -> None:
        """Take a waiting player off the queue (paired on its own node, or gone)."""
        self.send("LREM", seeks_key(variant), 0, entry.text())

    async def waiting(self, variant: str, limit: int) -> list[tuple[str, Waiting | None]]:
        """The `limit` longest-waiting entries of `variant`'s queue, each as stored and as read (None: this node
        cannot read it), left in the queue."""
        found: list[tuple[str, Waiting | None]] = []
        for raw in await self.redis.lrange(seeks_key(variant), 0, limit - 1):
            text = raw if isinstance(raw, str) else raw.decode()
            try:
                found.append((text, Waiting.parse(text)))
            except BusMessageError as exc:
                log_event("bus_unreadable", error=str(exc), level=30)
                found.append((text, None))
        return found

    async def all_waiting(self, limit: int) -> list[tuple[str, Waiting]]:
        """The readable entries of every variant's seek queue (the longest waiting of each first), at most `limit`,
        left in the queues."""
        found: list[tuple[str, Waiting]] = []
        prefix = seeks_key("")
        async for key in self.redis.scan_iter(match=prefix + "*", count=100):
            variant = (key if isinstance(key, str) else key.decode())[len(prefix):]
            found += [(variant, entry) for _, entry in await self.waiting(variant, limit) if entry is not None]
            if len(found) >= limit:
                break
        return found[:limit]

    async def take(self, variant: str, text: str) -> bool:
        """Take one queue entry, as stored, off `variant`'s queue now; False if it is gone (another node took it,
        or its player left)."""
        return bool(await self.redis.lrem(seeks_key(variant), 1, text))

    def online(self, player_id: str, node_id: str) -> None:
        """`player_id` has a connection on `node_id`."""
        self.send("SADD", online_key(player_id), node_id)
        self.announce(Online(True, node_id, player_id))

    def offline(self, player_id: str, node_id: str) -> None:
        """`player_id`'s last connection on `node_id` closed."""
        self.send("SREM", online_key(player_id), node_id)
        self.send("EVAL", AWAY_NOW, 1, away_key(player_id), 7 * 86400)
        self.announce(Online(False, node_id, player_id))

    def addresses(self, node_id: str, player_id: str, addresses: tuple[str, ...]) -> None:
        """The addresses of `player_id`'s connections on `node_id` now (none: it has left the node)."""
        if addresses:
            self.send("HSET", sessions_key(node_id), player_id, " ".join(addresses))
            self.keep_addresses(node_id)
        else:
            self.send("HDEL", sessions_key(node_id), player_id)

    def all_addresses(self, node_id: str, table: dict[str, tuple[str, ...]]) -> None:
        """Who is connected to `node_id` now, with their addresses, in place of what Redis held."""
        self.send("DEL", sessions_key(node_id))
        if table:
            self.send("HSET", sessions_key(node_id), *[x for pid, a in table.items() for x in (pid, " ".join(a))])
            self.keep_addresses(node_id)

    def keep_addresses(self, node_id: str) -> None:
        """Keep who is connected to `node_id` for `ADDRESSES_TTL_S` more seconds (a node that dies stops renewing
        it)."""
        self.send("EXPIRE", sessions_key(node_id), ADDRESSES_TTL_S)

    async def connected(self, nodes: list[str]) -> dict[str, dict[str, tuple[str, ...]]]:
        """Who is connected to each of `nodes`, with their addresses (as the nodes told Redis)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for node in nodes:
                pipe.hgetall(sessions_key(node))
            tables = await pipe.execute()
        return {node: {pid: tuple(text.split()) for pid, text in table.items()}
                for node, table in zip(nodes, tables, strict=True)}

    async def online_nodes(self, player_ids: list[str]) -> list[set[str]]:
        """The nodes where each of `player_ids` is connected (as the nodes told Redis), in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player_id in player_ids:
                pipe.smembers(online_key(player_id))
            found = await pipe.execute()
        return [set(nodes) for nodes in found]

    async def presence(self, player_id: str) -> tuple[set[str], float | None]:
        """The nodes where `player_id` is connected, and how long ago its last connection closed (seconds by
        Redis's clock, which also noted when: no node's clock comes in; never below zero; None: not known)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.smembers(online_key(player_id))
            pipe.get(away_key(player_id))
            pipe.time()
            nodes, away, (seconds, micros) = await pipe.execute()
        return set(nodes), None if away is None else max(0.0, seconds + micros / 1e6 - float(away))

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
                    if self._closing:
                        return
                    log_event("bus_send_failed", error=repr(exc), waiting=len(batch), level=30)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)

    async def _listener(self, ready: asyncio.Event) -> None:
        """Subscribe and dispatch notices; after a lost subscription, subscribe again and re-read everything."""
        delay = 0.05
        first = True
        while not self._closing:
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
                if self._closing:  # closing: end here rather than subscribe again
                    return
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
                if self._closing:
                    return
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
            notice: MatchNotice | None = None
            try:
                notice = parse_match_notice(data)
            except BusMessageError as exc:  # the match is read from the database instead
                log_event("bus_unreadable", error=str(exc), level=30)
            self.on_match(channel[len(MATCH_CHANNEL):], notice)
            return
        try:
            node_notice = parse_node_notice(data)
        except BusMessageError as exc:
            log_event("bus_unreadable", error=str(exc), level=30)
            return
        self.on_node(node_notice)

    async def close(self) -> None:
        """Send what is queued (briefly), stop listening, close the connection."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), 1.0)
        self._closing = True
        await stop_tasks(self._tasks)
        await self.redis.aclose()

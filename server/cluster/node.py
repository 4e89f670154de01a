"""One node of a cluster: the arena's `Replication` (guards, ownership, takeover, notices, copies, the seek queue);
`Lease` is its heartbeat and fence, `ClusterPresence` its presence."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from protocol.errors import UnavailableError
from protocol.messages import MatchSummary
from server.cluster import replica
from server.cluster.bus import Bus, describe_bus
from server.cluster.lease import Lease
from server.cluster.messages import (
    Cancelled,
    Changed,
    MatchNotice,
    NodeLeft,
    NodeNotice,
    Paired,
    SessionsEnded,
    TournamentChanged,
    Waiting,
)
from server.cluster.options import ClusterOptions
from server.cluster.presence import ClusterPresence
from server.cluster.sign_in_counts import RedisFailureCounts
from server.cluster.tournaments import ClusterTournaments
from server.core.changes import ArenaChange, CancelChange, CreateChange, end_of
from server.core.follower import Follower
from server.core.match import Seat
from server.core.quotas import lobby_order
from server.core.ratings import Rating
from server.core.replication import Ratings
from server.core.rooms import Room
from server.logs import event as log_event
from server.storage import Op, StorageError
from server.storage.lobby import open_creators, open_summaries
from server.storage.nodes import Nodes
from server.storage.writer import op_disown, op_guard, op_own

RETRIES = 3
"""Times a change is prepared again after another node stored one first."""
SEEKS_LOOKED_AT = 16
"""The longest-waiting entries of a variant's queue a seek looks at for an opponent."""

if TYPE_CHECKING:
    from server.core.match_host import MatchHost


class Cluster:
    """This node's part in a cluster: it owns some matches, holds copies of others, and beats."""

    role = "cluster-node"
    retries = RETRIES

    def __init__(self, arena: MatchHost, options: ClusterOptions) -> None:
        pool = getattr(arena.storage, "pool", None)
        if pool is None:
            raise ValueError("several nodes need a PostgreSQL database (--db postgresql://...)")
        self.arena = arena
        self.options = options
        self.node_id = options.node_id
        self.pool = pool
        self.nodes = Nodes(pool, options.node_id, options.address, options.lease_s)
        self.presence = ClusterPresence(arena, self)
        self.bus = Bus(options.bus_url, self.on_match, self.on_node, self.on_gap, self.on_watching)
        self.failure_counts = RedisFailureCounts(options.bus_url)
        """Failed sign-ins as every node counts them (in Redis, on a connection of their own)."""
        self.owned: set[str] = set()
        """The matches whose clocks, hosted bots and expiry this node runs."""
        self.live_nodes: dict[str, float] = {}
        self.wanted: dict[str, int] = {}
        """Match id -> how many notices of it came since its refresh was asked for (while one is due or runs)."""
        self.taken = 0
        self.refreshes = 0
        self.applied = 0
        self.before: dict[str, int] = {}
        """Match id -> its version before the change being stored (between `ops` and `stored`)."""
        self.conflicts = 0
        self.lease = Lease(self)
        """This node's heartbeat, its lease in the database and its fence."""
        self.event_owners = ClusterTournaments(self)
        """The events this node pairs and drives, and their takeover."""

    def tournaments(self) -> ClusterTournaments:
        """This node's side of events (its owned ones, guards, notices, takeover)."""
        return self.event_owners

    async def start(self, address: str) -> None:
        """Connect to Redis, register this node (listening at `address`), take the matches nobody owns, and
        start beating."""
        self.nodes.address = address
        try:
            await self.bus.start()
        except (RedisError, OSError) as exc:
            raise StorageError(f"cannot reach the bus at {describe_bus(self.options.bus_url)}: {exc}") from None
        await self.nodes.join()
        self.presence.tell_everyone()
        for match_id in await self.nodes.owned():  # a node restarted under its old name takes its matches back
            await self.adopt(match_id)
        await self.event_owners.start()
        await self.tick()
        self.lease.start()
        log_event("node_started", node=self.node_id, owned=len(self.owned))

    def owns(self, match_id: str) -> bool:
        """Whether this node runs the match's clocks, hosted bots and expiry."""
        return match_id in self.owned

    # --- heartbeat and takeover -------------------------------------------------------------------

    async def tick(self) -> None:
        """Renew the lease, then (once this node has beaten for a lease) take the matches of dead nodes."""
        if self.arena.closing:
            return
        self.bus.keep_addresses(self.node_id)
        if not await self.lease.renew():  # back from an outage: the others beat again first
            self.learn_live(await self.nodes.live())
            return
        dead, taken = await self.nodes.take_orphans(self.options.takeover_batch)
        if dead:  # a node died after storing changes it may not have announced: re-read every copy
            log_event("nodes_dead", node=self.node_id, dead=dead)
            self.on_gap()
        for match_id in taken:
            await self.adopt(match_id)
        self.learn_live(await self.nodes.live())
        await self.event_owners.tick()  # after the matches: an event taken over follows its games' copies

    def learn_live(self, live: dict[str, float]) -> None:
        """The live nodes as the database says now: forget where the players of those found dead were connected,
        and ask Redis afresh about those found alive (new, or back after their lease lapsed)."""
        gone = self.live_nodes.keys() - live.keys()
        came = live.keys() - self.live_nodes.keys() - {self.node_id}
        self.live_nodes = live
        if gone:
            self.presence.forget_nodes(gone)
        if came:
            self.arena.spawn(self.presence.relearn(came))

    def heard(self, node_id: str) -> None:
        """A node spoke on the bus: it is alive, even if this one has not seen its heartbeat yet (and if it was
        found dead before, where its players are connected is asked afresh)."""
        if node_id not in self.live_nodes:
            self.live_nodes[node_id] = 0.0
            self.arena.spawn(self.presence.relearn({node_id}))

    async def adopt(self, match_id: str, taken: bool = True) -> None:
        """Become the owner of a match: bring it up to date (or load it) and start its clocks and bots (`taken`:
        from another node; else this node's own again after it was fenced)."""
        arena = self.arena
        room = arena.rooms.get(match_id)
        if room is None:
            room = await replica.load(arena, match_id)
            if room is None or match_id in arena.rooms:
                return
            arena.load_room(room)  # a load, not a change: the match is as stored
            await self.presence.learn(room)
        else:
            async with room.lock:
                await replica.refresh(arena, room)
        self.owned.add(match_id)
        if taken:
            self.taken += 1
            log_event("match_taken_over", match=match_id, node=self.node_id, ply=room.match.ply)
        arena.after_change(room)

    def release(self, match_id: str) -> None:
        """Stop running a match's clocks and bots (another node owns it now); keep it as a copy."""
        self.owned.discard(match_id)
        room = self.arena.rooms.get(match_id)
        if room is not None:
            room.cancel_timer()

    def on_node_left(self, node_id: str) -> None:
        """A node drained: take some of its matches now rather than at the next heartbeat."""
        if node_id != self.node_id and not self.arena.closing:
            self.arena.spawn(self.tick())

    async def catch_up(self, room: Room) -> None:
        """Before answering a watch or sync from a copy: read what may have been missed (a dead node's
        last changes are never announced)."""
        if not self.owns(room.match.match_id):
            async with room.lock:
                await replica.refresh(self.arena, room)

    # --- copies of matches ------------------------------------------------------------------------

    async def find(self, match_id: str) -> Room | None:
        """A match this node does not hold yet, loaded from the database as a copy (None: no such match)."""
        room = await replica.load(self.arena, match_id)
        if room is None:
            return None
        existing = self.arena.rooms.get(match_id)
        if existing is not None:
            return existing
        self.arena.load_room(room)  # a load, not a change: the match is as stored
        self.arena.after_change(room)
        await self.presence.learn(room)
        return room

    def on_match(self, match_id: str, notice: MatchNotice | None) -> None:
        """A notice from the bus: bring the copy of `match_id` up to the version it names (a change it carries is
        applied at once when the copy is at the version it was made from and nothing else runs); a cancel, or
        a notice this node could not read, has the copy read again."""
        room = self.arena.rooms.get(match_id)
        if room is None:
            return
        if isinstance(notice, Changed):
            if replica.version(room.match) >= notice.version:
                return
            quiet = match_id not in self.wanted and not room.lock.locked()
            if notice.change is not None and quiet and replica.apply_carried(self.arena, room, notice):
                self.applied += 1
                return
        self.reread(room)

    def on_node(self, notice: NodeNotice) -> None:
        """A notice from another node: one that drained, a player of this node paired there, a presence change."""
        if isinstance(notice, NodeLeft):
            self.on_node_left(notice.node)
        elif isinstance(notice, Paired):
            self.on_paired(notice.node, notice.player_id, notice.match_id)
        elif isinstance(notice, TournamentChanged):
            self.event_owners.on_changed(notice)
        elif isinstance(notice, SessionsEnded):
            self.arena.accounts.end_here(notice.session_ids)
        else:
            self.presence.on_presence(notice)

    def reread(self, room: Room) -> None:
        """Read the match again from the database soon (once at a time; again if asked while it is read)."""
        match_id = room.match.match_id
        if match_id in self.wanted:
            self.wanted[match_id] += 1  # the refresh under way may have read before this was stored: again
            return
        self.wanted[match_id] = 1
        self.arena.spawn(self._refresh(room))

    def on_watching(self, match_id: str) -> None:
        """Redis confirmed this node listens to a match: read what was stored before (and was not heard)."""
        room = self.arena.rooms.get(match_id)
        if room is not None:
            self.reread(room)

    def watch(self, match_id: str) -> None:
        """A match is now held here (owned or a copy): hear its changes."""
        self.bus.watch(match_id)

    def unwatch(self, match_id: str) -> None:
        """A match left this node's memory: stop hearing it (and stop owning it)."""
        self.bus.unwatch(match_id)
        self.owned.discard(match_id)

    def on_gap(self) -> None:
        """The bus was lost for a while: notices may be missing, so re-read every match held; and Redis may have
        restarted empty, so queue this node's waiting players again and say again who is connected here; and
        sessions may have ended meanwhile, so those signed in here are read again."""
        for room in list(self.arena.rooms.values()):
            self.reread(room)
        self.arena.spawn(self.arena.accounts.recheck())
        for variant, session in list(self.arena.seeks.items()):
            self.unseek(variant, session)  # never twice in the queue, if Redis kept it
            self.seek(variant, session)
        for player_id in list(self.presence.sessions_of):
            self.bus.online(player_id, self.node_id)
        self.presence.tell_everyone()

    async def _refresh(self, room: Room) -> None:
        """Refresh a copy from the database, again as long as notices keep coming during a refresh (one that
        came while the database was read may announce a change stored after the read)."""
        match_id = room.match.match_id
        try:
            while True:
                seen = self.wanted[match_id]
                async with room.lock:
                    await replica.refresh(self.arena, room)
                self.refreshes += 1
                if self.wanted.get(match_id, 0) == seen:
                    break
        except Exception as exc:
            log_event("refresh_failed", match=match_id, error=repr(exc), level=40, exc_info=True)
        finally:
            self.wanted.pop(match_id, None)

    async def conflict(self, room: Room) -> None:
        """Another node stored a change first (or a client saw one): bring the copy up to date (lock held)."""
        self.conflicts += 1
        await replica.refresh(self.arena, room)

    # --- what each change adds ----------------------------------------------------------------------

    def guards(self, room: Room, change: ArenaChange, ratings: list[tuple[str, Rating, int]]) -> list[Op]:
        """The guards and owner rows a change adds: one claim per match version and per rating update."""
        mid = room.match.match_id
        if isinstance(change, CreateChange):
            return [op_own(mid, self.node_id)]
        self.before[mid] = replica.version(room.match)
        ops = [op_guard(f"m:{mid}:{self.before[mid]}")]
        ops += [op_guard(f"r:{pid}:{games - 1}") for pid, _, games in ratings]
        if isinstance(change, CancelChange) or end_of(change) is not None:
            ops.append(op_disown(mid))
        return ops

    def stored(self, room: Room, change: ArenaChange) -> None:
        """A change was stored and committed here: own a new match, and tell the other nodes (with the change
        itself, so that a copy at the version it was made from applies it without reading the database)."""
        mid = room.match.match_id
        before = self.before.pop(mid, None)
        if isinstance(change, CreateChange):
            self.owned.add(mid)
        if isinstance(change, CancelChange):
            self.bus.notify(mid, Cancelled())
            return
        carried = None if before is None else replica.carried(self.arena, change)
        self.bus.notify(mid, Changed(replica.version(room.match), before if carried else None, carried))

    async def fresh_ratings(self, player_ids: list[str]) -> Ratings:
        """The players' ratings as stored (another node may have rated one of their games since)."""
        rows = await self.nodes.ratings_of(player_ids)
        return {pid: (Rating(r, rd, v), g) for pid, (r, rd, v, g) in rows.items()}

    async def resume(self) -> None:
        """Nothing at start-up: a node loads the matches it comes to own (`start`) or hold, as they come."""

    async def seated(self, player_id: str) -> None:
        """Load the matches where a player who said hello here holds a seat (stored by any node)."""
        for match_id in await self.arena.storage.seated(player_id):
            await self.arena.find_room(match_id)

    async def listing(self, limit: int, charge: Callable[[int], None]) -> list[MatchSummary]:
        """The open and live matches of every node, as stored, with this node's spectator counts: the open ones
        whose creator is connected to a live node first (as on a single node; all of them while Redis cannot say
        who is), in the lobby's fair order by their creators' networks and addresses, then the live ones newest
        first by spectators."""
        a = self.arena
        charge(2 * limit)
        waiting = await open_creators(a.storage)
        try:
            connected = {c.player_id for c in await self.presence.everyone()}
        except UnavailableError:
            connected = None
        if connected is not None:
            waiting = [row for row in waiting if any(p in connected for p in row.players)]
        shown = [row.match_id for row in lobby_order(waiting, lambda row: row.creator)[:limit]]
        stored = await open_summaries(a.storage, shown)
        found: list[MatchSummary] = []
        for mid in shown:
            room = a.rooms.get(mid)
            if room is not None and room.match.status == "open":
                found.append(room.match.summary(room.spectators))
            elif mid in stored:
                found.append(stored[mid])
        live: list[MatchSummary] = []
        for game in await a.storage.list_games(limit, 0, "live") if len(found) < limit else []:
            room = a.rooms.get(game.match_id)
            if room is not None and room.match.status == "live":
                live.append(room.match.summary(room.spectators))
            else:
                live.append(MatchSummary(match_id=game.match_id, variant=game.variant, south=game.south,
                                         north=game.north, status="live", ply=game.ply))
        live.sort(key=lambda m: -m.spectators)
        return found + live[:limit - len(found)]

    async def ratings(self) -> Ratings:
        """The stored ratings (other nodes rate games too: they are the ones of record)."""
        return {pid: (Rating(r, rd, v), g) for pid, (r, rd, v, g) in (await self.arena.storage.ratings()).items()}

    # --- players waiting for an opponent --------------------------------------------------------------

    def seek_entry(self, session: Follower) -> Waiting:
        """How a waiting player is queued across nodes."""
        return Waiting(self.node_id, session.player_id or "", session.name or "")

    def seek(self, variant: str, session: Follower) -> None:
        """Queue a player of this node as waiting in `variant` (it also waits in the arena's own seeks)."""
        self.bus.seek(variant, self.seek_entry(session))

    def unseek(self, variant: str, session: Follower) -> None:
        """A waiting player of this node was paired here, or left."""
        self.bus.unseek(variant, self.seek_entry(session))

    async def take_seek(self, variant: str, player_id: str) -> tuple[str, Seat] | None:
        """A player waiting on another live node (its node and seat), taken off the queue; None: nobody. The
        seeker's own entries (it may wait on other nodes too) stay queued, as do this node's players who wait here;
        entries of nodes that died, of players no longer waiting here, and ones that cannot be read are dropped.
        `UnavailableError` (try again) while Redis cannot be read, as just after it restarted."""
        try:
            return await self._take_seek(variant, player_id)
        except (RedisError, OSError) as exc:
            raise UnavailableError(f"cannot read who waits on the other nodes ({exc}): try again", 1.0) from None

    async def _take_seek(self, variant: str, player_id: str) -> tuple[str, Seat] | None:
        """`take_seek` without the translation of Redis's errors."""
        here = self.arena.seeks.get(variant)
        for text, entry in await self.bus.waiting(variant, SEEKS_LOOKED_AT):
            if entry is None:
                await self.bus.take(variant, text)
            elif entry.node == self.node_id:
                if here is None or here.player_id != entry.player_id:
                    await self.bus.take(variant, text)
            elif entry.node not in self.live_nodes:
                await self.bus.take(variant, text)
            elif entry.player_id != player_id and await self.bus.take(variant, text):
                return entry.node, Seat(entry.player_id, entry.name)
        return None

    async def seeks_elsewhere(self, limit: int) -> list[tuple[str, str]]:
        """(variant, name) of the players waiting on the other live nodes, at most `limit`; none while Redis cannot
        be read (the listing goes on with this node's own)."""
        try:
            found = await self.bus.all_waiting(limit)
        except (RedisError, OSError) as exc:
            log_event("seeks_unreadable", error=repr(exc), level=30)
            return []
        return [(variant, entry.name) for variant, entry in found
                if entry.node != self.node_id and entry.node in self.live_nodes]

    def paired(self, node: str, player_id: str, match_id: str) -> None:
        """Tell `node` that its waiting player has a seat in `match_id`."""
        self.bus.announce(Paired(node, player_id, match_id))

    def sessions_ended(self, session_ids: list[str]) -> None:
        """Tell every node that accounts' sessions ended (at most 100 ids a notice)."""
        for start in range(0, len(session_ids), 100):
            self.bus.announce(SessionsEnded(tuple(session_ids[start : start + 100])))

    def on_paired(self, node_id: str, player_id: str, match_id: str) -> None:
        """Another node gave a player waiting here a seat: it follows the match and gets its snapshot."""
        if node_id == self.node_id:
            self.arena.paired_elsewhere(player_id, match_id)

    # --- leaving --------------------------------------------------------------------------------

    async def handover(self) -> None:
        """Drain: let every owned match go at once, so the other nodes take them without waiting for a lease."""
        self.lease.stop()
        for match_id in list(self.owned):
            self.release(match_id)
        self.event_owners.handover()
        try:
            await self.nodes.leave()
            self.bus.announce(NodeLeft(self.node_id))
        except Exception as exc:
            log_event("handover_failed", node=self.node_id, error=repr(exc), level=40)
        log_event("node_left", node=self.node_id)

    async def close(self) -> None:
        """Stop beating and close the bus."""
        await self.lease.close()
        await self.bus.close()
        await self.failure_counts.close()

    def health(self) -> dict[str, Any]:
        """This node's part for `/health` (as `cluster`): its id, role, owned matches, bus and database status."""
        return {"cluster": self.status()}

    def status(self) -> dict[str, Any]:
        """This node's id, role, owned matches, bus and database status."""
        live = sum(1 for mid in self.owned if (room := self.arena.rooms.get(mid)) and room.match.status != "finished")
        return {"node": self.node_id, "role": "cluster-node", "owned": live,
                "copies": len(self.arena.rooms) - len(self.owned & self.arena.rooms.keys()),
                "nodes": sorted(self.live_nodes),
                "bus": self.bus.status, "database": self.lease.database, "taken_over": self.taken,
                "events_owned": len(self.event_owners.owned), "events_taken_over": self.event_owners.taken,
                "refreshes": self.refreshes, "applied": self.applied, "conflicts": self.conflicts,
                "bus_published": self.bus.published,
                "bus_received": self.bus.received, "at": round(time.time(), 3)}

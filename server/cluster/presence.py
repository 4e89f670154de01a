"""A cluster node's presence: its own connections, plus where else each player is connected (from the bus).

A player is connected while it has a session on this node or on another live one. Each node
tells the others when a player's first connection there opens and its last one closes (`on` and
`off` notices), keeps a set of the nodes a player is online on in Redis, and the time it left;
and keeps in Redis who is connected to it with their addresses, for the operator's list of who
is online on every live node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from protocol.errors import UnavailableError
from server.cluster.member import ClusterMember
from server.cluster.messages import Online
from server.core.follower import Follower
from server.core.match import Seat
from server.core.presence import Connected, Presence
from server.core.rooms import Room
from server.logs import event as log_event

if TYPE_CHECKING:
    from server.core.match_host import MatchHost


class ClusterPresence(Presence):
    """Who is connected to this node, and to the other live nodes of its cluster."""

    def __init__(self, arena: MatchHost, cluster: ClusterMember) -> None:
        super().__init__(arena.loop, arena.now, arena.options.presence_delay_s, arena.rooms_of,
                         arena.options.grace_s)
        self.arena = arena
        self.cluster = cluster
        self.others: dict[str, set[str]] = {}
        """Player id -> the other nodes where it has a connection, as their notices told (for display)."""

    def connect(self, session: Follower) -> list[str]:
        """A session said hello: noted, and its player's addresses here told to Redis."""
        seats = super().connect(session)
        self._tell_addresses(session.player_id)
        return seats

    def disconnect(self, session: Follower) -> None:
        """A connection closed: noted, and its player's addresses here told to Redis."""
        super().disconnect(session)
        self._tell_addresses(session.player_id)

    def _tell_addresses(self, player_id: str | None) -> None:
        """Tell Redis the addresses of a player's connections on this node now."""
        if player_id is not None:
            self.cluster.bus.addresses(self.cluster.node_id, player_id, self.addresses_of(player_id))

    def tell_everyone(self) -> None:
        """Tell Redis afresh who is connected here (at start, and when Redis may have lost it)."""
        self.cluster.bus.all_addresses(self.cluster.node_id, {pid: self.addresses_of(pid) for pid in self.sessions_of})

    async def everyone(self) -> list[Connected]:
        """Who is connected to every live node, with their addresses (this node's from memory, the others' as
        they told Redis); `UnavailableError` while Redis or the database cannot be read."""
        cluster = self.cluster
        here = await super().everyone()
        try:
            others = [node for node in sorted(await cluster.nodes.live()) if node != cluster.node_id]
            tables = await cluster.bus.connected(others)
        except (RedisError, OSError) as exc:
            raise UnavailableError(f"cannot read who is connected to the other nodes ({exc}): try again") from None
        elsewhere = [Connected(pid, addresses, node)
                     for node, table in tables.items() for pid, addresses in table.items()]
        return [*(Connected(c.player_id, c.addresses, cluster.node_id) for c in here), *elsewhere]

    def online(self, player_id: str) -> None:
        """`player_id`'s first connection on this node opened: tell the others."""
        self.cluster.bus.online(player_id, self.cluster.node_id)

    def offline(self, player_id: str) -> None:
        """`player_id`'s last connection on this node closed: tell the others."""
        self.cluster.bus.offline(player_id, self.cluster.node_id)

    def elsewhere(self, player_id: str) -> bool:
        """Whether a player has a connection on another live node (as far as this node was told)."""
        return any(node in self.cluster.live_nodes for node in self.others.get(player_id, ()))

    def on_presence(self, notice: Online) -> None:
        """Another node's notice that a player connected there or left: tell the followers of its matches here."""
        if notice.node == self.cluster.node_id:
            return
        if notice.online:
            self.cluster.heard(notice.node)
        nodes = self.others.setdefault(notice.player_id, set())
        (nodes.add if notice.online else nodes.discard)(notice.node)
        if not nodes:
            del self.others[notice.player_id]
        for room in self.rooms_of(notice.player_id):
            self.announce(room)

    def forget_nodes(self, nodes: set[str]) -> None:
        """Nodes found dead (they said no goodbye): drop what their notices said, so that a dead node's players do
        not stay here for good, and tell the followers of their matches (a player may be gone); one found alive
        again is asked about afresh (`relearn`)."""
        for player_id in [pid for pid, where in self.others.items() if not where.isdisjoint(nodes)]:
            where = self.others[player_id]
            where -= nodes
            if not where:
                del self.others[player_id]
            for room in self.rooms_of(player_id):
                self.announce(room)

    async def relearn(self, nodes: set[str]) -> None:
        """Nodes found alive (new, or back after their lease lapsed and their notices were forgotten): ask Redis
        which players of the matches held here are connected to them, and tell those matches' followers."""
        players = sorted({seat.player_id for room in list(self.arena.rooms.values()) for seat in room.match.seats
                          if seat is not None and seat.bot is None})
        try:
            found = await self.cluster.bus.online_nodes(players) if players else []
        except (RedisError, OSError) as exc:  # Redis back: `Cluster.on_gap` has every node say again who is where
            log_event("presence_relearn_failed", node=self.cluster.node_id, error=repr(exc), level=30)
            return
        for player_id, where in zip(players, found, strict=True):
            known = self.others.setdefault(player_id, set())
            if (where & nodes) - known:
                known |= where & nodes
                for room in self.rooms_of(player_id):
                    self.announce(room)
            if not known:
                del self.others[player_id]

    async def learn(self, room: Room) -> None:
        """Ask Redis where the players of a match just loaded here are connected."""
        for seat in room.match.seats:
            if seat is not None and seat.bot is None:
                nodes, _ = await self.cluster.bus.presence(seat.player_id)
                nodes.discard(self.cluster.node_id)
                if nodes:
                    self.others[seat.player_id] = nodes

    async def away(self, seat: Seat | None) -> float | None:
        """Since when (arena time) the player in `seat` has had no connection on any live node; None: connected."""
        local = self.away_of(seat)
        if local is None or seat is None:
            return local
        cluster = self.cluster
        nodes, away = await cluster.bus.presence(seat.player_id)
        nodes.discard(cluster.node_id)
        if nodes - cluster.live_nodes.keys():  # a node this one has not heard beat yet: ask the database
            cluster.learn_live(await cluster.nodes.live())
        if any(node in cluster.live_nodes for node in nodes):
            return None
        return local if away is None else max(local, self.arena.now() - away)

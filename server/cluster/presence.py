"""A cluster node's presence: its own connections, plus where else each player is connected (from the bus).

A player is connected while it has a session on this node or on another live one. Each node
tells the others when a player's first connection there opens and its last one closes (`on` and
`off` notices), keeps a set of the nodes a player is online on in Redis, and the time it left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.cluster.messages import Online
from server.match import Seat
from server.presence import Presence
from server.rooms import Room

if TYPE_CHECKING:
    from server.arena import Arena
    from server.cluster.node import Cluster


class ClusterPresence(Presence):
    """Who is connected to this node, and to the other live nodes of its cluster."""

    def __init__(self, arena: Arena, cluster: Cluster) -> None:
        super().__init__(arena.loop, arena.now, arena.options.presence_delay_s, arena.rooms_of)
        self.arena = arena
        self.cluster = cluster
        self.others: dict[str, set[str]] = {}
        """Player id -> the other nodes where it has a connection, as their notices told (for display)."""

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
        if notice.online:  # a node that speaks is alive, even if this one has not seen its heartbeat yet
            self.cluster.live_nodes.setdefault(notice.node, 0.0)
        nodes = self.others.setdefault(notice.player_id, set())
        (nodes.add if notice.online else nodes.discard)(notice.node)
        if not nodes:
            del self.others[notice.player_id]
        for room in self.rooms_of(notice.player_id):
            self.announce(room)

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
            cluster.live_nodes = await cluster.nodes.live()
        if any(node in cluster.live_nodes for node in nodes):
            return None
        return local if away is None else max(local, self.arena.local_time(away))

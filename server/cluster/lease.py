"""A cluster node's lease in the database: the heartbeat that renews it, and the fence that stops the node running
its matches before the others may judge it dead.

Every `beat_s` the node renews its row of `nodes` (and then takes over orphans: `Cluster.tick`). A node whose
beat has not reached the database for a lease less a beat fences itself: it stops running its matches' clocks
and bots and pairing its events (they stay as copies), so that no match ever has two owners; the next beat that
reaches the database takes up those still its own. A node back from an outage of the database judges nobody dead
until it has beaten for a lease: nobody could beat meanwhile, and the others get a lease to beat again.
"""

from __future__ import annotations

import asyncio
import math
from typing import Protocol

from server.cluster.member import ClusterMember
from server.cluster.tournaments import ClusterTournaments
from server.logs import event as log_event


class LeaseHolder(ClusterMember, Protocol):
    """A node as its lease sees it: a member, with the tournaments it must let go of when fenced."""

    event_owners: ClusterTournaments


class Lease:
    """This node's heartbeat, its lease and its fence."""

    def __init__(self, cluster: LeaseHolder) -> None:
        self.cluster = cluster
        self.database = "ok"
        """`ok`, or `unreachable` since a beat failed (until one reaches the database again)."""
        self.beating_since: float | None = -math.inf
        """When (loop time) this node's current run of heartbeats that reached the database began (None: the last
        one failed). Other nodes are judged dead only once it is a lease old: after an outage of the database
        (or of this node's way to it) nobody could beat, and the others get a lease to beat again."""
        self.fenced = False
        """Whether this node stopped running its matches for want of a beat that reached the database (`fence`)."""
        self._fence: asyncio.TimerHandle | None = None
        self._ticker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Beat every `beat_s` from now on (`Cluster.tick` each time)."""
        self._ticker = asyncio.create_task(self._beat())

    async def _beat(self) -> None:
        """Beat and take over every `beat_s` until cancelled; a failing database is logged and retried (a beat
        that hangs is given up after a lease)."""
        cluster = self.cluster
        while True:
            await asyncio.sleep(cluster.options.beat_s)
            try:
                await asyncio.wait_for(cluster.tick(), cluster.options.lease_s)
                if self.database != "ok":
                    log_event("node_beat_resumed", node=cluster.node_id)
                self.database = "ok"
            except Exception as exc:
                self.database = "unreachable"
                self.beating_since = None
                log_event("node_beat_failed", node=cluster.node_id, error=repr(exc), level=30)

    async def renew(self) -> bool:
        """Renew the lease (letting go of matches taken while this node seemed dead; taking up its own again if it
        was fenced); whether this node has beaten for a lease, so that it may judge the others."""
        cluster = self.cluster
        lost = not await cluster.nodes.beat()
        self._arm_fence()
        if lost:
            still = await cluster.nodes.owned()
            for match_id in cluster.owned - still:
                cluster.release(match_id)
            await cluster.event_owners.let_go()
            log_event("node_lease_lost", node=cluster.node_id, kept=len(still))
        if self.fenced:
            await self.unfence()
        now = asyncio.get_running_loop().time()
        if self.beating_since is None:
            self.beating_since = now
        return now - self.beating_since >= cluster.options.lease_s

    def _arm_fence(self) -> None:
        """A beat reached the database: fence this node if no other does within a lease less a beat."""
        if self._fence is not None:
            self._fence.cancel()
        options = self.cluster.options
        self._fence = asyncio.get_running_loop().call_later(options.lease_s - options.beat_s, self.fence)

    def fence(self) -> None:
        """No beat has reached the database for a lease less a beat: before the other nodes may judge this one dead
        and take its matches, stop running their clocks and bots (they stay as copies), so that no match ever has
        two owners; the next beat that reaches the database takes up those still this node's (`unfence`)."""
        cluster = self.cluster
        if cluster.arena.closing or self.fenced:
            return
        self.fenced = True
        log_event("node_fenced", node=cluster.node_id, owned=len(cluster.owned), level=30)
        for match_id in list(cluster.owned):
            cluster.release(match_id)
        cluster.event_owners.handover()  # nor pair its events

    async def unfence(self) -> None:
        """A beat reached the database again: run the matches the database still says are this node's."""
        cluster = self.cluster
        self.fenced = False
        still = await cluster.nodes.owned()
        for match_id in still - cluster.owned:
            await cluster.adopt(match_id, taken=False)
        await cluster.event_owners.start()
        log_event("node_unfenced", node=cluster.node_id, owned=len(still))

    def stop(self) -> None:
        """Beat no more, and never fence (the node is leaving)."""
        if self._ticker is not None:
            self._ticker.cancel()
        if self._fence is not None:
            self._fence.cancel()

    async def close(self) -> None:
        """Stop beating and wait for the beat under way to end."""
        self.stop()
        if self._ticker is not None:
            await asyncio.gather(self._ticker, return_exceptions=True)

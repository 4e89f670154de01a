"""A cluster node's side of events: one owner per open or running event, guarded changes, notices, takeover.

The node that creates an event owns it (`event_owners`); only the owner pairs its rounds, starts
their matches, records their results and runs its clock. Any node stores joins and leaves: every
change claims `e:<event>:<version before it>` in `guards`, so two nodes storing from one state store
one change (the other reads the event again and prepares its change again), and is announced as
`event <id> <version>` on `kalah:nodes`. A node whose copy is older reads the event from the
database, and each heartbeat checks every copy's version against the database (the bus is at most
once). When a node's lease runs out, the survivors take its events (`FOR UPDATE SKIP LOCKED`, up to
`takeover_batch` each per beat) and resume them from the store, as they take its matches.
"""

from __future__ import annotations

from server.cluster.member import ClusterMember
from server.cluster.messages import TournamentChanged
from server.core.tournament_owners import TournamentHost
from server.logs import event as log_event
from server.storage import Op
from server.storage.tournaments import live_versions, op_tournament_disown, op_tournament_own
from server.storage.writer import op_guard
from server.tournaments.tournament import Tournament, TournamentStatus


class _NoHost:
    """The host before the driver binds itself: nothing to do."""

    async def adopt(self, event_id: str) -> None:
        """Nothing holds events yet."""

    def release(self, event_id: str) -> None:
        """Nothing holds events yet."""

    async def refresh(self, event_id: str, version: int) -> None:
        """Nothing holds events yet."""


class ClusterTournaments:
    """The events this node owns, and its part in guarding, telling and taking over the others'."""

    retries = 3

    def __init__(self, cluster: ClusterMember) -> None:
        self.cluster = cluster
        self.host: TournamentHost = _NoHost()
        self.owned: set[str] = set()
        self.versions: dict[str, int] = {}
        """Tournament id -> the version this node last stored or read of it."""
        self.taken = 0

    def bind(self, host: TournamentHost) -> None:
        """The driver to call back."""
        self.host = host

    def owns(self, event_id: str) -> bool:
        """Whether this node pairs the event and runs its clock."""
        return event_id in self.owned

    def guards(self, event: Tournament, before: int, created: bool) -> list[Op]:
        """The claim of the change from `before`; a new event's owner row (this node); an ended event's release."""
        eid = event.event_id
        ops = [op_guard(f"e:{eid}:{before}")]
        if created:
            ops.append(op_tournament_own(eid, self.cluster.node_id))
        if event.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            ops.append(op_tournament_disown(eid))
        return ops

    def stored(self, event: Tournament) -> None:
        """Own a new event; tell the other nodes the version it reached."""
        eid = event.event_id
        if event.version == 1:
            self.owned.add(eid)
        self.seen(event)
        if event.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            self.owned.discard(eid)
        self.cluster.bus.announce(TournamentChanged(eid, event.version))

    def on_changed(self, notice: TournamentChanged) -> None:
        """A notice: some node stored a change of an event; read it if this node's copy is older."""
        if self.versions.get(notice.event_id, -1) < notice.version:
            self.cluster.arena.spawn(self.host.refresh(notice.event_id, notice.version))

    async def start(self) -> None:
        """At the start, and when a fenced node's beat reaches the database again: the events the database says
        are this node's (one started again under its old name before its lease ran out) are resumed from the store."""
        for event_id in await self.cluster.nodes.owned_tournaments() - self.owned:
            self.owned.add(event_id)
            await self.host.adopt(event_id)

    async def let_go(self) -> None:
        """This node's lease had run out: let go of the events another node took meanwhile."""
        still = await self.cluster.nodes.owned_tournaments()
        for event_id in self.owned - still:
            self.owned.discard(event_id)
            self.host.release(event_id)

    async def tick(self) -> None:
        """At each heartbeat: take orphaned events, and read every copy the database holds newer (a notice lost
        on the bus)."""
        nodes = self.cluster.nodes
        for event_id in await nodes.take_orphan_tournaments(self.cluster.options.takeover_batch):
            await self._adopt(event_id)
        stored = await live_versions(self.cluster.arena.storage)
        for event_id, version in stored.items():
            if self.versions.get(event_id, -1) < version:
                await self.host.refresh(event_id, version)
        for event_id in [e for e in self.versions if e not in stored]:  # ended (or never loaded here)
            await self.host.refresh(event_id, self.versions.pop(event_id) + 1)

    async def _adopt(self, event_id: str) -> None:
        """Own an event from now on and resume it from the store."""
        self.owned.add(event_id)
        self.taken += 1
        log_event("event_taken_over", event_id=event_id, node=self.cluster.node_id)
        await self.host.adopt(event_id)

    def seen(self, event: Tournament) -> None:
        """This node read or stored the event at its version (an ended one is no longer compared)."""
        if event.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            self.versions.pop(event.event_id, None)
        else:
            self.versions[event.event_id] = event.version

    def handover(self) -> None:
        """Drain (the others take them when this node's row is gone), or fenced (cut off from the database): stop
        pairing every owned event."""
        for event_id in list(self.owned):
            self.owned.discard(event_id)
            self.host.release(event_id)

"""What a cluster node is told: the bus, its own name, and the heartbeat timings."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.core.tokens import new_id


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """One node's cluster settings (`kalah serve --bus redis://...`)."""

    bus_url: str
    """The Redis server the nodes publish changes and presence on."""
    node_id: str = field(default_factory=lambda: new_id("n"))
    """This node's name (unique while it runs; a new one by default at each start)."""
    address: str = ""
    """Where this node listens, as shown in `/health` and the node table."""
    beat_s: float = 1.0
    """Seconds between heartbeats (and takeover checks)."""
    lease_s: float = 3.0
    """A node whose last heartbeat is older than this is dead: its matches are taken over."""
    takeover_batch: int = 500
    """Matches one node takes over per heartbeat at most (survivors share a dead node's matches)."""

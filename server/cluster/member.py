"""What a node's parts (its lease, its presence, its tournaments' side) may use of the node: `ClusterMember`.

`server.cluster.node.Cluster` builds its parts and implements this protocol; the parts import it instead of the
node, so the node is the only module that knows them all.
"""

from __future__ import annotations

from typing import Protocol

from server.cluster.bus import Bus
from server.cluster.options import ClusterOptions
from server.core.match_host import MatchHost
from server.storage.nodes import Nodes


class ClusterMember(Protocol):
    """A node of the cluster as its parts see it: who it is, its tables, its bus, its matches and its peers."""

    arena: MatchHost
    options: ClusterOptions
    node_id: str
    nodes: Nodes
    bus: Bus
    owned: set[str]
    """The matches whose clocks, hosted bots and expiry this node runs."""
    live_nodes: dict[str, float]
    """The other nodes known to be alive."""

    async def tick(self) -> None:
        """One heartbeat's work: learn which nodes live, take over what the dead ones owned."""

    def learn_live(self, live: dict[str, float]) -> None:
        """The live nodes as the database says now."""

    def heard(self, node_id: str) -> None:
        """Note that another node spoke (it is alive)."""

    async def adopt(self, match_id: str, taken: bool = True) -> None:
        """Own a match (its clocks, bots and expiry) from now on."""

    def release(self, match_id: str) -> None:
        """Stop owning a match."""

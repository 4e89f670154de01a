"""Several nodes on one PostgreSQL database and one Redis: fan-out, match ownership, takeover, drain.

Any node accepts any client. Every change to a match is arbitrated by the database: it claims
the key `m:<match>:<version before it>` in `guards`, so two nodes racing from the same state
store exactly one change and the other is told to retry. Each live match has one owner node
(`match_owners`), the only one that runs its clocks' flag timers, its hosted bots and its
open-match expiry. After each change the node that stored it publishes `<version> <change>` on
the match's own Redis channel; every node holding a copy applies it, or reads what it lacks from
the database, so a dropped message costs a read, never a gap. See docs/cluster.md.

`cluster_node` is the arena's deployment as one node: `Cluster` is its `Replication`,
`ClusterPresence` its presence, `RedisFailureCounts` where its failed sign-ins are counted.
"""

from __future__ import annotations

from server.cluster.node import Cluster
from server.cluster.options import ClusterOptions
from server.cluster.presence import ClusterPresence
from server.core.match_host import MatchHost
from server.core.replication import Deployment


def cluster_node(arena: MatchHost, options: ClusterOptions) -> Deployment:
    """The arena's deployment as one node of a cluster (raises ValueError for a bus URL redis-py cannot read)."""
    cluster = Cluster(arena, options)
    return Deployment(cluster, cluster.presence, cluster.failure_counts)


__all__ = ["Cluster", "ClusterOptions", "ClusterPresence", "cluster_node"]

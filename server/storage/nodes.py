"""The cluster's tables in PostgreSQL: node heartbeats, who owns which match, taking over a dead node's, and
the fresh ratings a node reads before it rates a game; the owners of events are taken over the same way.

Times are the database's own clock (`clock_timestamp()`), so the nodes' clocks never need to
agree for a lease to expire. A node that misses `lease_s` of heartbeats is deleted by whichever
node notices first; its matches, like those of a node that drained, have an owner no longer in
`nodes`, and each surviving node takes up to `takeover_batch` of them per heartbeat
(`FOR UPDATE SKIP LOCKED`, so survivors share them and never take the same one).
"""

from __future__ import annotations

import asyncpg

NOW = "extract(epoch FROM clock_timestamp())"


class Nodes:
    """One node's view of the node table and the match owners."""

    def __init__(self, pool: asyncpg.Pool, node_id: str, address: str, lease_s: float) -> None:
        self.pool = pool
        self.node_id = node_id
        self.address = address
        self.lease_s = lease_s

    async def join(self) -> None:
        """Register this node, and give matches stored before the cluster existed (no owner) to it."""
        await self.pool.execute(f"INSERT INTO nodes (id, address, started_at, beat_at) VALUES ($1, $2, {NOW}, {NOW})"
                                f" ON CONFLICT (id) DO UPDATE SET beat_at = {NOW}", self.node_id, self.address)
        await self.pool.execute("INSERT INTO match_owners (match_id, node) SELECT id, $1 FROM matches"
                                " WHERE status IN ('open', 'live') ON CONFLICT (match_id) DO NOTHING", self.node_id)

    async def beat(self) -> bool:
        """Renew this node's lease; False if the others had given it up for dead (its row is made again)."""
        done = await self.pool.execute(f"UPDATE nodes SET beat_at = {NOW} WHERE id = $1", self.node_id)
        if done != "UPDATE 0":
            return True
        await self.join()
        return False

    async def take_orphans(self, limit: int) -> tuple[int, list[str]]:
        """Delete nodes whose lease expired, then take up to `limit` matches whose owner is not a live node;
        returns how many nodes were found dead, and the matches taken."""
        async with self.pool.acquire() as conn, conn.transaction():
            dead = await conn.execute(f"DELETE FROM nodes WHERE beat_at < {NOW} - $1", self.lease_s)
            rows = await conn.fetch(
                "UPDATE match_owners SET node = $1 WHERE match_id IN ("
                " SELECT o.match_id FROM match_owners o WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = o.node)"
                " LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING match_id", self.node_id, limit)
        return int(dead.split()[-1]), [r[0] for r in rows]

    async def take_orphan_tournaments(self, limit: int) -> list[str]:
        """Take up to `limit` open or running events whose owner is not a live node (or that have none: stored
        by a server on its own); the events taken."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO event_owners (event_id, node) SELECT e.id, $1 FROM events e"
                " WHERE e.status IN ('open', 'running')"
                " AND NOT EXISTS (SELECT 1 FROM event_owners o WHERE o.event_id = e.id)"
                " ON CONFLICT (event_id) DO NOTHING", "-")
            rows = await conn.fetch(
                "UPDATE event_owners SET node = $1 WHERE event_id IN ("
                " SELECT o.event_id FROM event_owners o JOIN events e ON e.id = o.event_id"
                " WHERE e.status IN ('open', 'running') AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = o.node)"
                " LIMIT $2 FOR UPDATE OF o SKIP LOCKED) RETURNING event_id", self.node_id, limit)
        return [r[0] for r in rows]

    async def owned_tournaments(self) -> set[str]:
        """The open or running events the database says this node pairs and drives."""
        return {r[0] for r in await self.pool.fetch(
            "SELECT o.event_id FROM event_owners o JOIN events e ON e.id = o.event_id"
            " WHERE o.node = $1 AND e.status IN ('open', 'running')", self.node_id)}

    async def owned(self) -> set[str]:
        """The matches the database says this node owns."""
        return {r[0] for r in await self.pool.fetch("SELECT match_id FROM match_owners WHERE node = $1",
                                                    self.node_id)}

    async def live(self) -> dict[str, float]:
        """Every live node and the seconds since its last heartbeat."""
        rows = await self.pool.fetch(f"SELECT id, {NOW} - beat_at FROM nodes WHERE beat_at >= {NOW} - $1",
                                     self.lease_s)
        return {r[0]: float(r[1]) for r in rows}

    async def ratings_of(self, player_ids: list[str]) -> dict[str, tuple[float, float, float, int]]:
        """The stored ratings of some players: player id -> (rating, rd, volatility, games)."""
        rows = await self.pool.fetch("SELECT player_id, rating, rd, volatility, games FROM ratings"
                                     " WHERE player_id = ANY($1::text[])", player_ids)
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    async def leave(self) -> None:
        """Unregister this node: its matches are at once free for the others to take."""
        await self.pool.execute("DELETE FROM nodes WHERE id = $1", self.node_id)

"""The lobby's reads of stored open matches (every node's, in a cluster): each one's creator, for the lobby's fair
order, and the summaries of those listed. The SQL is the same on every backend (`?` placeholders)."""

from __future__ import annotations

from typing import NamedTuple

from protocol.messages import MatchSummary
from server.storage.writer import Storage

OPEN_CREATORS = ("SELECT id, creator_network, creator_address, seat0, seat1 FROM matches WHERE status = 'open'"
                 " ORDER BY created_at DESC, id")
"""Every open match, newest first, with the network and the address of the client that opened it, and its seats."""
OPEN_SUMMARIES = """
SELECT m.id, m.variant, p0.name, p1.name, (SELECT count(*) FROM actions a WHERE a.match_id = m.id)
FROM matches m LEFT JOIN players p0 ON p0.id = m.seat0 LEFT JOIN players p1 ON p1.id = m.seat1
WHERE m.status = 'open' AND m.id IN ({marks})
"""


class OpenMatch(NamedTuple):
    """A stored open match as the lobby orders it: its id, its creator's network and address, its seated players."""

    match_id: str
    creator: tuple[str, str]
    """(network, address); a match stored without them (before they were, or opened with both seats) counts as its
    own creator."""
    players: tuple[str, ...]
    """The ids of the players seated in it (its creator's, or both)."""


async def open_creators(storage: Storage) -> list[OpenMatch]:
    """Every stored open match, newest first, with its creator's network and address and its seated players."""
    rows = await storage.fetch_rows(OPEN_CREATORS)
    return [OpenMatch(str(mid), (str(network or mid), str(address or mid)), tuple(str(p) for p in (s0, s1) if p))
            for mid, network, address, s0, s1 in rows]


async def open_summaries(storage: Storage, match_ids: list[str]) -> dict[str, MatchSummary]:
    """The lobby's summaries of those of `match_ids` still open, by id (a row that cannot be read is left out)."""
    if not match_ids:
        return {}
    rows = await storage.fetch_rows(OPEN_SUMMARIES.format(marks=", ".join("?" * len(match_ids))), *match_ids)
    found = {}
    for mid, variant, south, north, ply in rows:
        try:
            found[str(mid)] = MatchSummary(match_id=mid, variant=variant, south=south, north=north, status="open",
                                           ply=int(ply))
        except ValueError:
            continue
    return found

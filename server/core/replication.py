"""Replication: what the arena asks of its deployment about matches, one server alone or one node of several.

The arena never asks which deployment runs: it calls a `Replication`, chosen once at start-up.
`SingleNode` is a server on its own (it holds every match, owns them all, and nothing needs
telling); `server.cluster.Cluster` is one node of several on one database (guards and owners,
change notices on the bus, conflict refreshes, the cross-node seek queue). See docs/cluster.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from protocol.messages import MatchSummary
from server.core.changes import ArenaChange
from server.core.failure_counts import FailureCounts
from server.core.follower import Follower
from server.core.match import Seat
from server.core.presence import Presence
from server.core.quotas import lobby_order
from server.core.ratings import Rating
from server.core.rooms import Room
from server.storage import Op

if TYPE_CHECKING:
    from server.core.match_host import MatchHost
    from server.core.tournament_owners import TournamentOwners

Ratings = dict[str, tuple[Rating, int]]
"""Player id -> (rating, rated games played)."""
LISTING_STEP = 200
"""Rooms looked at, or lines made, between two turns of the event loop while the lobby's list is made: made at once
under a flood of open matches it held the loop 20-40 ms (bench/flood.py --many-addresses --stalls), and a seated
player's move waited behind it."""


class Replication(Protocol):
    """The deployment's side of every match: who owns it, what a change adds, who is told, and start/stop."""

    @property
    def role(self) -> str:
        """`single` or `cluster-node` (shown by `/health`)."""

    @property
    def node_id(self) -> str | None:
        """This node's name in a cluster (None: a server on its own)."""

    @property
    def retries(self) -> int:
        """Times a change is prepared again after another node stored one first (1: never)."""

    def owns(self, match_id: str) -> bool:
        """Whether this server runs the match's clocks, hosted bots and expiry."""

    async def find(self, match_id: str) -> Room | None:
        """A stored match this server does not hold, loaded and registered (None: none to load)."""

    def watch(self, match_id: str) -> None:
        """A match is now held here: hear of the changes other servers make to it."""

    def unwatch(self, match_id: str) -> None:
        """A match left this server's memory."""

    async def fresh_ratings(self, player_ids: list[str]) -> Ratings:
        """The players' ratings as another server may have changed them (before a rated end is stored)."""

    def guards(self, room: Room, change: ArenaChange, ratings: list[tuple[str, Rating, int]]) -> list[Op]:
        """The statements a change adds so that two servers never store changes from one state."""

    async def conflict(self, room: Room) -> None:
        """Another server stored a change first (or a client saw one): bring the match up to date (lock held)."""

    def stored(self, room: Room, change: ArenaChange) -> None:
        """A change was stored and published here: tell whoever else holds the match."""

    async def catch_up(self, room: Room) -> None:
        """Before a watch or sync is answered: read what this server may have missed of the match."""

    async def resume(self) -> None:
        """At start-up, after players and ratings: load the matches this server runs from the first moment."""

    async def seated(self, player_id: str) -> None:
        """A player said hello: load the matches where it holds a seat that this server does not hold yet."""

    async def listing(self, limit: int, charge: Callable[[int], None]) -> list[MatchSummary]:
        """The lobby's open and live matches (`charge` takes the rows read from the caller's quota)."""

    async def ratings(self) -> Ratings:
        """The ratings of record, for the standings."""

    def seek(self, variant: str, session: Follower) -> None:
        """A player of this server waits for an opponent in `variant` (also in the arena's own seeks)."""

    def unseek(self, variant: str, session: Follower) -> None:
        """A player waiting here was paired here, or left."""

    async def take_seek(self, variant: str, player_id: str) -> tuple[str, Seat] | None:
        """A player waiting on another server (its node and seat), taken off the queue; None: nobody."""

    async def seeks_elsewhere(self, limit: int) -> list[tuple[str, str]]:
        """(variant, name) of the players waiting on other servers, at most `limit`."""

    def paired(self, node: str, player_id: str, match_id: str) -> None:
        """Tell `node` that its waiting player has a seat in `match_id`."""

    def tournaments(self) -> TournamentOwners:
        """The deployment's side of events (who pairs each one, what a change adds, who is told)."""

    def sessions_ended(self, session_ids: list[str]) -> None:
        """Accounts' sessions ended here: the other servers close their connections signed in with them."""

    async def start(self, address: str) -> None:
        """Begin serving at `address` (after the port is bound)."""

    async def handover(self) -> None:
        """Drain: let the matches this server owns go to the others."""

    async def close(self) -> None:
        """Stop (after the connections closed)."""

    def health(self) -> dict[str, Any]:
        """What `/health` adds for this deployment."""


class SingleNode:
    """A server on its own: it holds every unfinished match from start-up, owns all, and tells no one."""

    role = "single"
    node_id: str | None = None
    retries = 1

    def __init__(self, arena: MatchHost) -> None:
        self.arena = arena

    def owns(self, match_id: str) -> bool:
        """Every match is this server's."""
        return True

    async def find(self, match_id: str) -> Room | None:
        """Nothing to load: every open and live match is in memory from start-up."""
        return None

    def watch(self, match_id: str) -> None:
        """No one else changes a match."""

    def unwatch(self, match_id: str) -> None:
        """No one else changes a match."""

    async def fresh_ratings(self, player_ids: list[str]) -> Ratings:
        """The ratings in memory are the ones of record."""
        return {}

    def guards(self, room: Room, change: ArenaChange, ratings: list[tuple[str, Rating, int]]) -> list[Op]:
        """The match's lock orders every change: nothing to claim."""
        return []

    async def conflict(self, room: Room) -> None:
        """Nothing to read: the match in memory is the stored one."""

    def stored(self, room: Room, change: ArenaChange) -> None:
        """No one else to tell."""

    async def catch_up(self, room: Room) -> None:
        """Nothing missed: every change is made here."""

    async def resume(self) -> None:
        """Load every unfinished match, its clocks and bots running."""
        from server.core.resume import resume_all

        await resume_all(self.arena)

    async def seated(self, player_id: str) -> None:
        """Every seat's match is in memory already."""

    async def listing(self, limit: int, charge: Callable[[int], None]) -> list[MatchSummary]:
        """Open matches whose creator is connected first, then live ones by spectators (made `LISTING_STEP` rooms
        at a time, the loop serving others between)."""
        a = self.arena
        rooms = []
        for index, r in enumerate(reversed(list(a.rooms.values()))):  # newest first
            if index and not index % LISTING_STEP:
                await asyncio.sleep(0)
            if r.match.status == "live" or (r.match.status == "open" and any(a.presence.connected(r))):
                rooms.append(r)
        rooms.sort(key=lambda r: (r.match.status != "open", -r.spectators))
        creators = a.quotas.creators
        opened = sum(r.match.status == "open" for r in rooms)

        def creator(room: Room) -> tuple[str, str]:
            """The network and the address of an open match's creator (the match itself if unknown)."""
            return creators.get(room.match.match_id) or (room.match.match_id, room.match.match_id)

        rooms[:opened] = lobby_order(rooms[:opened], creator)
        shown = rooms[:limit]
        charge(len(shown))
        lines = []
        for index, r in enumerate(shown):
            if index and not index % LISTING_STEP:
                await asyncio.sleep(0)
            lines.append(r.match.summary(r.spectators))
        return lines

    async def ratings(self) -> Ratings:
        """The ratings in memory."""
        return self.arena.ratings

    def sessions_ended(self, session_ids: list[str]) -> None:
        """No other server holds connections."""

    def seek(self, variant: str, session: Follower) -> None:
        """The arena's own seeks are every seek."""

    def unseek(self, variant: str, session: Follower) -> None:
        """The arena's own seeks are every seek."""

    async def take_seek(self, variant: str, player_id: str) -> tuple[str, Seat] | None:
        """No one waits anywhere else."""
        return None

    async def seeks_elsewhere(self, limit: int) -> list[tuple[str, str]]:
        """No one waits anywhere else."""
        return []

    def paired(self, node: str, player_id: str, match_id: str) -> None:
        """No other node to tell."""

    def tournaments(self) -> TournamentOwners:
        """Every event is this server's."""
        from server.core.tournament_owners import SingleNodeTournaments

        return SingleNodeTournaments()

    async def start(self, address: str) -> None:
        """Nothing to join."""

    async def handover(self) -> None:
        """No one to hand matches to: they resume at the next start."""

    async def close(self) -> None:
        """Nothing to close."""

    def health(self) -> dict[str, Any]:
        """Nothing to add."""
        return {}


@dataclass(frozen=True, slots=True)
class Deployment:
    """How this server runs beside others (chosen once, at start-up): its replication, its presence, and where failed
    sign-ins are counted."""

    replication: Replication
    presence: Presence
    failure_counts: FailureCounts | None = None
    """Failed sign-ins as every server of the deployment counts them (None: a server on its own counts in its
    memory)."""


def single_node(arena: MatchHost) -> Deployment:
    """A server on its own."""
    options = arena.options
    return Deployment(SingleNode(arena), Presence(arena.loop, arena.now, options.presence_delay_s, arena.rooms_of,
                                                  options.grace_s))

"""What the deployment side may use of the arena: `MatchHost`, beside `TournamentHost` for tournaments.

Replication (a server alone, or a cluster node), start-up loading (`server.core.resume`) and a cluster's copies
of matches reach the arena only through this protocol, so none of them imports the arena, and the arena's other
members stay its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, Protocol

from protocol.variant import Variant
from server.core.accounts import Accounts
from server.core.arena_options import ArenaOptions
from server.core.changes import ArenaChange
from server.core.figures import Figures
from server.core.follower import Follower
from server.core.identities import Identities
from server.core.match import Match
from server.core.presence import Presence
from server.core.quotas import Quotas
from server.core.ratings import Rating
from server.core.rooms import Room
from server.storage import Op, Storage


class MatchHost(Protocol):
    """The arena as its deployment sees it: its matches, their change path's publishing half, and its services."""

    loop: asyncio.AbstractEventLoop
    options: ArenaOptions
    storage: Storage
    identities: Identities
    accounts: Accounts
    quotas: Quotas
    presence: Presence
    metrics: Figures
    rooms: dict[str, Room]
    """The matches in memory, by id (written by the arena alone: a load goes through `load_room`)."""
    seeks: dict[str, Follower]
    ratings: dict[str, tuple[Rating, int]]
    quarantined: int
    closing: bool

    def now(self) -> float:
        """The time source of every match."""

    def new_match(self, match_id: str, variant: Variant, rated: bool) -> Match:
        """A match wired to the arena's time source and grace period."""

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background task that shutdown will cancel."""

    def load_room(self, room: Room) -> None:
        """Register a match read from the database (a load, not a change)."""

    def after_change(self, room: Room) -> None:
        """Arm a room's timers and its hosted bot's turn after a change or a load."""

    def room(self, match_id: str) -> Room:
        """The room of a match in memory, or a refusal naming it."""

    async def find_room(self, match_id: str) -> Room:
        """The room of an open, live or recently finished match (in a cluster, loaded from the database)."""

    async def loaded_room(self, match_id: str) -> Room | None:
        """The room of a match in memory or, in a cluster, loaded as a copy; None if neither."""

    def rooms_of(self, player_id: str) -> list[Room]:
        """The rooms where a player holds a seat, the one it took last at the end."""

    async def write(self, ops: list[Op]) -> None:
        """Store ops as one durable write."""

    def publish(self, room: Room, change: ArenaChange, logged: int,
                updates: Sequence[tuple[str, Rating, int]] = (), actor: Follower | None = None,
                follow: Follower | None = None) -> None:
        """Commit a stored change in memory and tell its followers."""

    def paired_elsewhere(self, player_id: str, match_id: str) -> None:
        """Another node gave a player waiting here a seat in `match_id`."""

    async def resume_matches(self) -> None:
        """Load the unfinished matches this server runs (all of them alone; a cluster node takes its share)."""

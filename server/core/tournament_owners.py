"""Who pairs and drives each event: the deployment's side of events, one server alone or one node of several.

The driver never asks which deployment runs: it calls a `TournamentOwners`, which the arena's
replication gives it (`Replication.tournaments`). `SingleNodeTournaments` owns every event and tells no one;
`server.cluster.tournaments.ClusterTournaments` owns some (`event_owners`), guards each change, tells the other
nodes and takes over a dead node's events. The driver is the `TournamentHost` they call back.
"""

from __future__ import annotations

from typing import Protocol

from server.storage import Op
from server.tournaments.tournament import Tournament


class TournamentHost(Protocol):
    """What the deployment asks of the events' driver."""

    async def adopt(self, event_id: str) -> None:
        """This node owns the event now: read it as stored, resume its round and its clock."""

    def release(self, event_id: str) -> None:
        """Another node owns the event now: stop its clock here (keep it as a copy)."""

    async def refresh(self, event_id: str, version: int) -> None:
        """Another node stored a change (the event reached `version`): read it if this copy is older."""


class TournamentOwners(Protocol):
    """The deployment's side of every event: who owns it, what a change adds, who is told."""

    @property
    def retries(self) -> int:
        """Times a change is prepared again after another node stored one first (1: never)."""

    def bind(self, host: TournamentHost) -> None:
        """Call `host` back when an event is taken over, let go of, or changed elsewhere."""

    def owns(self, event_id: str) -> bool:
        """Whether this server pairs the event and runs its clock."""

    def guards(self, event: Tournament, before: int, created: bool) -> list[Op]:
        """The statements a change from version `before` adds (a new event's owner; an ended one's release)."""

    def stored(self, event: Tournament) -> None:
        """A change was stored here: tell whoever else holds the event."""

    def seen(self, event: Tournament) -> None:
        """This server holds the event at its version (read or stored)."""


class SingleNodeTournaments:
    """A server on its own: it owns every event, and the event's lock orders every change."""

    retries = 1

    def bind(self, host: TournamentHost) -> None:
        """Nothing ever calls back: no other server takes or changes an event."""

    def owns(self, event_id: str) -> bool:
        """Every event is this server's."""
        return True

    def guards(self, event: Tournament, before: int, created: bool) -> list[Op]:
        """Nothing to claim."""
        return []

    def stored(self, event: Tournament) -> None:
        """No one else to tell."""

    def seen(self, event: Tournament) -> None:
        """No other copy to compare with."""

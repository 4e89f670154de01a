"""Who holds each open or running event's place: its creator's network and address, the caps per address, per
network and in all, and which event gives its place up when the places are contested."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from protocol.errors import TooManyError
from server.core.arena_options import ArenaOptions
from server.core.networks import prefix_of
from server.tournaments.tournament import Tournament, TournamentStatus

RETRY_S = 60.0
"""The retry hint of a creation refused for want of a place."""


class TournamentPlaces:
    """The creator's (network, address) of each event made here; events read from the database (made before a
    restart, or on another node) hold a place in all and count for no network (each creator's as one, when places
    are contested)."""

    def __init__(self, options: ArenaOptions) -> None:
        self.options = options
        self.holders: dict[str, tuple[str, str]] = {}
        """Event id -> the network prefix and the address of the client that created it."""

    def check(self, live: Mapping[str, Tournament], address: str) -> Tournament | None:
        """Refuse (`too_many`) a new event from `address` past its address's or its network's cap; at the cap in
        all, the event whose place it takes (the newest open one nobody joined of the network holding the most
        places, an event of no known network counting for its creator alone, when the newcomer's network holds
        fewer), else `too_many`."""
        o = self.options
        network = prefix_of(address)
        held = [self.holders[eid] for eid in live if eid in self.holders]
        if sum(a == address for _, a in held) >= o.events_per_address:
            raise TooManyError(f"your address has {o.events_per_address} open or running events: wait for one to "
                               "end, or cancel one (event_cancel)", RETRY_S)
        by_network = Counter(n for n, _ in held)
        if by_network[network] >= o.events_per_network:
            raise TooManyError(f"your network has {o.events_per_network} open or running events: wait for one to "
                               "end, or cancel one (event_cancel)", RETRY_S)
        if len(live) < o.events_in_all:
            return None
        by_owner = Counter(self.owner(e) for e in live.values())
        crowded, most = by_owner.most_common(1)[0]
        if by_owner[network] + 1 < most:
            idle = [e for e in live.values() if self.owner(e) == crowded
                    and e.status is TournamentStatus.OPEN and not e.joined()]
            if idle:
                return max(idle, key=lambda e: e.created_at)
        raise TooManyError("the server runs as many events as it may: try again later", RETRY_S)

    def hold(self, event_id: str, address: str) -> None:
        """Count a new event against its creator's address and network while it is open or running."""
        self.holders[event_id] = (prefix_of(address), address)

    def free(self, event: Tournament) -> None:
        """An event ended (or was cancelled): its place is free."""
        self.holders.pop(event.event_id, None)

    def owner(self, event: Tournament) -> str:
        """Whose turn an event takes in the event list: its creator's network (else the creator's name)."""
        holder = self.holders.get(event.event_id)
        return holder[0] if holder is not None else "creator:" + event.creator

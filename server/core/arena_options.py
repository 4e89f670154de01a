"""The arena's tunable behaviour: grace and no-move limits, lifetimes, quotas, the operator's token."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from server.core.passwords import PasswordCost
from server.core.sign_in_pace import PaceLimits
from server.core.sign_in_throttle import ThrottleLimits


@dataclass
class ArenaOptions:
    """Tunable behaviour of the arena (the server passes its keyword options here)."""

    grace_s: float = 60.0
    """How long a disconnected player may stay away before the opponent can claim the win."""
    idle_s: float | None = 900.0
    """In untimed matches: how long the side to move may make no move before the opponent can claim."""
    linger_s: float = 300.0
    """How long a finished match stays in memory for late syncs."""
    max_lingering: int = 2_000
    """Finished matches kept in memory for late syncs at once; past it, the one that finished longest ago leaves
    memory at once (it stays in the database, where a late `sync` or `watch` reads it back, as after `linger_s`):
    exhibitions finished as fast as the quotas allow cannot fill the memory for five minutes each."""
    max_list: int = 500
    """Most matches in one listing."""
    clock: Callable[[], float] | None = None
    """The time source of every match (default: the event loop's monotonic clock); tests inject one."""
    wall_clock: Callable[[], float] | None = None
    """The time of day (seconds since the epoch) of tournaments: their creation, start times and an arena's end
    (default: `time.time`); tests inject one, then call `TournamentDriver.check_clocks`."""
    open_ttl_s: float = 1800.0
    """How long an open match waits for an opponent before it is cancelled."""
    open_per_player: int = 5
    """Open matches one identity may have waiting at once."""
    open_per_address: int = 20
    """Open matches the identities of one network address may have waiting at once."""
    identities_per_address: int = 100
    """New identities one network address may make at once; its budget refills over an hour."""
    identities_per_network: int = 1_000
    """New identities the addresses of one network prefix (an IPv4 /24, an IPv6 /64) may make at once, together;
    its budget refills over an hour."""
    password_cost: PasswordCost = field(default_factory=PasswordCost)
    """argon2id's parameters for accounts' passwords (a stored hash with others is made again at its sign-in)."""
    sign_in_throttle: ThrottleLimits = field(default_factory=ThrottleLimits)
    """Failed sign-ins per account and per network: free ones, then growing delays (`server.core.sign_in_throttle`;
    a cluster's nodes count them together)."""
    sign_in_pace: PaceLimits = field(default_factory=PaceLimits)
    """Failed password sign-ins of the whole server: free ones, then tries paced (`server.core.sign_in_pace`)."""
    max_cached_players: int = 50_000
    """Players kept in memory (about 400 bytes each), the least recently used leaving first; the others are read
    from the database when they say hello or a stored game of theirs is read back."""
    identities_per_hour: int = 36_000
    """New identities the whole server may make in an hour (bursts of a tenth)."""
    exhibitions_per_player: int = 4
    """Unfinished exhibitions one identity may have started."""
    exhibitions_in_all: int = 64
    """Unfinished exhibitions clients may have started, all together (the operator's rated ones aside)."""
    exhibitions_per_address: int = 8
    """Unfinished exhibitions the identities of one network address may have started."""
    exhibitions_per_network: int = 16
    """Unfinished exhibitions the identities of one network prefix (an IPv4 /24, an IPv6 /64) may have started."""
    event_start_ahead_s: float = 7 * 86400.0
    """How far ahead of its creation an event may start (its place is held until then)."""
    events_in_all: int = 200
    """Open or running events on the server; at the cap a creator of a network holding fewer than the network
    holding most takes the place of that network's newest open event nobody joined."""
    events_per_address: int = 6
    """Open or running events the identities of one network address may have created."""
    events_per_network: int = 12
    """Open or running events the identities of one network prefix (an IPv4 /24, an IPv6 /64) may have created."""
    event_unjoined_ttl_s: float = 3600.0
    """An open event without a start time that nobody but its creator (and its hosted bots) joined is cancelled
    this long after its creation."""
    event_open_ttl_s: float = 86400.0
    """An open event without a start time that has not started this long after its creation is cancelled."""
    presence_delay_s: float = 0.2
    """Presence changes within this long of each other are sent to the followers once."""
    max_follow: int = 64
    """Matches one connection may follow at once (watch, sync, its own games)."""
    max_follow_per_address: int = 512
    """Matches the connections of one address may follow at once, in all."""
    operator_token: str | None = None
    """The secret that allows rated exhibitions (the operator's ladder); None: no one may start them."""

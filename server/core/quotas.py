"""Per-identity and per-address quotas on what a client can make the server hold: identities, open matches,
exhibitions; and the lobby's fair order, so that many identities of few addresses cannot fill the list."""

from __future__ import annotations

import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from server.core.errors import TooManyError
from server.core.networks import prefix_of
from server.core.rates import RateLimiter

if TYPE_CHECKING:
    from server.core.arena_options import ArenaOptions

T = TypeVar("T")
MAX_ADDRESSES = 20_000
"""Addresses whose spent identity budget is remembered (the longest unused forgotten first)."""


@dataclass(frozen=True)
class QuotaLimits:
    """How much one identity or one network address may hold at once."""

    open_per_player: int
    """Open matches (waiting for an opponent) one identity may have created."""
    exhibitions_per_player: int
    """Unfinished bot exhibitions one identity may have started."""
    exhibitions_per_address: int
    """Unfinished bot exhibitions the identities of one network address may have started."""
    open_per_address: int = 20
    """Open matches the identities of one network address may have created."""
    identities_per_address: int = 100
    """New identities one network address may make at once; its budget refills over an hour."""
    identities_per_hour: int = 36_000
    """New identities the whole server makes in an hour at most (bursts of a tenth of it)."""
    exhibitions_in_all: int = 64
    """Unfinished exhibitions clients may have started, all together (the operator's rated ones aside)."""
    exhibitions_per_network: int = 16
    """Unfinished bot exhibitions the identities of one network prefix (IPv4 /24, IPv6 /64) may have started."""
    identities_per_network: int = 1_000
    """New identities the addresses of one network prefix may make at once, together; it refills over an hour."""

    @classmethod
    def of(cls, options: ArenaOptions) -> QuotaLimits:
        """The limits an arena's options set."""
        return cls(options.open_per_player, options.exhibitions_per_player, options.exhibitions_per_address,
                   options.open_per_address, options.identities_per_address, options.identities_per_hour,
                   options.exhibitions_in_all, options.exhibitions_per_network,
                   options.identities_per_network)


class Buckets:
    """A token bucket per key, kept while spent (until it refills) and for at most `max_keys` keys."""

    def __init__(self, rate: float, burst: int, max_keys: int = MAX_ADDRESSES,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.max_keys, self.now = rate, burst, max_keys, now
        self.buckets: OrderedDict[str, RateLimiter] = OrderedDict()

    def of(self, key: str) -> RateLimiter:
        """The bucket of `key` (a full new one if it had none or it refilled), as the most recently used."""
        bucket = self.buckets.pop(key, None) or RateLimiter(self.rate, self.burst, self.now)
        now = self.now()
        while self.buckets and (len(self.buckets) >= self.max_keys
                                or next(iter(self.buckets.values())).full_at() <= now):
            self.buckets.popitem(last=False)
        self.buckets[key] = bucket
        return bucket


def fair_order(items: Iterable[T], owner: Callable[[T], str]) -> list[T]:
    """`items` taken in turns by owner: every owner's first, then every owner's second, ... (order kept within
    each owner and among the owners' first), so no owner's many items push out another's few."""
    rounds: list[list[T]] = []
    seen: defaultdict[str, int] = defaultdict(int)
    for item in items:
        key = owner(item)
        turn = seen[key]
        seen[key] += 1
        if turn == len(rounds):
            rounds.append([])
        rounds[turn].append(item)
    return [item for one in rounds for item in one]


def lobby_order(items: Iterable[T], creator: Callable[[T], tuple[str, str]]) -> list[T]:
    """Open matches (given newest first) in the lobby's order: their creators' networks (IPv4 /24, IPv6 /64) in
    turns, and within a network its addresses in turns, so that many identities of a few addresses, or many
    addresses of one network, cannot fill the list. `creator` gives an item's (network, address)."""
    by_address = fair_order(items, lambda item: creator(item)[1])
    return fair_order(by_address, lambda item: creator(item)[0])  # keeps the addresses' turns within each network


class Quotas:
    """Counts what each identity and address holds; refuses with `too_many` past the limits."""

    def __init__(self, limits: QuotaLimits, now: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        per_address = limits.identities_per_address
        self.identities = Buckets(per_address / 3600, per_address, now=now)
        """New identities per address."""
        per_network = limits.identities_per_network
        self.network_identities = Buckets(per_network / 3600, per_network, now=now)
        """New identities per network prefix."""
        self.all_identities = RateLimiter(limits.identities_per_hour / 3600, max(1, limits.identities_per_hour // 10),
                                          now)
        self.creators: dict[str, tuple[str, str]] = {}
        """Open match id -> the network prefix and the address of its creator (for the lobby's fair order)."""
        self.open: defaultdict[str, set[str]] = defaultdict(set)
        self.exhibitions: defaultdict[str, set[str]] = defaultdict(set)
        self._holders: dict[str, list[tuple[defaultdict[str, set[str]], str]]] = {}

    def take_identity(self, address: str) -> None:
        """Count a new identity against its address's, its network's and the server's budgets; `too_many` past
        any."""
        mine = self.identities.of(address)
        if not mine.allow():
            raise TooManyError("your address made too many new identities: say hello with a token you have",
                               mine.wait_s())
        network = self.network_identities.of(prefix_of(address))
        if not network.allow():
            mine.tokens += 1  # not made: the address keeps its share
            raise TooManyError("your network made too many new identities: say hello with a token you have",
                               network.wait_s())
        if not self.all_identities.allow():
            mine.tokens += 1  # not made: the address and its network keep their shares
            network.tokens += 1
            raise TooManyError("the server makes no more new identities for now: say hello with a token you have",
                               self.all_identities.wait_s())

    def check_open(self, player_id: str, address: str | None = None) -> None:
        """Refuse a new open match past the identity's or the creator address's limit."""
        if len(self.open.get(player_id, ())) >= self.limits.open_per_player:
            raise TooManyError(f"you have {self.limits.open_per_player} open matches already: "
                               "wait for an opponent or leave one")
        if address is not None and len(self.open.get("a:" + address, ())) >= self.limits.open_per_address:
            raise TooManyError(f"your address has {self.limits.open_per_address} open matches already: "
                               "wait for an opponent or leave one")

    def check_exhibition(self, player_id: str, address: str | None, operator: bool = False) -> None:
        """Refuse a new exhibition past the identity's, the address's, its network's or (but for the operator's) the
        server's limit (an event's bot game counts for its creator; None: an address not known, counted for no
        address or network)."""
        if not operator and len(self.exhibitions.get("all", ())) >= self.limits.exhibitions_in_all:
            raise TooManyError(f"the server runs {self.limits.exhibitions_in_all} exhibitions already: try again "
                               "when one has ended", 10.0)
        if len(self.exhibitions.get("p:" + player_id, ())) >= self.limits.exhibitions_per_player:
            raise TooManyError(f"you have {self.limits.exhibitions_per_player} exhibitions running already")
        if address is None:
            return
        if len(self.exhibitions.get("a:" + address, ())) >= self.limits.exhibitions_per_address:
            raise TooManyError(f"your address has {self.limits.exhibitions_per_address} exhibitions running already")
        if len(self.exhibitions.get("n:" + prefix_of(address), ())) >= self.limits.exhibitions_per_network:
            raise TooManyError(f"your network has {self.limits.exhibitions_per_network} exhibitions running already: "
                               "try again when one has ended", 10.0)

    def hold_open(self, match_id: str, player_id: str, address: str | None = None) -> None:
        """Count an open match against its creator (and the creator's address) until it starts, is cancelled
        or ends."""
        self._hold(match_id, self.open, player_id)
        if address is not None:
            self._hold(match_id, self.open, "a:" + address)
            self.creators[match_id] = (prefix_of(address), address)

    def hold_exhibition(self, match_id: str, player_id: str, address: str | None) -> None:
        """Count an exhibition (or an event's bot game) against its requester and address until it ends."""
        self._hold(match_id, self.exhibitions, "p:" + player_id)
        if address is not None:
            self._hold(match_id, self.exhibitions, "a:" + address)
            self._hold(match_id, self.exhibitions, "n:" + prefix_of(address))
        self._hold(match_id, self.exhibitions, "all")

    def _hold(self, match_id: str, table: defaultdict[str, set[str]], key: str) -> None:
        """Note that `key` holds `match_id` in `table`."""
        table[key].add(match_id)
        self._holders.setdefault(match_id, []).append((table, key))

    def release(self, match_id: str) -> None:
        """A match no longer counts (it went live, ended or was cancelled)."""
        self.creators.pop(match_id, None)
        for table, key in self._holders.pop(match_id, []):
            held = table.get(key)
            if held is not None:
                held.discard(match_id)
                if not held:
                    del table[key]

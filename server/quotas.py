"""Per-identity and per-address quotas on what a client can make the server hold: open matches, exhibitions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from server.errors import TooManyError


@dataclass(frozen=True)
class QuotaLimits:
    """How much one identity or one network address may hold at once."""

    open_per_player: int
    """Open matches (waiting for an opponent) one identity may have created."""
    exhibitions_per_player: int
    """Unfinished bot exhibitions one identity may have started."""
    exhibitions_per_address: int
    """Unfinished bot exhibitions the identities of one network address may have started."""


class Quotas:
    """Counts what each identity and address holds; refuses with `too_many` past the limits."""

    def __init__(self, limits: QuotaLimits) -> None:
        self.limits = limits
        self.open: defaultdict[str, set[str]] = defaultdict(set)
        self.exhibitions: defaultdict[str, set[str]] = defaultdict(set)
        self._holders: dict[str, list[tuple[defaultdict[str, set[str]], str]]] = {}

    def check_open(self, player_id: str) -> None:
        """Refuse a new open match past the identity's limit."""
        if len(self.open.get(player_id, ())) >= self.limits.open_per_player:
            raise TooManyError(f"you have {self.limits.open_per_player} open matches already: "
                               "wait for an opponent or leave one")

    def check_exhibition(self, player_id: str, address: str) -> None:
        """Refuse a new exhibition past the identity's or the address's limit."""
        if len(self.exhibitions.get("p:" + player_id, ())) >= self.limits.exhibitions_per_player:
            raise TooManyError(f"you have {self.limits.exhibitions_per_player} exhibitions running already")
        if len(self.exhibitions.get("a:" + address, ())) >= self.limits.exhibitions_per_address:
            raise TooManyError(f"your address has {self.limits.exhibitions_per_address} exhibitions running already")

    def hold_open(self, match_id: str, player_id: str) -> None:
        """Count an open match against its creator until it starts, is cancelled or ends."""
        self._hold(match_id, self.open, player_id)

    def hold_exhibition(self, match_id: str, player_id: str, address: str) -> None:
        """Count an exhibition against its requester and address until it ends."""
        self._hold(match_id, self.exhibitions, "p:" + player_id)
        self._hold(match_id, self.exhibitions, "a:" + address)

    def _hold(self, match_id: str, table: defaultdict[str, set[str]], key: str) -> None:
        """Note that `key` holds `match_id` in `table`."""
        table[key].add(match_id)
        self._holders.setdefault(match_id, []).append((table, key))

    def release(self, match_id: str) -> None:
        """A match no longer counts (it went live, ended or was cancelled)."""
        for table, key in self._holders.pop(match_id, []):
            held = table.get(key)
            if held is not None:
                held.discard(match_id)
                if not held:
                    del table[key]

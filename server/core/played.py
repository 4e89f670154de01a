"""Whether an identity has played on this server: the analysis queue serves players before fresh identities.

An identity has played when it holds a seat in a live or finished match of at least `PLAYED_PLIES`
plies, here in memory or stored by any node (a game against a hosted bot counts). Identities are
free, and a flood of them asks analyses from many networks at once; a game takes moves, so an
attacker's analysts would each need a real game of their own to be served as a player.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.storage import is_database_failure

if TYPE_CHECKING:
    from server.core.arena import Arena

PLAYED_PLIES = 10
"""The plies of one game an identity must hold a seat in to count as a player here."""
RECHECK_S = 30.0
"""How long an identity found not to have played is taken at its word before the database is asked again."""
MAX_UNPLAYED = 20_000
"""Identities remembered as not having played (the longest remembered forgotten first)."""


class PlayedHere:
    """Answers whether an identity has played here, from memory first, then from the database (remembered)."""

    def __init__(self, arena: Arena, now: Callable[[], float] = time.monotonic) -> None:
        self.arena = arena
        self.now = now
        self.players: set[str] = set()
        """Identities known to have played (no more than the identities the server holds)."""
        self.unplayed: OrderedDict[str, float] = OrderedDict()
        """Identity -> when it was last found not to have played."""

    async def played(self, player_id: str | None) -> bool:
        """Whether `player_id` (None: no hello) holds a seat in a live or finished game of `PLAYED_PLIES` plies,
        in memory or in the database (while the database cannot say, one not known to have played has not)."""
        if player_id is None:
            return False
        if not self.known(player_id) and not await self._stored(player_id):
            return False
        self.unplayed.pop(player_id, None)
        self.players.add(player_id)
        return True

    def known(self, player_id: str | None) -> bool:
        """Whether `player_id` is known to have played: found so before, or seated in such a game in memory now."""
        if player_id is None:
            return False
        if player_id in self.players:
            return True
        if any(room.match.ply >= PLAYED_PLIES for room in self.arena.rooms_of(player_id)):
            self.players.add(player_id)
            return True
        return False

    async def _stored(self, player_id: str) -> bool:
        """Whether the database holds such a game of `player_id`'s (asked again at most every `RECHECK_S`)."""
        now = self.now()
        checked = self.unplayed.get(player_id)
        if checked is not None and now - checked < RECHECK_S:
            return False
        try:
            if await self.arena.storage.played(player_id, PLAYED_PLIES):
                return True
        except Exception as exc:
            if not is_database_failure(exc):
                raise
            return False
        self.unplayed.pop(player_id, None)
        self.unplayed[player_id] = now
        while len(self.unplayed) > MAX_UNPLAYED:
            self.unplayed.popitem(last=False)
        return False

"""The opening explorer for clients (`explore` requests): the moves played from a position, with the solver's values.

The counts come from the index (`server.storage.explore`), one read by its key; the answer is
a public read charged by its rows (one per move listed, and one for the position) and shared
while the server is busy or many ask it (`server.front.router.shared_read`). The values come
from the analysis queue (`Analyst.aanalyse`), each position thinking at most `VALUE_BUDGET_MS`,
with the queue's bounds and fairness; an address has one explorer valuation at a time (another
asked meanwhile is answered without values), proved values are kept (`MAX_KEPT_VALUES`, the
least recently used forgotten first), and a refusal of the queue leaves the rest unvalued rather
than refusing the counts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from bots.review import Valuation
from protocol.errors import InPlayError, KalahError
from protocol.explore_messages import Explore
from protocol.messages import Analyse, Message, encode
from protocol.names import name_key
from protocol.position import Position
from protocol.variant import Variant
from server.core.arena import Arena
from server.core.explorer import VALUE_BUDGET_MS, after_moves, explored, start_of, tallied, to_value
from server.core.played import PlayedHere
from server.edge.answers import Answers
from server.edge.session import Session
from server.front.analysis import Analyst
from server.front.router import charge_rows, shared_read
from server.storage.explore import Tally, position_key

MAX_KEPT_VALUES = 20_000
"""Proved valuations kept for the next answers (about 200 bytes each)."""


class Explorer:
    """Answers `explore` requests from the index and the analysis queue."""

    def __init__(self, arena: Arena, analyst: Analyst, answers: Answers, played: PlayedHere,
                 busy: Callable[[], bool] = lambda: False) -> None:
        self.arena = arena
        self.analyst = analyst
        self.storage = arena.storage
        self.answers = answers
        self.played = played
        self.busy = busy
        """Whether the server is overloaded (answers are then shared)."""
        self.kept: OrderedDict[int, Valuation] = OrderedDict()
        """Proved valuations by position key, the least recently used first."""
        self._valuing: set[str] = set()
        """Addresses with an explorer valuation under way."""

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handler of the explore request."""
        return {Explore: self.explore}

    async def explore(self, s: Session, msg: Explore) -> list[Message]:
        """The moves played from the position asked about, with their counts and values (a shared public read);
        values are refused with `in_play` at the position of a live match the asker plays in."""
        variant, position = start_of(msg)
        if msg.values:
            self.refuse_own_game(s, variant, position)

        async def make() -> tuple[Message, int]:
            """The answer, its rows charged to `s` once the index was read."""
            tallies = await self.tallies(msg, variant, position)
            charge_rows(s, len(tallies) + 1)
            afters = after_moves(position, list(tallies))
            values = await self.values(s, msg, variant, to_value(position, afters)) if msg.values else {}
            reply = explored(msg, position, tallies, afters, values)
            return reply, len(reply.moves) + 1

        return await shared_read(self.answers, self.busy(), s, ("explore", encode(msg)), make)

    def refuse_own_game(self, s: Session, variant: Variant, position: Position) -> None:
        """Raise `in_play` if a live match the asker is seated in stands at this board (whatever its ply or clock)."""
        if s.player_id is None:
            return
        key = position_key(variant, position)
        for room in self.arena.rooms_of(s.player_id):
            match = room.match
            if match.status == "live" and position_key(match.variant, match.position) == key:
                raise InPlayError(f"match {match.match_id} stands at this position and you play in it: ask for the "
                                  "values again once it has ended (or leave them out: values false)")

    async def tallies(self, msg: Explore, variant: Variant, position: Position) -> dict[str, Tally]:
        """Each move's counts from the index under the request's filters (none for a player never stored)."""
        return tallied(msg, await self.storage.explored(position_key(variant, position),
                                                        None if msg.player is None else name_key(msg.player)))

    async def values(self, s: Session, msg: Explore, variant: Variant,
                     positions: list[Position]) -> dict[str, Valuation]:
        """The valuations of `positions` by their text: those kept, the others through the analysis queue (none if
        this address is valuing already; stopping at the queue's first refusal)."""
        found: dict[str, Valuation] = {}
        missing: list[tuple[int, Position]] = []
        for p in positions:
            key = position_key(variant, p)
            kept = self.kept.get(key)
            if kept is None:
                missing.append((key, p))
            else:
                self.kept.move_to_end(key)
                found[p.fen()] = kept
        address = s.peer.address
        if not missing or address in self._valuing:
            return found
        self._valuing.add(address)
        try:
            for key, p in missing:
                try:
                    answer = await self.analyst.aanalyse(
                        Analyse(variant=msg.variant, position=p.fen(), budget_ms=VALUE_BUDGET_MS), s.peer, None,
                        lambda: self.played.known(s.player_id), counted=False)
                except KalahError:  # the queue is full, or the position cannot be analysed
                    break
                if answer is None:
                    break
                value = Valuation(answer.value, tuple(str(b) for b in answer.best), answer.exact, answer.depth)
                found[p.fen()] = value
                if value.exact:
                    self.kept[key] = value
                    while len(self.kept) > MAX_KEPT_VALUES:
                        self.kept.popitem(last=False)
        finally:
            self._valuing.discard(address)
        return found

"""Hosted bots' turns: a bot to move thinks off the event loop, within its clock, paced if asked.

Only the server that owns a match runs its bots; the action goes through the arena's change
path like a player's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from protocol.actions import Action
from protocol.position import Position
from server.core.figures import Figures
from server.core.follower import Follower
from server.core.hosted import BotRunner, Chosen, Priority, budget
from server.core.rooms import Room
from server.logs import event as log_event

Act = Callable[[Room, int, Action, int, Follower | None], Awaitable[None]]
"""The arena's change path for one action (room, seat, action, ply, actor)."""


class BotTurns:
    """Starts and runs the hosted bots' turns of the matches this server owns."""

    def __init__(self, loop: asyncio.AbstractEventLoop, bots: BotRunner, now: Callable[[], float],
                 owns: Callable[[Room], bool], closing: Callable[[], bool],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None], act: Act, metrics: Figures,
                 wait_turn: Callable[[], Awaitable[None]] | None = None) -> None:
        self.loop = loop
        self.bots = bots
        self.now = now
        self.owns = owns
        self.closing = closing
        self.spawn = spawn
        self.act = act
        self.metrics = metrics
        self.paces: dict[str, float] = {}
        """Match id -> the minimum seconds per move of a paced exhibition (not kept across a restart)."""
        self.wait_turn = wait_turn
        """Awaited before each bot move of an untimed exhibition (no person seated): while the server serves
        seated players first, exhibitions wait their turn there like connections without a seat (the
        admission's turn; a timed match's clock would run meanwhile, so its moves never wait)."""

    def maybe(self, room: Room) -> None:
        """If a hosted bot is to move, let it think (once at a time)."""
        seat = room.match.seat_to_move()
        if seat is None or room.bot_busy or self.closing() or not self.owns(room):
            return
        who = room.match.seats[seat]
        if who is None or who.bot is None:
            return
        room.bot_busy = True
        self.spawn(self.turn(room, seat, who.bot))

    async def turn(self, room: Room, seat: int, bot: str) -> None:
        """One hosted-bot action, chosen off the event loop within the bot's clock."""
        m = room.match
        ply = m.ply
        try:
            human = any(who is not None and who.bot is None for who in m.seats)
            priority = Priority.HUMAN if human else Priority.EXHIBITION
            if priority == Priority.EXHIBITION and not m.clocks.enabled and self.wait_turn is not None:
                await self.wait_turn()
                if m.status != "live" or m.ply != ply:
                    return
            began = self.loop.time()
            think = budget(m.variant.time_control, m.clocks.left(seat, self.now()))
            position = m.position
            chosen = await self.bots.choose_explained(bot, position, think, priority=priority)
            action = chosen.action
            seconds = self.loop.time() - began
            self.metrics.bot_move_seconds.labels(bot).observe(seconds)
            await self.pace(room, seat, began)
            await self.act(room, seat, action, ply, None)
            if chosen.explains:
                self.explained(m.match_id, bot, ply, position, chosen, seconds)
        except Exception as exc:
            log_event("bot_failed", match=m.match_id, bot=bot, error=repr(exc), level=30, exc_info=True)
        finally:
            room.bot_busy = False
        if m.status == "live" and m.ply != ply:
            self.maybe(room)

    def explained(self, match_id: str, bot: str, ply: int, position: Position, chosen: Chosen, seconds: float) -> None:
        """Log and count the move of a bot that explains its moves (`perfect`): one `bot_move` event saying whether it
        is proved (`exact`), how it was found (`kind`: the decision's source, or `late` for a random move played for a
        bot that failed or ran out of time) and from what (`source`: book, databases, proof, forced, search)."""
        decision = chosen.decision
        if decision is None:
            kind, source, exact, value, depth = "late", "late", False, None, -1
        else:
            kind, source, exact = decision.source, decision.origin, decision.exact
            value, depth = decision.value, decision.depth
        self.metrics.bot_moved(bot, kind, exact)
        log_event("bot_move", match=match_id, bot=bot, ply=ply, action=chosen.action.token(), exact=exact, kind=kind,
                  source=source, value=value, depth=depth, seconds=round(seconds, 3),
                  seeds=sum(position.pits) - sum(position.stores), variant=position.variant.text())

    async def pace(self, room: Room, seat: int, began: float) -> None:
        """Hold a paced match's bot move until its minimum time per move has passed (at most half its clock)."""
        wait = began + self.paces.get(room.match.match_id, 0.0) - self.loop.time()
        if room.match.clocks.enabled:
            wait = min(wait, room.match.clocks.left(seat, self.now()) / 2000)
        if wait > 0:
            await asyncio.sleep(wait)

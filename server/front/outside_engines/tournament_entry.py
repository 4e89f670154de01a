"""KGP agents in the server's events: entering one (`set arena:event ID`), the sanity games that earn the entry,
waiting for the event's games and playing the seats the arena gives them.

An agent with a token (or one that asked for an event) goes this way when it is free: into the event it asked
for, then, while its identity is entered in an open or running event, it is held out of the freeplay queue and
plays the games the event pairs it in. The gateway (`server.front.outside_engines.gateway`) owns the connections, the
queue and the agents' identities; it asks this module `claim` whether a free agent goes the events' way. This module
reaches the gateway only through `EntryHost`, the part of it declared here, so it does not import the gateway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from protocol.errors import KalahError, NotEligibleError, UnknownBotError
from protocol.event_settings import MAX_SANITY_GAMES
from protocol.kgp import gateway_variant
from server.front.outside_engines.agent import Agent
from server.front.outside_engines.driver import AgentSession, DriverSettings, MatchDriver
from server.logs import event as log_event
from server.tournaments.tournament import EntrantKind, Tournament

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.front.tournament_requests import TournamentRequests

SANITY_BOT = "random"
"""The hosted bot an engine beats to become eligible for an event that asks for wins against it."""


class EntryHost(Protocol):
    """What the entry uses of the gateway: its arena, its agents' sessions and games, its queue and its tasks."""

    arena: Arena
    sessions: dict[Agent, AgentSession]
    """Each agent's session (its identity, once it has one)."""
    busy: dict[Agent, str | None]
    """Agents taken for a game: the id of the match they play (None until it exists)."""
    settings: DriverSettings
    """How freeplay games run."""
    closing: bool

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a task that closing the gateway cancels."""

    def enqueue(self, agent: Agent) -> None:
        """Send a free agent where it goes next (its event's way, else the queue)."""

    def queue(self, agent: Agent) -> None:
        """Put a free agent in the freeplay queue."""

    def take(self, agent: Agent) -> None:
        """Take an agent out of the queue for a game."""

    def unqueue(self, agent: Agent) -> None:
        """Take an agent out of the queue, if it is there."""

    async def identity(self, agent: Agent) -> AgentSession:
        """The agent's session with its identity (made or read back once)."""


class TournamentEntry:
    """The gateway's agents in the server's events: who asked to enter, who waits for an event's games, and the
    games the arena seated them in."""

    def __init__(self, gateway: EntryHost, settings: DriverSettings,
                 tournaments: TournamentRequests | None = None) -> None:
        self.gateway = gateway
        self.tournaments = tournaments
        """The server's events, which agents may enter (None: agents may enter none)."""
        if tournaments is not None:
            tournaments.driver.end_hooks.append(self.tournament_ended)
        self.held: set[Agent] = set()
        """Agents entered in an event, waiting for its next game instead of freeplay."""
        self.seated: dict[Agent, list[str]] = {}
        """Live matches the arena seated an agent in unasked (its event's games), to play in turn."""
        self.settings = settings
        """How event games run: as in freeplay, but no move by the deadline forfeits (as engine testers rule)."""

    def claim(self, agent: Agent) -> bool:
        """Whether a free agent goes the events' way (and is taken for it): the games it was seated in first, else
        `route` for an agent with a token or that asked for an event."""
        g = self.gateway
        if self.seated.get(agent):
            g.busy[agent] = None
            g.spawn(self.seated_games(agent))
        elif self.tournaments is not None and (agent.token is not None or agent.event is not None):
            g.busy[agent] = None  # a game the arena seats it in meanwhile waits until it is routed
            g.spawn(self.route(agent))
        else:
            return False
        return True

    def forget(self, agent: Agent) -> None:
        """An agent's connection closed: it waits for nothing any more."""
        self.held.discard(agent)
        self.seated.pop(agent, None)

    def wants_tournament(self, agent: Agent) -> None:
        """The agent asked to enter an event: tried when it is free (at once if it waits in the queue; before
        `mode`, once it asks for freeplay)."""
        g = self.gateway
        if agent.mode is None or agent in g.busy:
            return
        g.unqueue(agent)
        self.held.discard(agent)
        g.enqueue(agent)

    async def route(self, agent: Agent) -> None:
        """Where a free agent with an identity goes: into the event it asked for, then, while it is entered in an
        open or running event, it waits for that event's games; else the queue."""
        assert self.tournaments is not None
        g = self.gateway
        try:
            session = await g.identity(agent)
            if agent.event is not None:
                await self.enter(agent, session)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a fault of the server: the agent is told and dropped
            log_event("kgp_route_failed", error=repr(exc), level=40)
            agent.kill("the server failed to find the agent a game")
            return
        finally:
            g.busy.pop(agent, None)
        if g.closing or agent.closed.is_set():
            return
        if self.seated.get(agent) or (agent.event is not None and not agent.sanity_stage):
            g.enqueue(agent)  # its game, or an event it asked for meanwhile
        elif self.tournaments.driver.entered(session.name or "") is not None:
            self.held.add(agent)
        else:
            g.queue(agent)

    async def enter(self, agent: Agent, session: AgentSession) -> None:
        """Enter the agent in the event it asked for (`ok`), or tell it why not (`error CODE: why`). An engine that
        only lacks wins against `random` plays `random` (the sanity stage) and is entered once it has them."""
        assert self.tournaments is not None and agent.event is not None
        event_id, ref, name = agent.event, agent.event_ref, session.name or ""
        sanity, told = False, agent.sanity_stage
        agent.event, agent.sanity_stage = None, False
        try:
            if agent.token is None:
                raise NotEligibleError("an event's entrant comes back as itself: set auth:token before arena:event")
            event = await self.tournaments.open_tournament(event_id)
            try:
                gateway_variant(event.settings.variant)
            except ValueError:
                raise NotEligibleError(f"event {event_id} plays {event.settings.variant}, which KGP cannot say "
                                       "(no pie rule, no opening transfer)") from None
            entrant = event.entrants.get(name)
            if entrant is None or not entrant.active:
                event.check_entry(name, EntrantKind.ENGINE, MAX_SANITY_GAMES)  # every rule but the wins
                sanity = event.settings.sanity_games > 0
                self.gateway.arena.bots.check(SANITY_BOT)
                await self.tournaments.enter(event, name, EntrantKind.ENGINE)
        except UnknownBotError:
            agent.error(f"not_eligible: event {event_id} asks for wins against {SANITY_BOT}, which this server "
                        "does not host", ref=ref)
        except NotEligibleError as exc:
            if sanity:  # tried again after each game against random
                agent.event, agent.sanity_stage = event_id, True
            if not (sanity and told):  # told once
                agent.error(f"{exc.code}: {exc}" + (f": playing {SANITY_BOT} until then" if sanity else ""), ref=ref)
        except KalahError as exc:
            agent.error(f"{exc.code}: {exc}", ref=ref)
        else:
            log_event("kgp_event_entered", event_id=event_id, player=session.player_id, engine=name)
            agent.send("ok", ref=ref)

    def seat_taken(self, agent: Agent, match_id: str) -> None:
        """The arena seated the agent's identity in a live match it did not ask the gateway for (its event's
        game): played now, or when its current game ends."""
        g = self.gateway
        waiting = self.seated.setdefault(agent, [])
        if g.closing or agent.closed.is_set() or match_id in waiting or g.busy.get(agent) == match_id:
            return
        waiting.append(match_id)
        if agent not in g.busy:
            g.take(agent)  # out of the queue, and no longer waiting for a hosted bot
            self.held.discard(agent)
            g.spawn(self.seated_games(agent))

    async def seated_games(self, agent: Agent) -> None:
        """Play the agent's seat in each match it was seated in, in turn; then it is free again."""
        g = self.gateway
        arena = g.arena
        try:
            while waiting := self.seated.get(agent):
                room = arena.rooms.get(waiting.pop(0))
                session = g.sessions.get(agent)
                seat = None if room is None or session is None else room.match.seat_of(session.player_id or "")
                if room is None or session is None or seat is None or room.match.status != "live":
                    continue
                g.busy[agent] = room.match.match_id
                await MatchDriver(arena, room, {seat: session}, self.settings_of(room.match.match_id)).run()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a fault of the server: the agent is told and dropped, never looped
            if not g.closing:
                log_event("kgp_game_failed", error=repr(exc), level=40)
                agent.kill("the server failed to run a game")
            return
        finally:
            g.busy.pop(agent, None)
        if not g.closing:
            g.enqueue(agent)

    def settings_of(self, match_id: str) -> DriverSettings:
        """How the gateway plays a seat it was given: an event's game as events rule, any other as freeplay."""
        tournaments = self.tournaments.driver.tournaments if self.tournaments is not None else {}
        return self.settings if match_id.rsplit("-r", 1)[0] in tournaments else self.gateway.settings

    def tournament_ended(self, event: Tournament) -> None:
        """An event finished or was cancelled: its agents that were waiting for its games are free again."""
        assert self.tournaments is not None
        for agent in list(self.held):
            session = self.gateway.sessions.get(agent)
            if session is None or self.tournaments.driver.entered(session.name or "") is None:
                self.held.discard(agent)
                self.gateway.enqueue(agent)

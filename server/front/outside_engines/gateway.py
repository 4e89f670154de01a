"""The KGP gateway: a TCP listener for agents, their identities, and the queue that pairs them into matches.

`kalah serve --kgp-port 2671` starts it beside the websocket port; it also serves agents on
a websocket at `/kgp` of the main port (`server.front.outside_engines.ws_link`), into the same queue. An
agent that asks for `mode freeplay` joins the queue; two waiting agents of different identities play each other
at once, and an agent still alone after `kgp_pair_wait_s` plays a hosted bot. After a game
both go back to the queue, as on go-kgp's practice server. An agent that set `auth:token`
is a persistent engine account (`engine:NAME`, its id derived from the token, the token
stored only as a hash) and its games are rated; an agent without a token plays unrated
games under a name of its connection alone. The arena's clock is the authority:
see `server.front.outside_engines.driver`. Agents that enter the server's events go the way of
`server.front.outside_engines.tournament_entry`.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from protocol.errors import NameTakenError, retry_after_ms
from protocol.kgp import gateway_variant
from protocol.names import ENGINE_PREFIX
from server.core.match import Seat
from server.core.networks import address_of, prefix_of
from server.core.tokens import hash_token, new_id, token_matches
from server.front.outside_engines.agent import Agent, AgentLimits
from server.front.outside_engines.bot_places import BotPlaces
from server.front.outside_engines.driver import AgentSession, DriverSettings, MatchDriver
from server.front.outside_engines.links import Link, TcpLink
from server.front.outside_engines.tournament_entry import SANITY_BOT, TournamentEntry
from server.logs import event as log_event
from server.storage import StoredPlayer

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.front.tournament_requests import TournamentRequests

DEFAULT_BOTS = ("random", "greedy", "alphabeta:2", "alphabeta:4", "alphabeta:6")


@dataclass
class GatewayOptions:
    """The gateway's keyword options of `start_server` (all `kgp_*`; no `kgp_port`: no gateway)."""

    kgp_port: int | None = None
    """TCP port of the gateway (go-kgp's is 2671; 0: any free port; None: no gateway)."""
    kgp_variant: str = "kalah(6,4,clock=5/move)"
    """The variant of every gateway match (no pie rule, no opening transfer: KGP cannot say them)."""
    kgp_move_s: float = 5.0
    """Longest think per state when the clock allows more, and an untimed variant's per-move limit."""
    kgp_pair_wait_s: float = 10.0
    """How long a lone agent waits for another before it plays a hosted bot."""
    kgp_bots: tuple[str, ...] = DEFAULT_BOTS
    """The hosted bots a lone agent may meet (one at random)."""
    kgp_mode_s: float = 20.0
    kgp_pong_s: float = 20.0
    kgp_idle_states: int = 2
    """States in a row an agent may leave without a move before it forfeits and is let go."""
    kgp_max_connections: int = 1000
    kgp_max_per_address: int = 16
    kgp_bot_games: int = 32
    """Games against hosted bots the gateway runs at once, for all agents together (each costs bot thinking time)."""
    kgp_bot_games_per_address: int = 4
    """Games against hosted bots the agents of one address (an IPv6 /64) play at once."""
    kgp_rate: float = 100.0
    """Lines a second one agent may send (bursts of `kgp_burst`)."""
    kgp_burst: int = 200
    kgp_seed: int | None = None
    """Seed of the gateway's choices (sides, bots, random moves), for reproducible tests."""

    @classmethod
    def split(cls, options: dict[str, Any]) -> tuple[GatewayOptions, dict[str, Any]]:
        """The gateway's options out of `start_server`'s keyword options, and the rest."""
        mine = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in options.items() if k in mine}), {
            k: v for k, v in options.items() if k not in mine}


def engine_id(token: str) -> str:
    """The player id of the engine account of `token` (not its stored hash: a different digest)."""
    return "e" + hashlib.sha256(b"kgp-agent:" + token.encode()).hexdigest()[:11]


class Gateway:
    """The listener, the agents, the queue and the matches they play."""

    def __init__(self, arena: Arena, options: GatewayOptions, host: str,
                 banned: Callable[[str], bool] = lambda address: False,
                 player_banned: Callable[[str], bool] = lambda player_id: False,
                 tournaments: TournamentRequests | None = None) -> None:
        self.arena = arena
        self.options = options
        self.host = host
        self.variant = gateway_variant(options.kgp_variant)
        self.rng = random.Random(options.kgp_seed)
        self.limits = AgentLimits(mode_s=options.kgp_mode_s, pong_s=options.kgp_pong_s, rate=options.kgp_rate,
                                  burst=options.kgp_burst)
        self.settings = DriverSettings(move_s=options.kgp_move_s, idle_states=options.kgp_idle_states, rng=self.rng)
        self.agents: set[Agent] = set()
        self.per_host: dict[str, int] = {}
        self.waiting: list[Agent] = []
        self.timers: dict[Agent, asyncio.TimerHandle] = {}
        self.bot_places = BotPlaces(options.kgp_bot_games, options.kgp_bot_games_per_address)
        """Games against hosted bots running, and the agents waiting for a place."""
        self.sessions: dict[Agent, AgentSession] = {}
        self.busy: dict[Agent, str | None] = {}
        """Agents taken for a game: the id of the match they play (None until it exists)."""
        self.entry = TournamentEntry(self, DriverSettings(move_s=options.kgp_move_s, rng=self.rng,
                                                          no_move_forfeits=True), tournaments)
        """The agents' way into the server's events, and the event games they wait for."""
        self.games = 0
        self.closing = False
        self.server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.banned = banned
        """Whether the operator banned an address (the moderation's bans)."""
        self.player_banned = player_banned
        """Whether the operator banned (or closed) an identity."""

    @classmethod
    async def start(cls, arena: Arena, options: GatewayOptions, host: str,
                    banned: Callable[[str], bool] = lambda address: False,
                    player_banned: Callable[[str], bool] = lambda player_id: False,
                    tournaments: TournamentRequests | None = None) -> Gateway:
        """Check the options and listen (agents may enter `tournaments`' events, if given)."""
        gateway = cls(arena, options, host, banned, player_banned, tournaments)
        for bot in options.kgp_bots:
            arena.bots.check(bot)
        gateway.server = await asyncio.start_server(gateway.connected, host, options.kgp_port, backlog=256)
        log_event("kgp_listening", host=host, port=gateway.port, variant=gateway.variant.text())
        return gateway

    @property
    def port(self) -> int:
        """The TCP port the gateway listens on."""
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    def spawn(self, coro: Any) -> None:
        """Run a task that closing the gateway cancels."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop accepting, stop driving matches (they stay as stored), say goodbye to every agent."""
        self.closing = True
        if self.server is not None:
            self.server.close()
        for timer in self.timers.values():
            timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for agent in list(self.agents):
            agent.kill("the server is shutting down", error=False)
        if self.server is not None:
            await self.server.wait_closed()

    # --- connections -------------------------------------------------------------------------

    async def connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one agent on a TCP connection of the gateway's port."""
        await self.attach(TcpLink(reader, writer))

    async def attach(self, link: Link) -> None:
        """Serve one agent connection (TCP or websocket), within the connection limits."""
        host = link.host
        opts = self.options
        if self.banned(address_of(host)):
            log_event("kgp_connection_refused", remote=host, reason="banned")
            link.write(b'error "your address is banned by the server\'s operator"\r\ngoodbye\r\n')
            link.close()
            return
        if (self.closing or self.per_host.get(host, 0) >= opts.kgp_max_per_address
                or (len(self.agents) >= opts.kgp_max_connections and self.open_agents() >= opts.kgp_max_connections
                    and not self.make_room(host))):
            log_event("kgp_connection_refused", remote=host)
            link.write(b'error "too many connections: try again later"\r\ngoodbye\r\n')
            link.close()
            return
        agent = Agent(link, self.limits, self.enqueue, self.gone)
        agent.on_event = self.entry.wants_tournament
        self.agents.add(agent)
        self.per_host[host] = self.per_host.get(host, 0) + 1
        try:
            await agent.serve()
        finally:
            self.agents.discard(agent)
            self.per_host[host] -= 1
            if not self.per_host[host]:
                del self.per_host[host]

    def ban_of(self, agent: Agent) -> str | None:
        """Why an agent may not stay (its address or its identity is banned), if so."""
        if self.banned(address_of(agent.host)):
            return "your address is banned by the server's operator"
        pid = agent.player_id or (None if agent.token is None else engine_id(agent.token))
        if pid is not None and self.player_banned(pid):
            return "this identity is banned by the server's operator"
        return None

    def close_banned(self) -> None:
        """Say why (`error`) and goodbye to every connected agent the bans now cover (one in a game forfeits)."""
        for agent in list(self.agents):
            why = None if agent.closed.is_set() else self.ban_of(agent)
            if why is not None:
                log_event("kgp_agent_banned", remote=agent.remote, player=agent.player_id)
                agent.kill(why)

    def open_agents(self) -> int:
        """Agents connected and not being closed."""
        return sum(not agent.closed.is_set() for agent in self.agents)

    def make_room(self, host: str) -> bool:
        """At the connection limit: say goodbye to the oldest agent that asked for no game yet (no `mode`) of the
        network holding the most connections, unless that is `host`'s own; whether one is leaving."""
        counts = Counter(prefix_of(agent.host) for agent in self.agents if not agent.closed.is_set())
        prefix, most = counts.most_common(1)[0] if counts else ("", 0)
        if most <= counts.get(prefix_of(host), 0) + 1:
            return False
        idle = [agent for agent in self.agents
                if agent.mode is None and not agent.closed.is_set() and prefix_of(agent.host) == prefix]
        if not idle:
            return False
        victim = min(idle, key=lambda agent: agent.opened)
        log_event("kgp_connection_shed", remote=victim.remote, prefix=prefix, held=most)
        victim.kill("too many connections, and you asked for no game yet: try again later")
        return True

    def gone(self, agent: Agent) -> None:
        """An agent's connection closed: out of the queue; its match (if any) hears of it."""
        self.unqueue(agent)
        self.entry.forget(agent)
        session = self.sessions.pop(agent, None)
        if session is not None:
            session.wake()
            self.arena.disconnect(session)

    # --- the queue -----------------------------------------------------------------------------

    @staticmethod
    def key(agent: Agent) -> str:
        """Who an agent is, for pairing: its token's account, or its connection alone."""
        if agent.token is not None:
            return engine_id(agent.token)
        if agent.anon_key is None:
            agent.anon_key = new_id("e")
        return agent.anon_key

    def enqueue(self, agent: Agent) -> None:
        """An agent is free (it asked for freeplay, or a game ended): the events' way if it goes there (its next
        event game, or its event: `TournamentEntry.claim`), else the queue."""
        if self.closing or agent.closed.is_set() or agent in self.waiting or agent in self.busy:
            return
        why = self.ban_of(agent)
        if why is not None:  # a banned identity's token
            agent.kill(why)
            return
        if not self.entry.claim(agent):
            self.queue(agent)

    def queue(self, agent: Agent) -> None:
        """Queue an agent for a game: paired at once if someone else waits, else a hosted bot after the wait
        (at once `random`, for an agent that needs wins against it to enter an event)."""
        if self.closing or agent.closed.is_set() or agent in self.waiting or agent in self.busy:
            return
        self.entry.held.discard(agent)
        if agent.sanity_stage:
            self.bot_game(agent, SANITY_BOT)
            return
        self.waiting.append(agent)
        self.timers[agent] = asyncio.get_running_loop().call_later(self.options.kgp_pair_wait_s, self.alone, agent)
        self.pair()

    def take(self, agent: Agent) -> None:
        """Take an agent out of the queue for a game."""
        self.unqueue(agent)
        self.busy[agent] = None

    def unqueue(self, agent: Agent) -> None:
        """Take an agent out of the queue (if it is there)."""
        self.bot_places.waiting.pop(agent, None)
        if agent in self.waiting:
            self.waiting.remove(agent)
        timer = self.timers.pop(agent, None)
        if timer is not None:
            timer.cancel()

    def pair(self) -> None:
        """Start a game for every two waiting agents of different identities, first come first served."""
        i = 0
        while i < len(self.waiting):
            first = self.waiting[i]
            other = next((b for b in self.waiting[i + 1 :] if self.key(b) != self.key(first)), None)
            if other is None:
                i += 1
                continue
            self.take(first)
            self.take(other)
            self.spawn(self.game([first, other], None))

    def alone(self, agent: Agent) -> None:
        """An agent waited long enough alone: it plays a hosted bot."""
        if agent in self.waiting and not self.closing:
            self.bot_game(agent, self.rng.choice(self.options.kgp_bots))

    def bot_game(self, agent: Agent, bot: str) -> None:
        """Start the agent's game against `bot` if a place for one is free; else it waits for one (told once, with
        `too_many`), still queued for another agent (a sanity game waits for its bot alone)."""
        places, address = self.bot_places, address_of(agent.host)
        why = places.refusal(address)
        if why is None:
            self.take(agent)
            places.take(address)
            self.spawn(self.game([agent], bot, address))
        elif agent not in places.waiting:
            places.waiting[agent] = bot
            self.arena.metrics.refused("too_many")
            log_event("kgp_bot_game_deferred", remote=agent.remote, reason=why, waiting=len(places.waiting))
            retry_ms = retry_after_ms(self.options.kgp_move_s)
            agent.error(f"too_many: {why}: you stay queued and play as soon as one ends (retry_ms={retry_ms})")

    def bot_game_ended(self, address: str) -> None:
        """A game against a hosted bot ended: its place goes to the agents waiting for one, oldest first."""
        places = self.bot_places
        places.free(address)
        for agent, bot in list(places.waiting.items()):
            if self.closing or places.full():
                return
            if agent.closed.is_set() or agent in self.busy:  # gone, or seated in an event's game meanwhile
                places.waiting.pop(agent, None)
            elif places.refusal(address_of(agent.host)) is None:
                self.bot_game(agent, bot)

    # --- identities and games ------------------------------------------------------------------

    @staticmethod
    def engine_names(wanted: str | None, pid: str, anonymous: bool) -> list[str]:
        """The `engine:` names an agent's account may take, the closest to the one it set (`info:name`) first."""
        base = re.sub(r"[^A-Za-z0-9_.-]", "", wanted or "")[:25] or ("anon" if anonymous else "agent")
        if anonymous:
            base = f"{base[:18]}-{pid[1:7]}"
        return [f"{ENGINE_PREFIX}{base}", f"{ENGINE_PREFIX}{base[:20]}-{pid[1:5]}", f"{ENGINE_PREFIX}{pid}"]

    async def new_account(self, agent: Agent, pid: str, token_hash: str | None) -> StoredPlayer:
        """Store the agent's account under the first of its names no other identity holds (here or, as the
        database says, on another node); `NameTakenError` if every one is taken."""
        ids = self.arena.identities
        names = self.engine_names(agent.info.get("name"), pid, agent.token is None)
        for name in names:
            if ids.owner(name) not in (None, pid):
                continue
            try:
                player = await ids.account(pid, name, token_hash)
            except NameTakenError:  # another node stored it first
                log_event("kgp_name_taken", player=pid, engine=name, remote=agent.remote)
                continue
            log_event("kgp_engine_account", player=pid, engine=player.name, anonymous=agent.token is None,
                      authors=agent.info.get("authors"), remote=agent.remote)
            return player
        raise NameTakenError(f"every engine name of {pid} is taken: {', '.join(names)}")

    async def identity(self, agent: Agent) -> AgentSession:
        """The agent's arena identity (stored on first use) and its stand-in session, connected in the arena."""
        a = self.arena
        pid = self.key(agent)
        session = self.sessions.get(agent)
        if session is not None and session.player_id == pid:
            return session
        token_hash = None if agent.token is None else hash_token(agent.token)
        player = await a.identities.get(pid)  # in a cluster, the account may have been made on another node
        if player is not None and agent.token is not None and not token_matches(agent.token, player.token_hash):
            raise RuntimeError("an engine id taken by another token")  # a SHA-256 prefix collision
        if player is None:
            player = await self.new_account(agent, pid, token_hash)
        if session is not None:
            a.disconnect(session)
        session = self.sessions[agent] = AgentSession(agent, pid, player.name)
        session.seated = lambda match_id: self.entry.seat_taken(agent, match_id)
        agent.player_id = pid
        for match_id in a.connect(session):  # a game its identity holds (an event's, paired while it was away)
            room = a.rooms.get(match_id)
            if room is not None and room.match.status == "live":
                self.entry.seat_taken(agent, match_id)
        return session

    async def game(self, agents: list[Agent], bot: str | None, address: str | None = None) -> None:
        """One match of the agents (and a hosted bot, taking a place for one of `address`), then the agents still
        connected go back to the queue."""
        try:
            await self.play(agents, bot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a fault of the server: the agents are told and dropped, never looped
            if not self.closing:
                log_event("kgp_game_failed", error=repr(exc), level=40)
                for agent in agents:
                    agent.kill("the server failed to run a game")
            return
        finally:
            for agent in agents:
                self.busy.pop(agent, None)
            if address is not None:
                self.bot_game_ended(address)
        if not self.closing:
            for agent in agents:
                self.enqueue(agent)

    async def play(self, agents: list[Agent], bot: str | None) -> None:
        """Ping the agents (go-kgp's scheduler does too), then play their match, sides at random; no match
        when one of them is gone."""
        a = self.arena
        if not all(await asyncio.gather(*(agent.check_alive() for agent in agents))):
            return
        sessions = [await self.identity(agent) for agent in agents]
        seats: list[Seat | AgentSession] = [*sessions, *([] if bot is None else [a.bot_seat(bot)])]
        self.rng.shuffle(seats)
        pairs = [(i, s if isinstance(s, Seat) else Seat(s.player_id or "", s.name or ""))
                 for i, s in enumerate(seats)]
        rated = all(agent.token is not None for agent in agents)
        if any(agent.closed.is_set() for agent in agents):
            return
        room = await a.create(self.variant, rated, 0, pairs)
        for agent in agents:
            self.busy[agent] = room.match.match_id
        self.games += 1
        driver = MatchDriver(a, room, {i: s for i, s in enumerate(seats) if isinstance(s, AgentSession)},
                             self.settings)
        await driver.run()

"""One arena match with KGP agents in its seats: the gateway plays each agent's turns through the arena.

The match is a real arena match (created with `Arena.create`, every action through
`Arena.act`, a forfeit through `Arena.apply`): stored, rated, spectatable and replayable like
any other. A hosted bot's seat is played by the arena itself. Each agent has a stand-in
session that follows the match, so every event wakes the driver. On an agent's turn it gets
the board (as South), a deadline inside the arena's clock, and `stop` at the deadline; the
last move it sent is played, a random legal one if it sent none. A position with a single
legal move is played without asking. An illegal move, or an agent that is gone (closed, or
silent on a ping), forfeits the match; why is stored with it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol.actions import Sow
from protocol.errors import KalahError
from protocol.kgp import Arg, Board, bin_of
from protocol.messages import ErrorMessage, Message
from protocol.replies import Snapshot
from protocol.side import Side
from server.core.follower import Outgoing
from server.core.rates import RateLimiter
from server.core.rooms import Room
from server.edge.session import Peer, Session
from server.front.outside_engines.agent import Agent
from server.logs import event as log_event

if TYPE_CHECKING:
    from server.core.arena import Arena

MARGIN_S = (0.1, 0.5)
"""What the gateway keeps back from an agent's clock for its own work (stop, the room's lock, the commit):
a tenth of the time left, at least 0.1 s and at most 0.5 s."""


def _nothing() -> None:
    """Wake no one (a stand-in session between games)."""


def _unclaimed(match_id: str) -> None:
    """Take no match (a stand-in session the gateway has not told where to hand its seats)."""


class AgentSession(Session):
    """An agent's stand-in connection in the arena: it holds the agent's identity and wakes its match's driver.

    It has no websocket: what a match sends its followers only wakes the driver, which reads the
    match itself. The snapshot of a match the arena seated it in unasked (an event's game, as any
    player's connections get one) is handed to the gateway, which plays that seat. It is registered
    with the arena while the agent is connected, so spectators see the agent's seat as connected.
    """

    def __init__(self, agent: Agent, player_id: str, name: str) -> None:  # no websocket: no Session.__init__
        self.agent = agent
        self.player_id = player_id
        self.name = name
        self.following: set[str] = set()
        self.peer = Peer(agent.host, RateLimiter(1e9, 10**9))
        self.send_limit = 0
        self.wake: Callable[[], None] = _nothing
        self.seated: Callable[[str], None] = _unclaimed
        """Called with the id of a live match the arena seated the agent's identity in (an event's game)."""

    def send(self, msg: Message) -> None:
        """A message for the agent: a live match's snapshot for its seat goes to the gateway; any wakes the driver."""
        if isinstance(msg, Snapshot) and msg.status == "live" and msg.you is not None:
            self.seated(msg.match_id)
        self.wake()

    def dismiss(self, error: ErrorMessage, reason: str) -> None:
        """Tell the agent why in KGP (`error`), say goodbye and close its connection."""
        self.agent.kill(error.message)

    def deliver(self, out: Outgoing, first: bytes | None = None) -> bool:
        """A match event for the agent: wake the driver (always delivered)."""
        self.wake()
        return True

    def push_frames(self, frames: list[bytes]) -> bool:
        """A match event for the agent: wake the driver (always delivered)."""
        self.wake()
        return True

    @property
    def remote_host(self) -> str:
        """The agent's network address."""
        return self.agent.host

    @property
    def remote(self) -> str:
        """The agent's address and port, for logs."""
        return self.agent.remote


@dataclass
class DriverSettings:
    """How the gateway runs agents' turns."""

    move_s: float = 5.0
    """Longest think per state when the clock allows more (go-kgp: 5 s); an untimed match's limit."""
    no_move_forfeits: bool = False
    """An agent that sent no move by the deadline forfeits (the ladder, as engine testers do) instead of
    getting a random legal move (go-kgp, the gateway)."""
    idle_states: int = 2
    """States in a row an agent may leave without a move (a random one is played for it); at the next such one
    it forfeits and is let go (closed: it asked for games and does not play them, holding a hosted bot)."""
    rng: random.Random | None = None


class MatchDriver:
    """Plays the agents' seats of one live match until it ends."""

    def __init__(self, arena: Arena, room: Room, sessions: dict[int, AgentSession], settings: DriverSettings) -> None:
        self.arena = arena
        self.room = room
        self.sessions = sessions
        self.agents = {seat: session.agent for seat, session in sessions.items()}
        self.settings = settings
        self.rng = settings.rng or random.Random()
        self.wake = asyncio.Event()
        self.forfeited: str | None = None
        """Why the match was forfeited, when it was."""
        self.idle: dict[int, int] = {}
        """Seat -> states in a row its agent answered with no move."""

    async def run(self) -> None:
        """Follow the match and play the agents' turns until it is over; tell each agent the result."""
        m = self.room.match
        for seat, agent in self.agents.items():
            session = self.sessions[seat]
            session.wake = self.wake.set
            self.room.follow(session)
            other = m.seats[1 - seat]
            agent.send("set", "game:id", m.match_id)
            agent.send("set", "game:opponent", other.name if other else "")
        try:
            while m.status == "live" and not self.arena.closing:
                gone = [seat for seat, agent in self.agents.items() if agent.closed.is_set()]
                if gone:
                    await self.forfeit(gone[0], self.agents[gone[0]].departure())
                    continue
                self.wake.clear()
                self.observe()
                mover = m.seat_to_move()
                if mover is not None and mover in self.agents:
                    await self.turn(mover, self.agents[mover])
                else:
                    await self.wake.wait()
        finally:
            for session in self.sessions.values():
                session.wake = _nothing
                self.room.unfollow(session)
        if m.status == "finished":
            self.tell_results()

    def observe(self) -> None:
        """Called before each turn or wait (a hook: the ManKalah driver tells its agents every move here)."""

    def think_s(self, seat: int) -> float:
        """How long the agent in `seat` may think now: inside its clock; at most `move_s` unless timed per move."""
        m = self.room.match
        control = m.variant.time_control
        if control is None:
            return self.settings.move_s
        left = m.clocks.left(seat, self.arena.now()) / 1000
        low, high = MARGIN_S
        usable = left - min(high, max(low, left * 0.1))
        return max(0.01, usable if control.per_move_ms else min(self.settings.move_s, usable))

    def time_options(self, seat: int, think: float) -> list[tuple[str, Arg]]:
        """The `time:*` options sent before a state: the mode and the seconds left (whole, at least 1)."""
        m = self.room.match
        control = m.variant.time_control
        options: list[tuple[str, Arg]] = [("time:mode", "absolute" if control and not control.per_move_ms
                                           else "relative"), ("time:clock", max(1, int(think)))]
        if control is not None and not control.per_move_ms:
            options.append(("time:opclock", m.clocks.left(1 - seat, self.arena.now()) // 1000))
        return options

    async def turn(self, seat: int, agent: Agent) -> None:
        """One action of the agent in `seat`: asked for unless forced, then played through the arena."""
        m = self.room.match
        ply, pos, side = m.ply, m.position, m.side_of(seat)
        legal = pos.legal_bins()
        if len(legal) != 1:
            think = self.think_s(seat)
            answer = await agent.ask(Board.of(pos, side), think, self.time_options(seat, think))
            if agent.closed.is_set() or m.ply != ply or m.status != "live":
                return  # gone (the loop forfeits it), or the match moved on (its clock fell)
            self.idle[seat] = 0 if answer.move is not None else self.idle.get(seat, 0) + 1
            if answer.move is None and self.settings.no_move_forfeits:
                await self.forfeit(seat, "yield without a move" if answer.yielded else f"no move within {think:.2f} s")
                return
            if self.idle[seat] >= self.settings.idle_states:
                detail = f"no move in {self.idle[seat]} states in a row: an agent that does not play is let go"
                await self.forfeit(seat, detail)
                agent.kill(detail, error=False)  # out of the queue too: it would take another bot's game
                return
            chosen = self.rng.choice(legal) if answer.move is None else self.bin_for(answer.move, side)
            if chosen not in legal:
                await self.forfeit(seat, self.illegal(answer.move, legal, side))
                return
        else:
            chosen = legal[0]  # a single legal move is played without asking (go-kgp's auto-move)
        try:
            await self.arena.act(self.room, seat, Sow(chosen), ply, None)
        except KalahError as exc:  # its clock fell meanwhile, or the server is stopping
            log_event("kgp_move_refused", match=m.match_id, seat=seat, error=str(exc))

    def bin_for(self, move: int, side: Side) -> int:
        """The bin of a KGP move (0 when the pit number is out of range)."""
        houses = self.room.match.variant.houses
        return bin_of(move, side, houses) if 1 <= move <= houses else 0

    def illegal(self, move: int | None, legal: list[int], side: Side) -> str:
        """Why a move is not legal, in the agent's numbering."""
        houses = self.room.match.variant.houses
        pits = ", ".join(str(b if side == Side.SOUTH else b - houses - 1) for b in legal)
        if move is None or not 1 <= move <= houses:
            return f"illegal move {move}: pits are numbered 1 to {houses} (legal now: {pits})"
        return f"illegal move {move}: pit {move} is empty (legal now: {pits})"

    async def forfeit(self, seat: int, detail: str) -> None:
        """The agent in `seat` loses by forfeit: the end and its reason are stored in one write through the arena."""
        a, room = self.arena, self.room
        m = room.match
        async with room.lock:
            holder = m.seats[seat]
            if m.status != "live" or a.closing or holder is None:
                return
            try:
                await a.retry(room, lambda: m.prepare_forfeit(seat, detail))
            except KalahError as exc:  # the server is stopping, or the match ended meanwhile (another node)
                log_event("kgp_forfeit_refused", match=m.match_id, error=str(exc))
                return
        log_event("kgp_forfeit", match=m.match_id, seat=seat, player=holder.player_id, detail=detail)
        self.forfeited = detail
        agent = self.agents.get(seat)
        if agent is not None:
            agent.error(f"you forfeit this game: {detail}")

    def tell_results(self) -> None:
        """Send each agent its result (`set arena:result "win|loss|draw REASON [MARGIN]"`, an extension)."""
        m = self.room.match
        end = m.end
        assert end is not None
        for seat, agent in self.agents.items():
            outcome = "draw" if end.winner is None else "win" if end.winner == seat else "loss"
            text = f"{outcome} {end.reason}"
            if end.result is not None:
                margin = end.result if m.side_of(seat) == Side.SOUTH else -end.result
                text += f" {margin:+d}"
            agent.send("set", "arena:result", text)

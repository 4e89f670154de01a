"""The Manchester ManKalah engine protocol: an agent on a process's pipes, and the driver that plays its seat.

The protocol (COMP34120's `protocol.txt`): lines `NAME(;ARG)*` ending in `\\n`, no spaces.
The engine (here, the arena) sends `START;South|North`, then after every move
`CHANGE;<hole|SWAP>;<state>;<YOU|OPP|END>` (the swapper is not told of its own swap), and
`END` when the game is over, however it ended. `<state>` is North's holes 1..n, North's store,
South's holes 1..n, South's store; holes are numbered from 1 on each player's own left. The
agent answers each `YOU` (and `START;South`) with `MOVE;<hole>`, or `SWAP` as North's first
move under the pie rule. An illegal move, a malformed message, a message out of turn or no
answer in time ends the game: the agent loses by forfeit, the reason stored.

When the arena's match did not start from the initial position (an opening, or a game resumed
after an interruption), the agent is told the whole game from `START`; answers to the prompts
of that catching up are read and dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import TYPE_CHECKING

from protocol.actions import Action, Sow, Swap
from protocol.errors import KalahError
from protocol.kgp import Arg, LineSplitter, Overlong
from protocol.position import Position
from protocol.side import Side
from server.front.outside_engines.agent import Agent, AgentLimits
from server.front.outside_engines.driver import AgentSession, DriverSettings, MatchDriver
from server.front.outside_engines.pipe_agent import PipeAgent
from server.front.outside_engines.process import EngineProcess
from server.logs import event as log_event

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.core.rooms import Room

MESSAGE = re.compile(r"MOVE;(\d{1,3})|SWAP")


def state_text(position: Position) -> str:
    """`<state>`: North's holes and store, then South's holes and store, comma-separated."""
    h, pits = position.variant.houses, position.pits
    return ",".join(map(str, (*pits[h + 1 : 2 * h + 1], pits[2 * h + 1], *pits[:h], pits[h])))


def hole_of(action: Action, houses: int) -> str:
    """`<MOVESWAP>` of an action: the mover's hole number (from 1 on its left), or `SWAP`."""
    if isinstance(action, Sow):
        return str(action.bin if action.bin <= houses else action.bin - houses - 1)
    return "SWAP"


def action_of(text: str, position: Position, side: Side) -> Action | str:
    """The action an agent's message asks for, or why it cannot be played (`protocol error: ...`, `illegal ...`)."""
    found = MESSAGE.fullmatch(text)
    if found is None:
        return f"protocol error: {text[:80]!r} is neither MOVE;<hole> nor SWAP"
    if found[1] is None:
        return Swap() if position.swap_offered else "illegal SWAP: only North's first move may swap"
    h, hole = position.variant.houses, int(found[1])
    legal = position.legal_bins()
    holes = ", ".join(hole_of(Sow(b), h) for b in legal)
    if not 1 <= hole <= h:
        return f"illegal move {hole}: holes are numbered 1 to {h} (legal now: {holes})"
    sow = Sow(hole if side == Side.SOUTH else hole + h + 1)
    return sow if sow.bin in legal else f"illegal move {hole}: hole {hole} is empty (legal now: {holes})"


class MankalahAgent(PipeAgent):
    """A ManKalah agent: plain lines, no greeting; each prompt owes one answer, the stale ones dropped."""

    def __init__(self, process: EngineProcess, limits: AgentLimits) -> None:
        super().__init__(process, limits)
        self.mode = "mankalah"
        self.replies: asyncio.Queue[str] = asyncio.Queue()
        self.stale = 0
        """Answers owed to prompts of a catching up, dropped when they come."""
        self.expecting = False
        """Whether the last prompt was live: its answer goes to `replies`."""
        self.over = False
        """Whether it was sent `END`."""

    def line(self, text: str) -> None:
        """Send one protocol line."""
        if not self.closed.is_set():
            self._write(text.encode() + b"\n")

    def prompt(self, text: str, live: bool) -> None:
        """Send a line that asks for an answer (`live`: the one the game waits for)."""
        self.line(text)
        if live:
            self.expecting = True
        else:
            self.stale += 1

    def send(self, name: str, *args: Arg, ref: int | None = None) -> int:
        """KGP commands (`set game:id`...) mean nothing to a ManKalah agent: not sent."""
        return 0

    def error(self, text: str, ref: int | None = None) -> None:
        """ManKalah has no error message: nothing is sent."""

    def end(self) -> None:
        """Send `END` (once)."""
        if not self.over:
            self.over = True
            self.line("END")

    def kill(self, reason: str, error: bool = True) -> None:
        """End the game for the agent (`END`) and close."""
        if not self.closed.is_set():
            self.end()
            self._close(reason)

    async def serve(self) -> None:
        """Read the agent's lines until it or the arena closes."""
        splitter = LineSplitter(self.limits.line_limit)
        try:
            while not self.closed.is_set():
                data = await self.link.read()
                if not data:
                    break
                for item in splitter.feed(data):
                    if self.closed.is_set():
                        break
                    self._message(item)
        finally:
            self._close(self.close_reason or "disconnected")

    def _message(self, item: str | Overlong) -> None:
        """One line of the agent: a stale answer is dropped, a live one queued, anything else is a fault."""
        if isinstance(item, Overlong):
            self.fault(f"line of {item.size} bytes (the limit is {self.limits.line_limit})")
        elif self.stale:
            self.stale -= 1
        elif self.expecting:
            self.expecting = False
            self.replies.put_nowait(item)
        else:
            self.fault(f"{item[:80]!r} sent when it was not its turn")

    async def reply(self, think_s: float) -> str | None:
        """The agent's answer to the live prompt within `think_s` (None: none, or it is gone)."""
        get = asyncio.ensure_future(self.replies.get())
        closed = asyncio.ensure_future(self.closed.wait())
        try:
            await asyncio.wait({get, closed}, timeout=max(0.0, think_s), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (get, closed):
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            if get.done() and not get.cancelled():
                return get.result()
        return None


class MankalahDriver(MatchDriver):
    """Plays the seats of ManKalah agents: tells them every move, asks for theirs at `YOU`."""

    def __init__(self, arena: Arena, room: Room, sessions: dict[int, AgentSession],
                 settings: DriverSettings) -> None:
        super().__init__(arena, room, sessions, settings)
        self.told: dict[int, int] = {}
        """Seat -> how many actions its agent was told of."""

    def mankalah(self) -> dict[int, MankalahAgent]:
        """The seats held by ManKalah agents."""
        return {seat: agent for seat, agent in self.agents.items() if isinstance(agent, MankalahAgent)}

    def observe(self) -> None:
        """Send each ManKalah agent `START` (once) and a `CHANGE` for every action it has not heard of."""
        game = self.room.match.game
        h = game.variant.houses
        for seat, agent in self.mankalah().items():
            done = self.told.get(seat)
            last = game.ply
            if done is None:
                done = 0
                agent.prompt("START;South", live=last == 0) if seat == 0 else agent.line("START;North")
            for ply in range(done, last):
                before, after, action = game.positions[ply], game.positions[ply + 1], game.actions[ply]
                mover = int(before.to_move) ^ int(before.swapped)
                if isinstance(action, Swap) and mover == seat:
                    continue  # the swapper is not told of its own swap
                text = f"CHANGE;{hole_of(action, h)};{state_text(after)}"
                if after.over:
                    agent.line(f"{text};END")
                elif int(after.to_move) ^ int(after.swapped) == seat:
                    agent.prompt(f"{text};YOU", live=ply == last - 1)
                else:
                    agent.line(f"{text};OPP")
            self.told[seat] = last

    async def turn(self, seat: int, agent: Agent) -> None:
        """A ManKalah agent's move: its answer to `YOU` within the time left; a KGP agent's as usual."""
        if not isinstance(agent, MankalahAgent):
            await super().turn(seat, agent)
            return
        m = self.room.match
        ply, pos, side = m.ply, m.position, m.side_of(seat)
        think = self.think_s(seat)
        text = await agent.reply(think)
        if agent.closed.is_set() or m.ply != ply or m.status != "live":
            return
        if text is None:
            await self.forfeit(seat, f"no move within {think:.2f} s")
            return
        action = action_of(text, pos, side)
        if isinstance(action, str):
            await self.forfeit(seat, action)
            return
        try:
            await self.arena.act(self.room, seat, action, ply, None)
        except KalahError as exc:  # its clock fell meanwhile, or the server is stopping
            log_event("mankalah_move_refused", match=m.match_id, seat=seat, error=str(exc))

    def tell_results(self) -> None:
        """The last `CHANGE` (ending in `END` when the board decided) and `END` to every ManKalah agent."""
        self.observe()
        for agent in self.mankalah().values():
            agent.end()
        super().tell_results()

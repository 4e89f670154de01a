"""Local engines in arena matches: a process per engine per game, its pipes driven like a gateway agent.

`kalah ladder --engine NAME=COMMAND` plays its engines' games through this. For each game the
engines' processes are started afresh (under their resource limits), a KGP engine must ask for
`mode freeplay`, then the match is created (stored, with its opening) or, when an interrupted
run left it live, taken up where it stands; `MatchDriver` (KGP) or `MankalahDriver` plays the
engines' seats through the arena, hosted bots play themselves. At the end the processes are
stopped. An engine that cannot start, crashes, hangs, breaks its protocol or plays an illegal
move loses the match by forfeit, the reason stored (`server.front.outside_engines.results`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from protocol.actions import Action
from protocol.errors import NameTakenError
from protocol.names import ENGINE_PREFIX
from protocol.variant import Variant
from server.core.match import EndChange, Seat
from server.front.outside_engines.agent import Agent, AgentLimits
from server.front.outside_engines.driver import AgentSession, DriverSettings, MatchDriver
from server.front.outside_engines.mankalah import MankalahAgent, MankalahDriver
from server.front.outside_engines.pipe_agent import PipeAgent
from server.front.outside_engines.process import EngineProcess, EngineSpec, ProcessLimits

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.core.rooms import Room


MANKALAH_START_S = 1.0
"""How long a ManKalah engine, which says nothing before its first game, must keep running to pass the check."""


@dataclass
class LocalSettings:
    """How local engines are run: process limits, protocol limits, and the driver's timing."""

    limits: ProcessLimits = field(default_factory=ProcessLimits)
    agent: AgentLimits = field(default_factory=AgentLimits)
    driver: DriverSettings = field(default_factory=lambda: DriverSettings(no_move_forfeits=True))


@dataclass
class Launched:
    """An engine started for a game: its process, its agent and the task reading it, or why it failed."""

    process: EngineProcess | None = None
    agent: Agent | None = None
    reader: asyncio.Task[None] | None = None
    failure: str | None = None


@dataclass
class Outcome:
    """How an engine game ended: the end, and the forfeit's reason when it was one."""

    end: EndChange
    detail: str | None


def engine_player_id(name: str) -> str:
    """The player id of local engine `name` (stable: the same engine keeps its rating across ladders)."""
    return "e" + hashlib.sha256(b"local-engine:" + name.encode()).hexdigest()[:11]


class LocalEngines:
    """Plays matches in which local engines hold seats."""

    def __init__(self, arena: Arena, specs: list[EngineSpec], settings: LocalSettings | None = None) -> None:
        self.arena = arena
        self.specs = {spec.name: spec for spec in specs}
        self.settings = settings or LocalSettings()
        self._accounts = asyncio.Lock()
        """Held while an engine's account is looked up or stored (games start at once)."""

    async def seat(self, name: str) -> Seat:
        """The seat of engine `name` (its account stored on first use), or of hosted bot `name`."""
        a = self.arena
        if name not in self.specs:
            return a.bot_seat(name)
        pid, display = engine_player_id(name), ENGINE_PREFIX + name
        async with self._accounts:
            try:
                player = await a.identities.account(pid, display, None)
            except NameTakenError:
                raise NameTakenError(f"the name {display} belongs to another player on this database") from None
        return Seat(pid, player.name)

    async def launch(self, name: str) -> Launched:
        """Start engine `name` and wait for its greeting (KGP: `mode freeplay`)."""
        spec = self.specs[name]
        try:
            process = await EngineProcess.start(spec, self.settings.limits)
        except OSError as exc:
            return Launched(failure=f"engine cannot start: {exc}")
        agent: Agent
        if spec.protocol == "mankalah":
            agent = MankalahAgent(process, self.settings.agent)
        else:
            ready = asyncio.Event()
            agent = PipeAgent(process, self.settings.agent, on_mode=lambda _: ready.set())
        task = asyncio.get_running_loop().create_task(agent.serve())
        if spec.protocol == "kgp":
            waits = [asyncio.ensure_future(ready.wait()), asyncio.ensure_future(agent.closed.wait())]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()
        return Launched(process, agent, task)

    async def check(self, name: str) -> str | None:
        """Start engine `name` once, as for a game, and stop it: why it cannot play, or None when it started and
        (KGP) asked for freeplay, or (ManKalah, silent until its first game) was still running after a moment."""
        engine = await self.launch(name)
        try:
            if engine.failure is not None:
                return engine.failure.removeprefix("engine ")
            assert engine.agent is not None and engine.process is not None
            process, mankalah = engine.process, self.specs[name].protocol == "mankalah"
            if mankalah:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(engine.agent.closed.wait()), MANKALAH_START_S)
            if not engine.agent.closed.is_set():
                return None
            if engine.agent.dropped is not None:  # given up on (its goodbye may have ended it since: said first)
                return f"did not ask for freeplay ({engine.agent.dropped})"
            if process.ended is None and process.proc.returncode is None:  # alive, but the agent gave up on it
                return f"did not ask for freeplay ({engine.agent.close_reason or 'it closed its output'})"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.proc.wait(), 2)
            ended = process.ended or process.describe()
            return f"{ended} at once" if mankalah else f"{ended} before it asked for freeplay"
        finally:
            await self._stop(engine)

    async def play(self, variant: Variant, rated: bool, south: str, north: str, opening: list[Action],
                   match_id: str, pace_s: float = 0.0) -> Outcome | None:
        """Play (or take up) match `match_id` of `south` against `north`; its outcome (None: not finished)."""
        a = self.arena
        room = a.rooms.get(match_id)
        if room is not None and room.match.end is not None:
            return Outcome(room.match.end, None)
        names = (south, north)
        seats = [await self.seat(n) for n in names]
        launched = {i: await self.launch(n) for i, n in enumerate(names) if n in self.specs}
        try:
            if room is None:
                room = await a.create(variant, rated, 0, list(enumerate(seats)), opening, match_id, pace_s=pace_s)
            return await self._drive(room, seats, launched)
        finally:
            await asyncio.gather(*(self._stop(engine) for engine in launched.values()))

    async def _drive(self, room: Room, seats: list[Seat], launched: dict[int, Launched]) -> Outcome | None:
        """Run the driver over the engines that started; forfeit for one that could not."""
        a = self.arena
        sessions = {i: AgentSession(e.agent, seats[i].player_id, seats[i].name)
                    for i, e in launched.items() if e.agent is not None}
        kind = MankalahDriver if any(isinstance(s.agent, MankalahAgent) for s in sessions.values()) else MatchDriver
        driver = kind(a, room, sessions, self.settings.driver)
        for session in sessions.values():
            a.connect(session)
        try:
            failed = [(i, e.failure) for i, e in launched.items() if e.failure is not None]
            if failed:
                await driver.forfeit(*failed[0])
            else:
                await driver.run()
        finally:
            for session in sessions.values():
                a.disconnect(session)
        end = room.match.end
        return None if end is None else Outcome(end, driver.forfeited)

    async def _stop(self, engine: Launched) -> None:
        """Say goodbye (KGP) or END, stop the process, and wait for the agent's reader."""
        if engine.agent is not None:
            engine.agent.kill("the game is over", error=False)
        if engine.process is not None:
            await engine.process.stop()
        if engine.reader is not None:
            engine.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await engine.reader

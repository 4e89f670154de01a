"""A local KGP engine for `kalah bridge`: a program speaking KGP on stdin/stdout, as the client side.

The bridge is the KGP server to it: the engine reads the bridge's lines on its standard
input and writes its own on its standard output (its standard error is passed through). The
conversation is the gateway's own (`server.front.outside_engines.agent.Agent` over a pipe instead of a
socket): `kgp 1 1 0`, the engine's `mode freeplay`, then for each position `set time:*`, a
numbered `state` (the engine is South, the board mirrored for North), its `move`s until
`yield` or the deadline, and `stop`; the last move counts. An engine that does not yield is
pinged, and one that does not answer `pong` in time is taken for hung.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex

from protocol.kgp import Arg, Board
from server.front.outside_engines.agent import Agent, AgentLimits, Answer
from server.front.outside_engines.links import Link

START_S = 20.0
"""Seconds an engine has, once started, to ask for freeplay (go-kgp's mode timeout)."""
EXIT_S = 2.0
"""Seconds an engine has to exit after `goodbye` before it is killed."""


class EngineFault(Exception):
    """The engine cannot go on: it could not start, it exited, or it stopped answering."""


class PipeLink(Link):
    """The engine process's standard input and output as an agent's connection."""

    def __init__(self, process: asyncio.subprocess.Process, command: str) -> None:
        self.process = process
        self.host = "local"
        self.remote = command[:80]

    async def read(self) -> bytes:
        """What the engine wrote on its standard output; empty once it closed it."""
        assert self.process.stdout is not None
        try:
            return await self.process.stdout.read(65536)
        except (ConnectionError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        """Queue lines on the engine's standard input."""
        assert self.process.stdin is not None
        if not self.process.stdin.is_closing():
            self.process.stdin.write(data)

    def buffered(self) -> int:
        """Bytes the engine has not read yet."""
        assert self.process.stdin is not None
        return self.process.stdin.transport.get_write_buffer_size()

    def is_closing(self) -> bool:
        """Whether the engine's standard input is closed."""
        assert self.process.stdin is not None
        return self.process.stdin.is_closing()

    def abort(self) -> None:
        """Kill the engine."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    def close(self) -> None:
        """Close the engine's standard input (a KGP engine then ends)."""
        assert self.process.stdin is not None
        with contextlib.suppress(Exception):
            self.process.stdin.close()


class LocalEngine:
    """One run of the engine command: started, asked for moves, stopped."""

    def __init__(self, command: str, limits: AgentLimits | None = None) -> None:
        self.command = command
        self.limits = limits or AgentLimits(mode_s=START_S, rate=1e6, burst=10**6)
        self.process: asyncio.subprocess.Process | None = None
        self.agent: Agent | None = None
        self._ready = asyncio.Event()
        self._serving: asyncio.Task[None] | None = None

    @property
    def name(self) -> str | None:
        """The name the engine gave itself (`set info:name`), if any."""
        return None if self.agent is None else self.agent.info.get("name")

    @property
    def alive(self) -> bool:
        """Whether the engine is running and talking."""
        return self.agent is not None and not self.agent.closed.is_set()

    def why_gone(self) -> str:
        """Why the engine is gone, in a few words."""
        code = None if self.process is None else self.process.returncode
        reason = None if self.agent is None else self.agent.close_reason
        if reason in (None, "disconnected", "connection lost"):
            return "the engine exited" + ("" if code is None else f" (status {code})")
        return f"the engine stopped: {reason}"

    async def start(self) -> None:
        """Start the command and wait until the engine has asked for freeplay; `EngineFault` if it does not."""
        self._ready = asyncio.Event()
        try:
            argv = shlex.split(self.command)
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        except (OSError, ValueError, IndexError) as exc:
            raise EngineFault(f"cannot start the engine {self.command!r}: {exc}") from None
        self.agent = Agent(PipeLink(self.process, self.command), self.limits, self._moded, self._gone)
        self._serving = asyncio.get_running_loop().create_task(self.agent.serve())
        closed = asyncio.ensure_future(self.agent.closed.wait())
        ready = asyncio.ensure_future(self._ready.wait())
        try:
            await asyncio.wait({closed, ready}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
            ready.cancel()
        if not self.alive or not self._ready.is_set():
            await self._reap()
            raise EngineFault(f"{self.why_gone()} before asking for freeplay")

    def _moded(self, agent: Agent) -> None:
        """The engine asked for freeplay: it is ready."""
        self._ready.set()

    def _gone(self, agent: Agent) -> None:
        """The engine's output ended or it was dropped (nothing to do: `alive` says so)."""

    def tell(self, option: str, value: Arg) -> None:
        """Send `set OPTION VALUE` (game and result information)."""
        if self.agent is not None:
            self.agent.send("set", option, value)

    async def ask(self, board: Board, think_s: float, options: list[tuple[str, Arg]]) -> Answer:
        """The engine's answer to one position within `think_s`; `EngineFault` if it is gone."""
        if self.agent is None or not self.alive:
            raise EngineFault(self.why_gone())
        answer = await self.agent.ask(board, think_s, options)
        if not self.alive:
            await self._reap()
            raise EngineFault(self.why_gone())
        return answer

    def interrupt(self) -> None:
        """Cut the engine's thinking short (the game it thinks about is over)."""
        if self.agent is not None:
            self.agent.interrupt()

    async def stop(self) -> None:
        """Say goodbye, let the engine exit (kill it after a while), and collect it."""
        if self.agent is not None and self.alive:
            self.agent.kill("the bridge is done", error=False)
        await self._reap()

    async def _reap(self) -> None:
        """Wait for the process to end (killing it after `EXIT_S`) and for its reader."""
        process = self.process
        if process is not None:
            if self.agent is not None and not self.agent.closed.is_set():
                self.agent.kill("the bridge let the engine go", error=False)
            try:
                await asyncio.wait_for(process.wait(), EXIT_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._serving is not None:
            with contextlib.suppress(Exception):
                await self._serving

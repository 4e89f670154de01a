"""A KGP agent on a local engine process's pipes, held to the protocol as engine testers hold engines.

It is the gateway's `Agent` (the same greeting, `mode`, `state`, `stop`, `ping`), reading the
process's standard output and writing its standard input. Unlike a network agent, any fault of
its own making (a garbage or over-long line, an unknown command, a move for a state never
sent) ends its connection, and so forfeits its game, with the fault as the reason. When its
output closes, the reason is how the process ended (its exit status or signal, and the last
line of its standard error).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from server.front.outside_engines.agent import Agent, AgentLimits
from server.front.outside_engines.links import Link
from server.front.outside_engines.process import EngineProcess


def _ignore(agent: Agent) -> None:
    """No one to tell."""


class PipeLink(Link):
    """An engine process's pipes as an agent's connection: its output read, its input written."""

    def __init__(self, process: EngineProcess) -> None:
        self.process = process
        self.host = "local"
        self.remote = f"{process.spec.name} (pid {process.pid})"

    async def read(self) -> bytes:
        """Up to 64 KiB of the engine's output; empty at its end."""
        return await self.process.read()

    def write(self, data: bytes) -> None:
        """Queue bytes on its input."""
        self.process.writer.transport.write(data)

    def buffered(self) -> int:
        """Bytes not yet written to its input."""
        return self.process.writer.transport.get_write_buffer_size()

    def is_closing(self) -> bool:
        """Whether its input is closed."""
        return self.process.writer.transport.is_closing()

    def abort(self) -> None:
        """Drop its input at once."""
        self.process.writer.transport.abort()

    def close(self) -> None:
        """Close its input (an engine that reads to the end then stops)."""
        with contextlib.suppress(Exception):
            self.process.writer.close()


class PipeAgent(Agent):
    """A KGP agent that is a local process: strict about the protocol, its end told by its exit."""

    def __init__(self, process: EngineProcess, limits: AgentLimits,
                 on_mode: Callable[[Agent], None] = _ignore, on_close: Callable[[Agent], None] = _ignore) -> None:
        super().__init__(PipeLink(process), limits, on_mode, on_close)
        self.process = process

    def fault(self, text: str, ref: int | None = None) -> None:
        """A protocol error ends the connection (and forfeits the game in progress)."""
        self.error(text, ref)
        self.kill(f"protocol error: {text}", error=False)

    def departure(self) -> str:
        """Why the engine is gone: its protocol error, its exit, or its silence."""
        return self.close_reason or "gone"

    def _write(self, data: bytes) -> None:
        """Write, unless its input is closed: then its end comes through its output (see `EngineProcess`)."""
        if self.link.is_closing():
            return
        super()._write(data)

    def _close(self, reason: str) -> None:
        """Close; the end of its output is told as the process's end."""
        if reason == "disconnected":
            reason = f"engine {self.process.ended or 'closed its output'}"
        super()._close(reason)

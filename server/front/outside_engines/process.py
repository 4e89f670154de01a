"""Outside engines as local processes: their command line, their resource limits, their pipes and their end.

An engine is a program that speaks a protocol on its standard input and output: KGP (the
program is the agent, the arena the server) or the Manchester ManKalah protocol. Each runs
in a process group of its own under `setrlimit` bounds on CPU time and address space, set in
the child before it executes the program. What it writes on standard error is kept (the last
4 KiB) so that a crash's stored reason can quote it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import shlex
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Protocol = Literal["kgp", "mankalah"]

NAME = re.compile(r"[A-Za-z0-9_.-]{1,25}")
"""An engine's name: what follows `engine:` in the arena."""

STDERR_TAIL = 4096
EXIT_WAIT_S = 2.0
"""How long an engine that closed its output or was told to stop may take to exit before it is killed."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """An engine entered by `NAME=COMMAND` (KGP) or `NAME=mankalah:COMMAND`."""

    name: str
    argv: tuple[str, ...]
    protocol: Protocol = "kgp"

    @classmethod
    def parse(cls, text: str) -> EngineSpec:
        """Read `NAME=COMMAND`; raises ValueError with a one-line reason."""
        name, eq, command = text.partition("=")
        name = name.strip()
        if not eq or not NAME.fullmatch(name):
            raise ValueError(f"--engine takes NAME=COMMAND with a NAME of letters, digits, _ . - "
                             f"(at most 25), not {text!r}")
        protocol: Protocol = "kgp"
        if command.startswith("mankalah:"):
            protocol, command = "mankalah", command[len("mankalah:"):]
        try:
            argv = tuple(shlex.split(command))
        except ValueError as exc:
            raise ValueError(f"--engine {name}: cannot read the command ({exc})") from None
        if not argv:
            raise ValueError(f"--engine {name}: the command is empty")
        return cls(name, argv, protocol)

    def text(self) -> str:
        """The spec as given (the command re-quoted)."""
        prefix = "mankalah:" if self.protocol == "mankalah" else ""
        return f"{self.name}={prefix}{shlex.join(self.argv)}"


DEFAULT_CPU_S = 600
DEFAULT_MEMORY_MIB = 2048


@dataclass(frozen=True, slots=True)
class ProcessLimits:
    """Bounds on each engine process (0: no bound)."""

    cpu_s: int = DEFAULT_CPU_S
    """CPU seconds a process may use in all (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later)."""
    memory_mib: int = DEFAULT_MEMORY_MIB
    """Address space of a process in MiB (RLIMIT_AS: allocations beyond it fail)."""

    def preexec(self) -> Callable[[], None]:
        """The function the child runs before executing the engine: it sets the limits."""
        cpu, memory = self.cpu_s, self.memory_mib << 20

        def apply() -> None:
            """Set the bounds (in the child, before exec)."""
            if cpu:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            if memory:
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

        return apply


def exit_text(returncode: int | None, limits: ProcessLimits) -> str:
    """How a process ended, in words (SIGXCPU names the CPU limit)."""
    if returncode is None:
        return "closed its output"
    if returncode >= 0:
        return f"exited with status {returncode}"
    sig = -returncode
    name = signal.Signals(sig).name if sig in signal.valid_signals() else f"signal {sig}"
    if sig == signal.SIGXCPU:
        return f"killed by {name} (CPU limit of {limits.cpu_s} s)"
    return f"killed by {name}"


class EngineProcess:
    """One running engine: its pipes, its standard error's tail, and its end."""

    def __init__(self, spec: EngineSpec, limits: ProcessLimits, proc: asyncio.subprocess.Process) -> None:
        self.spec = spec
        self.limits = limits
        self.proc = proc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.writer: asyncio.StreamWriter = proc.stdin
        self.stdout: asyncio.StreamReader = proc.stdout
        self.stderr_tail = b""
        self.ended: str | None = None
        """Set when its output closed: how it ended ("exited with status 1 (...)")."""
        self._stderr = asyncio.get_running_loop().create_task(self._drain_stderr())

    @classmethod
    async def start(cls, spec: EngineSpec, limits: ProcessLimits, cwd: str | None = None) -> EngineProcess:
        """Start the engine in its own process group under the limits; raises OSError if it cannot run."""
        proc = await asyncio.create_subprocess_exec(
            *spec.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, preexec_fn=limits.preexec(), start_new_session=True, cwd=cwd)
        return cls(spec, limits, proc)

    @property
    def pid(self) -> int:
        """The process id."""
        return self.proc.pid

    async def _drain_stderr(self) -> None:
        """Keep the last bytes of standard error."""
        assert self.proc.stderr is not None
        while data := await self.proc.stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + data)[-STDERR_TAIL:]

    async def read(self) -> bytes:
        """Up to 64 KiB of the engine's output; at its end (empty bytes), `ended` already says how it ended."""
        try:
            data = await self.stdout.read(65536)
        except (ConnectionError, OSError):
            data = b""
        if not data and self.ended is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), EXIT_WAIT_S)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr), 0.5)
            self.ended = self.describe()
        return data

    def describe(self) -> str:
        """How the engine ended, with the last line of its standard error."""
        text = exit_text(self.proc.returncode, self.limits)
        lines = self.stderr_tail.decode("utf-8", "replace").strip().splitlines()
        return f"{text} (stderr: {lines[-1][:200]})" if lines else text

    async def stop(self) -> None:
        """Close its input, give it a moment to exit, then kill its process group; reap it."""
        with contextlib.suppress(Exception):
            self.writer.close()
        if self.proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), EXIT_WAIT_S)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        self._stderr.cancel()
        await asyncio.gather(self._stderr, return_exceptions=True)

"""Engine processes: `NAME=COMMAND` specs, the rlimits a child runs under, and how its end is told."""

from __future__ import annotations

import resource
import signal
import sys

import pytest

from server.front.outside_engines.process import EngineProcess, EngineSpec, ProcessLimits, exit_text


def test_specs_read_name_protocol_and_command() -> None:
    """`NAME=COMMAND` is KGP, `NAME=mankalah:COMMAND` ManKalah; the command is split like a shell line and
    printed back re-quoted; a bad name or an empty command is a ValueError."""
    spec = EngineSpec.parse("mine=./engine --depth 'a b'")
    assert spec == EngineSpec("mine", ("./engine", "--depth", "a b"), "kgp")
    assert EngineSpec.parse(spec.text()) == spec
    man = EngineSpec.parse("student=mankalah:java -jar Agent.jar")
    assert man.protocol == "mankalah" and man.argv == ("java", "-jar", "Agent.jar")
    for bad in ("noequals", "=cmd", "bad name=cmd", "x" * 26 + "=cmd", "e=", "e=mankalah:", "e='unclosed"):
        with pytest.raises(ValueError):
            EngineSpec.parse(bad)


def test_exit_text_names_statuses_and_signals() -> None:
    """An exit status, a signal by name, SIGXCPU as the CPU limit, and a closed output with no exit yet."""
    limits = ProcessLimits(cpu_s=7)
    assert exit_text(3, limits) == "exited with status 3"
    assert exit_text(-signal.SIGKILL, limits) == "killed by SIGKILL"
    assert exit_text(-signal.SIGXCPU, limits) == "killed by SIGXCPU (CPU limit of 7 s)"
    assert exit_text(None, limits) == "closed its output"


async def test_a_child_runs_under_the_limits_and_its_end_is_read() -> None:
    """The child sees the CPU and address-space limits set before it ran; its output is relayed; once it
    exits, its status and the last line of its stderr are known."""
    script = ("import resource, sys; print(resource.getrlimit(resource.RLIMIT_CPU), "
              "resource.getrlimit(resource.RLIMIT_AS), flush=True); print('bye', file=sys.stderr); sys.exit(4)")
    spec = EngineSpec("probe", (sys.executable, "-c", script))
    process = await EngineProcess.start(spec, ProcessLimits(cpu_s=30, memory_mib=1024))
    out = b""
    while data := await process.read():
        out += data
    await process.stop()
    assert out.decode().split() == ["(30,", "31)", f"({1024 << 20},", f"{1024 << 20})"]
    assert process.ended == "exited with status 4 (stderr: bye)"
    assert resource.getrlimit(resource.RLIMIT_CPU)[0] != 30  # the parent is untouched


async def test_a_command_that_does_not_exist_cannot_start() -> None:
    """Starting a missing program raises OSError (the ladder stores it as the engine's forfeit)."""
    with pytest.raises(OSError):
        await EngineProcess.start(EngineSpec("ghost", ("/nonexistent/engine",)), ProcessLimits())

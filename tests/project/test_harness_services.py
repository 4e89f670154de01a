"""The test run's own services: a pytest run stopped by SIGTERM (a CI job cancelled, `timeout`) still stops the
PostgreSQL and redis-server it started for its session, as one stopped by Ctrl-C does, and so does one killed
outright (SIGKILL), through the services' watchdog."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.processes import ROOT, started

CHILD = '''
import json, os, time

def test_holds_the_services(postgres, redis_server):
    """Start both services, say where they are, then wait for the signal."""
    with open(os.environ["KALAH_SERVICES_AT"] + ".part", "w") as out:
        json.dump({"pg": str(postgres.root), "redis": redis_server.port}, out)
    os.rename(os.environ["KALAH_SERVICES_AT"] + ".part", os.environ["KALAH_SERVICES_AT"])
    time.sleep(120)
'''


def survivors(pg_root: str, redis_port: int) -> list[int]:
    """The processes still running of these services: a postgres with its files in `pg_root`, a redis-server on
    `redis_port` (found by their command lines, not by name alone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if pg_root in cmdline or ("redis-server" in cmdline and f":{redis_port}" in cmdline):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_run_stopped_by_a_signal_stops_its_postgres_and_redis(tmp_path: Path, sig: signal.Signals) -> None:
    """A child pytest holding the session's PostgreSQL and redis-server gets SIGTERM or SIGKILL: it exits, and
    neither server is left running (nor their files) soon after; whatever was left is killed here."""
    (tmp_path / "test_child.py").write_text(CHILD)
    at = tmp_path / "services.json"
    env = {**os.environ, "KALAH_SERVICES_AT": str(at), "KALAH_REQUIRE_SERVICES": "1"}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-c", str(ROOT / "pyproject.toml"),
            "--rootdir", str(ROOT), "--basetemp", str(tmp_path / "base"), "-p", "no:cacheprovider",
            str(tmp_path / "test_child.py")]
    services: dict[str, object] = {}
    try:
        with started(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            deadline = time.monotonic() + 120
            while not at.exists():  # a file written by another process: nothing to await
                assert proc.poll() is None, proc.communicate()[0]
                assert time.monotonic() < deadline, "the child never started its services"
                time.sleep(0.05)
            services = json.loads(at.read_text())
            assert survivors(str(services["pg"]), int(str(services["redis"]))), "the services are running"
            proc.send_signal(sig)
            out, _ = proc.communicate(timeout=60)
        assert proc.returncode != 0, out
        deadline = time.monotonic() + 30  # after a SIGKILL the watchdog, another process, stops them
        while (left := survivors(str(services["pg"]), int(str(services["redis"])))) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], f"left running after {sig.name}: {left}\n{out}"
        while Path(str(services["pg"])).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(str(services["pg"])).exists(), "the PostgreSQL files are removed"
    finally:
        if services:
            for pid in survivors(str(services["pg"]), int(str(services["redis"]))):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            shutil.rmtree(str(services["pg"]), ignore_errors=True)

"""The code stays lint-clean (ruff) and type-clean (mypy --strict), tests and benchmarks included."""

from __future__ import annotations

import sys

from tests.helpers.paths import ROOT_DIR
from tests.helpers.processes import run

ROOT = ROOT_DIR
CODE = ["protocol", "server", "bots", "client", "cli", "tests", "bench"]


def test_ruff_clean() -> None:
    """`ruff check` finds nothing."""
    proc = run([sys.executable, "-m", "ruff", "check", *CODE], timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_clean() -> None:
    """`mypy --strict` finds nothing (with a cache of this interpreter's own: the suite runs on two Pythons side by
    side, and with `python_version` set in pyproject both would share one cache directory and read each other's
    half-written files)."""
    cache = ROOT / ".mypy_cache" / f"suite-{sys.version_info.major}.{sys.version_info.minor}"
    proc = run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), *CODE], timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr

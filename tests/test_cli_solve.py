"""`kalah solve` as a user meets it: the database plan, the time limit that counts building, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from bots import egdb
from cli import solve
from cli.main import main
from protocol import Variant
from tests.processes import KALAH, started


def test_time_limit_shorter_than_the_build_builds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A build estimated past --time-limit is not started: the plan, the reason and the command that builds it."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setattr(egdb, "BUILD_RATE", 1)  # every build now looks far longer than the limit
    assert main(["solve", "-H", "2", "-s", "2", "--egdb-seeds", "5", "--time-limit", "30", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["exact"] is True  # solved without databases
    assert "to build: 5 (levels 1..5)" in out.err
    assert "not building them" in out.err and "`kalah egdb build --seeds 5 -H 2`" in out.err
    assert list(tmp_path.iterdir()) == []


def test_build_within_the_time_limit_is_counted_and_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A build that fits is done first, with its plan and progress on stderr, even with --json."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    assert main(["solve", "-H", "2", "-s", "2", "--egdb-seeds", "5", "--time-limit", "60", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["exact"] is True
    assert "building them first, counted in the time limit" in out.err and "level 5:" in out.err
    assert len(list(tmp_path.iterdir())) == 5


def test_solve_uses_the_levels_on_disk_and_the_threads_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Without --egdb-seeds a solve takes every level already built (no plan printed, nothing built), on
    the threads given; a thread count outside 1..64 is one clear line, status 2."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setattr(solve, "auto_egdb_seeds", lambda variant: 2)  # a board sized for fewer levels than built
    assert main(["egdb", "build", "-H", "3", "--seeds", "9"]) == 0
    capsys.readouterr()
    asked: list[int] = []
    load = egdb.load

    def spy(variant: Variant, seeds: int, *args: Any, **kwargs: Any) -> list[Any]:
        """Note the levels a solve asks for."""
        asked.append(seeds)
        return load(variant, seeds, *args, **kwargs)

    monkeypatch.setattr(egdb, "load", spy)
    assert main(["solve", "-H", "3", "-s", "4", "--per-move", "--threads", "2", "--json", "--no-book"]) == 0
    assert asked == [9]
    out = capsys.readouterr()
    assert json.loads(out.out)["value"] == main_value(["solve", "-H", "3", "-s", "4", "--egdb-seeds", "0",
                                                       "--threads", "1", "--json", "--no-book"], capsys)
    assert out.err == "" and len(list(tmp_path.iterdir())) == 9
    assert main(["solve", "-H", "3", "-s", "4", "--threads", "65"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    for flags in (["--threads", "0"], ["--tt-bits", "99"], ["--egdb-seeds", "41"]):  # refused even where a book answers
        assert main(["solve", *flags]) == 2
        assert "--threads 1..64" in capsys.readouterr().err


def main_value(argv: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    """The value `kalah solve ... --json` prints."""
    assert main(argv) == 0
    value: int = json.loads(capsys.readouterr().out)["value"]
    return value


def test_ctrl_c_ends_a_long_search_at_once(tmp_path: Path) -> None:
    """SIGINT while the C search runs: status 130 within seconds and one line, no traceback. (The search is killed
    with its process group if anything here fails, and gets SIGINT's default handling even in a suite run with
    SIGINT ignored.)"""
    with started([*KALAH, "solve", "-H", "6", "-s", "6", "--egdb-seeds", "0", "--tt-bits", "16", "--per-move"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        time.sleep(2)  # well into the search (it takes minutes)
        assert proc.poll() is None
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 10
    assert proc.returncode == 130 and out == "" and err == "kalah solve: interrupted\n"

"""`kalah solve` as a user meets it: the database plan, the time limit that counts building, asking before long builds.

(Ctrl-C and SIGTERM: tests/bots/test_interrupts.py.)
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bots import egdb
from cli import solve
from cli.main import main
from protocol import Variant
from tests.helpers.processes import wait_working


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


def test_a_long_build_needs_yes_outside_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Kalah(12,200) wants 217 MiB of databases: the plan says what they cost, and without a terminal to ask
    in the solve is refused in one line naming --yes and --egdb-seeds; nothing is built."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    assert main(["solve", "-H", "12", "-s", "200", "--json"]) == 2
    err = capsys.readouterr().err
    assert "about 216.7 MiB on disk" in err and "estimated time: about" in err
    last = err.splitlines()[-1]
    assert last.startswith("kalah solve: building these databases takes about ")
    assert "add --yes" in last and "--egdb-seeds 0" in last and "`kalah egdb build --seeds 11 -H 12`" in last
    assert list(tmp_path.iterdir()) == []


def test_yes_builds_what_a_solve_wants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """With --yes a build estimated past a few seconds is made first (here: every build looks long)."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setattr(egdb, "BUILD_RATE", 1)
    argv = ["solve", "-H", "2", "-s", "2", "--egdb-seeds", "5", "--json"]
    assert main(argv) == 2 and "add --yes" in capsys.readouterr().err
    assert main([*argv, "--yes"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"] is True
    assert len(list(tmp_path.iterdir())) == 5


def test_in_a_terminal_a_long_build_is_asked_for(tmp_path: Path) -> None:
    """In a terminal `kalah solve` asks before a long build; no solves with the levels on disk (none here),
    and the search that follows stops on Ctrl-C. The child is killed on every path."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: `kalah solve` in the terminal, SIGINT as a user's shell leaves it
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.environ["KALAH_EGDB_DIR"] = str(tmp_path)
            os.execv(sys.executable, [sys.executable, "-m", "cli.main", "solve", "-H", "6", "-s", "4", "--no-book",
                                      "--egdb-seeds", "24"])
        finally:
            os._exit(127)
    seen = b""
    try:
        seen = _read_until(fd, b"[y/N] ")
        assert b"about 650.2 MiB on disk" in seen and b"build them now (about" in seen
        os.write(fd, b"n\n")
        seen += _read_until(fd, b"levels on disk")
        assert b"not building them: solving with the 0 levels on disk" in seen
        wait_working(pid)  # into the search (without databases it takes minutes)
        os.kill(pid, signal.SIGINT)
        seen += _read_until(fd, b"interrupted")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 130
        assert list(tmp_path.iterdir()) == []
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def _read_until(fd: int, needle: bytes, timeout: float = 120.0) -> bytes:
    """What a terminal shows until `needle` (fails past `timeout`, a guard against a hang)."""
    seen = b""
    end = time.monotonic() + timeout
    while needle not in seen:
        left = end - time.monotonic()
        assert left > 0, f"no {needle!r} in {seen!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child ended
                chunk = b""
            assert chunk, f"ended before {needle!r}: {seen!r}"
            seen += chunk
    return seen


def test_a_position_past_its_end_says_how_to_mark_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A position whose row is empty but not marked ended: one line giving the notation that marks it
    (leftovers in the stores, the end as the last field), which then solves at once: no database plan, no build."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    assert main(["solve", "-H", "2", "-s", "2", "--position", "0,0,4,2,2,0 S 5 -"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the end as the last field, '0,0,4,0,0,4 S 5 - empty'" in err
    assert main(["solve", "-H", "2", "-s", "2", "--position", "0,0,4,0,0,4 S 5 - empty", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["value"] == 0 and out.err == ""
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_level_is_one_line_naming_the_fix_or_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A level file cut short: a solve that may not build (here: past --time-limit) stops with one line naming the
    file and the fix; one that may build rebuilds it and solves."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    argv = ["solve", "-H", "2", "-s", "2", "--egdb-seeds", "5", "--json"]
    assert main(argv) == 0
    value = json.loads(capsys.readouterr().out)["value"]
    path = egdb.level_path(tmp_path, Variant(houses=2, seeds=2), 3)
    whole = path.read_bytes()
    path.unlink()
    path.write_bytes(whole[:-1])
    monkeypatch.setattr(egdb, "BUILD_RATE", 1)  # the rebuild now looks far longer than the limit
    assert main([*argv, "--time-limit", "1"]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == (f"kalah solve: endgame database {path} ({len(whole) - 1:,} bytes where its header says "
                    f"{len(whole):,}): delete it and run `kalah egdb build` to rebuild it")
    monkeypatch.setattr(egdb, "BUILD_RATE", 10**9)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["value"] == value and path.read_bytes() == whole

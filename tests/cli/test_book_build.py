"""`kalah book build` in the background: at low priority, resumable after SIGKILL, its progress told by `kalah book
status`; a walk that follows every answer is recorded as complete in the book's header."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from bots import book as book_mod
from bots import egdb
from bots.book import Book
from bots.book_status import BuildStatus, status_path
from bots.core import implementation
from protocol import Variant
from tests.helpers.processes import KALAH, run, started

SMALL = Variant(houses=4, seeds=4)
PLAN = ["-H", "4", "-s", "4", "--egdb-seeds", "8", "--tt-bits", "16", "--node-limit", "3000", "--no-build-egdb"]
"""A whole-game walk of Kalah(4,4) (every answer followed: the default depth), 377 hard positions, a few seconds."""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of the builds: Kalah(4,4)'s databases up to 8 seeds made here, no operator's books."""
    egdb.load(SMALL, 8, implementation("c"), tmp_path / "egdb")
    return {**os.environ, "KALAH_EGDB_DIR": str(tmp_path / "egdb"), "KALAH_BOOK_DIR": str(tmp_path / "none")}


def nice_of(pid: int) -> int:
    """The scheduling niceness of process `pid` (field 19 of /proc/PID/stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])


def entries(path: Path) -> int:
    """The positions of the book at `path` (0 while there is none)."""
    return len(Book.loads(path.read_text())) if path.is_file() else 0


def lines(easy_log: Path) -> list[str]:
    """The whole lines of an easy log (one a position found easy), its head left out."""
    return easy_log.read_text().split("\n")[1:-1]


def status(directory: Path, env: dict[str, str]) -> dict[str, object]:
    """`kalah book status --json` of the Kalah(4,4) book in `directory`."""
    done = run([*KALAH, "book", "status", "-H", "4", "-s", "4", "--dir", str(directory), "--json"], env=env)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    return out


def test_a_build_killed_mid_way_resumes_where_it_was_and_is_recorded_complete(tmp_path: Path,
                                                                              env: dict[str, str]) -> None:
    """A build killed by SIGKILL once it has added positions: its book holds every position its status counted,
    `kalah book status` says it stopped, and the next run proves only what the first had not (no saved position is
    proved again, no easy one logged is logged twice) and ends with the book of an uninterrupted build, recorded
    complete in its header."""
    whole_dir, books = tmp_path / "whole", tmp_path / "books"
    done = run([*KALAH, "book", "build", *PLAN, "--dir", str(whole_dir)], timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    whole = Book.loads((whole_dir / book_mod.file_name(SMALL)).read_text())
    path = books / book_mod.file_name(SMALL)
    with started([*KALAH, "book", "build", *PLAN, "--dir", str(books)], env=env,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as first:
        deadline = time.monotonic() + 120
        while entries(path) < 40 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        first.kill()
        first.wait(30)
        assert first.returncode == -9, "the build ended before it was killed"
    saved = Book.loads(path.read_text())
    left = BuildStatus.read(status_path(path, SMALL))
    assert left is not None and left.state == "running" and left.added <= len(saved) < len(whole)
    assert saved.entries.items() <= whole.entries.items() and not saved.completions(SMALL)
    told = status(books, env)
    build = told["build"]
    assert isinstance(build, dict) and build["state"] == "stopped" and told["running"] is None
    assert told["positions"] == len(saved) and told["complete"] == []
    easy = lines(book_mod.easy_path(path))
    assert easy
    done = run([*KALAH, "book", "build", *PLAN, "--dir", str(books), "--nice", "0"], timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    found = re.search(r"([\d,]+) positions \(([\d,]+) proved now", done.stdout)
    assert found, done.stdout
    assert int(found[2].replace(",", "")) == len(whole) - len(saved)
    logged = lines(book_mod.easy_path(path))
    assert logged[:len(easy)] == easy and sorted(logged) == sorted(lines(book_mod.easy_path(whole_dir / path.name)))
    again = Book.loads(path.read_text())
    assert again.entries == whole.entries
    assert [(c.databases, c.node_limit) for c in again.completions(SMALL)] == [(8, 3000)]
    told = status(books, env)
    assert told["complete"] == [{"databases": 8, "node_limit": 3000, "table_log2": 20}]
    assert isinstance(told["build"], dict) and told["build"]["state"] == "complete" and told["build"]["queued"] == 0


def test_a_build_lowers_its_priority_unless_told_not_to(tmp_path: Path, env: dict[str, str]) -> None:
    """`kalah book build` runs at nice 10 more than it was started with by default, `--nice N` at N more, `--nice 0`
    as it was started; `kalah book status` says, in lines, how far the running build is."""
    base = nice_of(os.getpid())
    for flags, more in (([], 10), (["--nice", "4"], 4), (["--nice", "0"], 0)):
        books = tmp_path / f"books{more}"
        with started([*KALAH, "book", "build", *PLAN, "--dir", str(books), *flags], env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
            assert proc.stdout is not None and proc.stdout.readline().startswith("book ")  # under way
            assert nice_of(proc.pid) == min(19, base + more)
            if more == 10:
                path = books / book_mod.file_name(SMALL)
                deadline = time.monotonic() + 60
                while entries(path) < 5 and time.monotonic() < deadline:
                    time.sleep(0.01)
                done = run([*KALAH, "book", "status", "-H", "4", "-s", "4", "--dir", str(books)], env=env)
                lines = done.stdout.splitlines()
                assert done.returncode == 0 and len(lines) == 2, done.stdout
                assert lines[0].startswith("kalah(4,4): not complete; ") and str(path) in lines[0]
                assert re.match(rf"build: running \(process {proc.pid}\), turn \d+: [\d,]+ positions proved and "
                                r"[\d,]+ left to the board this run, [\d,]+ queued; databases up to 8 seeds, node "
                                r"limit 3,000; updated ", lines[1]), lines[1]


def test_a_build_that_cannot_use_the_databases_on_disk_is_refused_in_one_line(tmp_path: Path,
                                                                               env: dict[str, str]) -> None:
    """With `--no-build-egdb`, a build asking for more levels than are on disk is refused in one line naming the
    build and the levels there, and builds none; a bad `--nice` is refused too."""
    for flags, said in ((["--egdb-seeds", "9"], "reach 8 seeds, not 9 (--no-build-egdb): build them with `kalah "
                                                "egdb build --seeds 9 -H 4` or pass --egdb-seeds 8"),
                        (["--nice", "20"], "--nice must be 0..19")):
        done = run([*KALAH, "book", "build", *PLAN, "--dir", str(tmp_path / "books"), *flags], env=env)
        assert done.returncode == 2 and done.stderr.startswith("kalah book: ") and said in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
    assert egdb.present_seeds(SMALL, tmp_path / "egdb") == 8
    assert not (tmp_path / "books").exists()


def test_status_without_a_build_says_whether_one_is_needed(tmp_path: Path, env: dict[str, str]) -> None:
    """`kalah book status` where no build ran: for a start whose book records a complete walk (the shipped Kalah(6,5)
    empty-capture book) it says none is needed and names the databases the bots then use; for one without, the
    command that starts a build."""
    empty = run([*KALAH, "book", "status", "-H", "6", "-s", "5", "--capture", "empty", "--dir", str(tmp_path / "b")],
                env=env)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.splitlines()[1] == (
        "build: none recorded here, none needed: the bots play every move of it proved with the databases up to 30 "
        "seeds (`kalah egdb build --seeds 30 --capture empty`, KALAH_BOT_EGDB_SEEDS=30)")
    small = run([*KALAH, "book", "status", "-H", "4", "-s", "4", "--dir", str(tmp_path / "b")], env=env)
    assert small.returncode == 0, small.stderr
    assert small.stdout.splitlines() == [
        f"kalah(4,4): not complete; 0 positions in {tmp_path / 'b' / book_mod.file_name(SMALL)}",
        "build: none recorded here; `kalah book build -H 4 -s 4 --egdb-seeds N` starts it"]

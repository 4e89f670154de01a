"""Ctrl-C and SIGTERM stop `kalah solve`, `kalah egdb build` and `kalah book build` at once, leaving whole files.

Each test runs the real command in a child process (`tests.helpers.kalah_process`), which it kills on
every path. The child restores SIGINT's default handler itself, so the tests hold when the
test run was started with SIGINT ignored (a background job, `nohup`); one test starts it with
SIGINT ignored on purpose: it then keeps running on SIGINT, as POSIX asks, and SIGTERM still
stops it.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import bots._search as core
from bots import book as book_mod
from bots import egdb
from bots.book import Book
from bots.book_status import status_path
from protocol import Variant
from tests.helpers.kalah_process import kalah
from tests.helpers.processes import blocked_signals, threads, wait_for_state

LONG_SOLVE = ["solve", "-H", "6", "-s", "6", "--egdb-seeds", "0", "--tt-bits", "16", "--per-move", "--no-book"]
"""A search of minutes, with no database to build first."""


def test_ctrl_c_ends_a_long_search_at_once(tmp_path: Path) -> None:
    """SIGINT while the C search runs on every thread: status 130 and one line, no traceback."""
    with kalah(LONG_SOLVE, tmp_path) as solve:
        solve.wait_working()  # into the search (it takes minutes)
        assert solve.stop(signal.SIGINT) == 130
        assert solve.text() == "kalah solve: interrupted\n"


def test_sigterm_stops_a_search_even_with_sigint_ignored(tmp_path: Path) -> None:
    """Started with SIGINT ignored (a background job), the search goes on after SIGINT; SIGTERM stops it."""
    with kalah(LONG_SOLVE, tmp_path, sigint="ignore") as solve:
        solve.wait_working()
        solve.proc.send_signal(signal.SIGINT)
        solve.wait_working()  # it goes on searching: ignored, as its parent asked
        assert solve.stop(signal.SIGTERM) == 130
        assert solve.text() == "kalah solve: interrupted\n"


def test_egdb_build_stops_mid_level_and_resumes(tmp_path: Path) -> None:
    """SIGINT while a level is built: status 130, whole levels only (no temporary file), and the next
    build resumes at the level that was interrupted."""
    variant = Variant(houses=6, seeds=4)
    directory = tmp_path / "egdb"
    # levels 16 to 21 (13 to 129 million positions) take 10-20 s on two cores, so the signal comes mid-build even
    # when this test reads "level 15:" seconds late (a build once ended before the signal was taken: the kernel had
    # given it to a building thread; test_only_the_main_thread_takes_the_stop_signals covers that)
    build = ["egdb", "build", "-H", "6", "--seeds", "21", "--dir", str(directory)]
    with kalah(build, tmp_path) as first:
        first.wait_for("level 15:")
        sent = time.monotonic()
        assert first.stop(signal.SIGINT) == 130, first.text()
        said = f"{first.text()!r}, ended {time.monotonic() - sent:.1f} s after the signal"  # if an assert fails
        assert first.text().endswith("kalah egdb: interrupted\n"), said
    names = sorted(p.name for p in directory.iterdir())
    done = [lv.k for lv in egdb.plan(variant, 21, directory) if lv.present]
    assert done == list(range(1, len(done) + 1)) and 15 <= len(done) < 21, (names, said)
    assert names == sorted(egdb.level_path(directory, variant, k).name for k in done), said  # no temporary file
    assert len(egdb.load(variant, len(done), core, directory, build=False)) == len(done) + 1
    with kalah([*build[:5], str(len(done) + 1), *build[6:]], tmp_path) as again:
        assert again.end() == 0, again.text()
        assert f"present: {len(done)} levels; to build: 1 (levels {len(done) + 1}..{len(done) + 1})" in again.text()


def test_only_the_main_thread_takes_the_stop_signals(tmp_path: Path) -> None:
    """While `kalah egdb build` builds a level on a pool of threads, every thread but the main one blocks SIGINT and
    SIGTERM: the kernel gives them to the main thread, which waits for the work and stops it. Before, the kernel
    sometimes gave the SIGINT to a building thread; Python then ran no handler until the main thread's wait for the
    work ended, and the build went on to its last level (1 stop in 12 on Python 3.13 under load)."""
    build = ["egdb", "build", "-H", "6", "--seeds", "21", "--dir", str(tmp_path / "egdb")]
    with kalah(build, tmp_path) as running:
        pid = running.proc.pid
        blocks: dict[int, bool] = {}  # thread id -> whether it blocks both signals

        def pool_read(pid: int) -> bool:
            """Read each thread's blocked signals; whether a pool of threads was building (the main, the work and
            at least one of the pool's: threads come and go with the levels) and the main thread took the signals
            (it blocks them while it starts the work thread, which may start a pool meanwhile)."""
            masks = {tid: blocked_signals(pid, tid) for tid in threads(pid)}
            blocks.clear()
            stops = {signal.SIGINT, signal.SIGTERM}
            blocks.update({tid: stops <= mask for tid, mask in masks.items() if mask is not None})
            return len(blocks) >= 3 and blocks.get(pid) is False

        wait_for_state(pid, pool_read, "a pool of building threads")
        assert blocks == {tid: tid != pid for tid in blocks}
        assert running.stop(signal.SIGINT) == 130
        assert running.text().endswith("kalah egdb: interrupted\n")


def test_a_build_that_does_not_wind_up_in_time_says_what_every_other_stop_says(tmp_path: Path) -> None:
    """SIGINT while a level is built, with no time to wind up: the process ends at once with status 130 and the
    line of every other stop, `kalah egdb: interrupted` (not `kalah egdb build`)."""
    build = ["egdb", "build", "-H", "6", "--seeds", "19", "--dir", str(tmp_path / "egdb")]
    with kalah(build, tmp_path, wind_up=False) as running:
        running.wait_for("level 3:")  # in the build, which the stop cannot wait for
        assert running.stop(signal.SIGINT) == 130
        assert running.text().endswith("\nkalah egdb: interrupted\n"), running.text()


def test_book_build_saves_what_it_proved_and_resumes(tmp_path: Path) -> None:
    """SIGINT during a book build: status 130 and the positions proved so far in a whole book file; run again,
    it starts from them; SIGTERM stops it the same way."""
    variant = Variant(houses=6, seeds=3)
    path = tmp_path / "books" / book_mod.file_name(variant)
    build = ["book", "build", "-H", "6", "-s", "3", "--egdb-seeds", "0", "--node-limit", "200", "--from-scratch"]
    with kalah(build, tmp_path) as first:
        first.wait_for("(+")  # a progress line: some positions proved
        assert first.stop(signal.SIGINT) == 130
        assert first.text().endswith("kalah book: interrupted\n")
    saved = Book.loads(path.read_text())
    beside = {book_mod.easy_path(path).name, path.name.removesuffix(".txt") + ".lock",  # the easy log, the lock
              status_path(path, variant).name}  # and the build's status
    names = {p.name for p in path.parent.iterdir()}
    assert len(saved) >= 1 and path.name in names and names <= {path.name, *beside}  # no temporary file left
    with_shipped = book_mod.load(variant, [book_mod.PACKAGE_DIR, path.parent])
    assert with_shipped is not None
    with kalah(build[:-1], tmp_path) as again:  # without --from-scratch: the positions proved are kept
        again.wait_for(f"book {path}: {len(with_shipped):,} positions")
        assert again.stop(signal.SIGTERM) == 130
    resumed = Book.loads(path.read_text())
    assert resumed.entries.items() >= saved.entries.items()


def test_book_verify_stops_at_once(tmp_path: Path) -> None:
    """SIGINT while `kalah book verify` proves entries without databases (minutes): status 130, one line."""
    with kalah(["book", "verify", "--egdb-seeds", "0", "--tt-bits", "16"], tmp_path) as verify:
        verify.wait_working()  # into the first proofs
        assert verify.stop(signal.SIGINT) == 130
        assert verify.text().endswith("kalah book: interrupted\n")

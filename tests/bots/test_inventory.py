"""What a server's bots have (`bots.inventory`): the report, and the small database builds started in the background."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bots import book as book_mod
from bots import egdb, inventory
from bots.book import Book, Completion
from bots.core import implementation
from bots.engines import Engines
from bots.pysearch import level_size
from protocol import Capture, Variant


def test_small_builds_run_in_the_background_and_reach_the_bots(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The levels that build within the bound (here made levels 1..5) are built in a background thread for both
    rule sets, said so, and engines lent afterwards search with them; then nothing that small is left."""
    small = sum(level_size(6, k) for k in range(1, 6))
    monkeypatch.setattr(egdb, "BUILD_RATE", small / (inventory.SMALL_BUILD_S * (os.cpu_count() or 1)) * 1.001)
    engines = Engines(egdb_dir=tmp_path)
    with engines.borrow("perfect", Variant(), 16, 24) as engine:
        assert engine.levels == []
    said: list[str] = []
    thread = inventory.start_small_builds(tmp_path, engines.reopen, said.append)
    assert thread is not None
    thread.join(120)
    assert not thread.is_alive()
    for capture in Capture.STANDARD, Capture.EMPTY:
        assert egdb.present_seeds(Variant(capture=capture), tmp_path) == 5
    assert said[0].startswith(f"building the small endgame databases in the background: {2 * small:,} positions")
    assert said[-1] == ("small endgame databases built: h6-standard-extra-owner up to 5 seeds, "
                        "h6-empty-extra-owner up to 5 seeds")
    with engines.borrow("perfect", Variant(), 16, 24) as engine:
        assert len(engine.levels) == 6
    assert inventory.start_small_builds(tmp_path, engines.reopen, said.append) is None
    assert any("databases up to 5 seeds" in line for line in inventory.report(tmp_path))


def test_a_server_reads_its_bots_databases_at_start(tmp_path: Path) -> None:
    """`announce` (what `kalah serve` says at start) also starts opening and reading in the databases on disk of both
    rule sets, so that the first game's first moves off the book do not wait for the disk; nothing is built."""
    core = implementation("c")
    for variant in inventory.RULE_SETS:
        egdb.load(variant, 5, core, tmp_path)
    engines = Engines(egdb_dir=tmp_path)
    said: list[str] = []
    assert inventory.announce(engines, False, said.append) is None
    size = sum(lv.bytes for variant in inventory.RULE_SETS for lv in egdb.plan(variant, 5, tmp_path))
    deadline = time.monotonic() + 30
    while engines.level_bytes() < size and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engines.level_bytes() == size
    assert any("databases up to 5 seeds" in line for line in said)
    assert egdb.present_seeds(Variant(), tmp_path) == 5


def fake_levels(directory: Path, seeds: int) -> None:
    """Level files (format v1) of the right sizes up to `seeds` for both rule sets (sparse: no disk used)."""
    for capture in Capture.STANDARD, Capture.EMPTY:
        for level in egdb.plan(Variant(capture=capture), seeds, directory):
            directory.mkdir(parents=True, exist_ok=True)
            with egdb.level_path(directory, Variant(capture=capture), level.k, egdb.OLD_FORMAT).open("wb") as fh:
                fh.truncate(level.size)


@pytest.mark.parametrize(("on_disk", "bot_seeds", "kalah_6_4", "standard", "empty"), [
    (0, 24, "not perfect in Kalah(6,4) without databases",
     "its book's build is not finished (", "its book is complete for the databases up to 30 seeds, 0 on disk: "
     "`kalah egdb build --seeds 30 --capture empty` ("),
    (24, 24, "proved moves throughout Kalah(6,4)",
     "after `kalah egdb build --seeds 30` (", "its book is complete for the databases up to 30 seeds, 24 on disk"),
    (31, 16, "KALAH_BOT_EGDB_SEEDS=24 lets the bots use the databases on disk (up to 31 seeds)",
     "--egdb-seeds 30 --node-limit 2000000` finishes it in the background, resumably (`kalah book status -H 6 -s 5`",
     "its book is complete for the databases up to 30 seeds and the bots use 16 of the 31 on disk: "
     "KALAH_BOT_EGDB_SEEDS=30 lets them use enough"),
    (30, 30, "proved moves throughout Kalah(6,4)",
     "finishes it in the background, resumably (`kalah book status", "PERFECT"),
])
def test_the_report_says_what_perfect_is_in_kalah_6_4_and_6_5(tmp_path: Path, on_disk: int, bot_seeds: int,
                                                              kalah_6_4: str, standard: str, empty: str) -> None:
    """What `perfect` is in Kalah(6,4) follows the levels on disk and those the bots are allowed to use; in Kalah(6,5)
    a book not complete (standard, here) makes a line naming the book build (and the databases' when they are
    missing), and a book complete with 30 levels (empty capture) is perfect with them, else the line names what is
    missing."""
    fake_levels(tmp_path, on_disk)
    Book(egdb.rule_key(Variant())).save(tmp_path / "books" / book_mod.file_name(Variant()))
    complete_book(tmp_path / "books", Capture.EMPTY, 30)
    lines = inventory.report(tmp_path, book_dirs=[tmp_path / "books"], bot_seeds=bot_seeds)
    assert f"databases up to {on_disk} seeds" in lines[1]
    assert lines[-3].startswith("perfect: ") and kalah_6_4 in lines[-3]
    assert lines[-2].startswith("not perfect in Kalah(6,5) standard: its book's build is not finished ("), lines[-2]
    assert standard in lines[-2], lines[-2]
    if empty == "PERFECT":
        assert lines[-1].startswith("perfect in Kalah(6,5) empty capture: its book is complete for the databases up "
                                    "to 30 seeds and the bots use 30: every move is the book's or proved within "
                                    "2,000,000 nodes"), lines[-1]
    else:
        assert lines[-1].startswith(f"not perfect in Kalah(6,5) empty capture: {empty}"), lines[-1]


def complete_book(directory: Path, capture: Capture, seeds: int) -> None:
    """A book of the rule set in `directory` recording a complete build of Kalah(6,5) with databases up to `seeds`."""
    rules = Variant(capture=capture)
    book = Book(egdb.rule_key(rules))
    book.record(Completion(Variant(seeds=5, capture=capture).text(), seeds, 2_000_000, 20))
    book.save(directory / book_mod.file_name(rules))


@pytest.mark.parametrize(("complete_at", "bot_seeds", "standard"), [
    (5, 24, "perfect in Kalah(6,5) standard: its book is complete for the databases up to 5 seeds and the bots use 5: "
            "every move is the book's or proved within 2,000,000 nodes"),
    (6, 24, "not perfect in Kalah(6,5) standard: its book is complete for the databases up to 6 seeds, 5 on disk: "
            "`kalah egdb build --seeds 6` ("),
    (5, 4, "not perfect in Kalah(6,5) standard: its book is complete for the databases up to 5 seeds and the bots use "
           "4 of the 5 on disk: KALAH_BOT_EGDB_SEEDS=5 lets them use enough"),
])
def test_kalah_6_5_is_perfect_only_with_a_complete_book_and_its_databases(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complete_at: int, bot_seeds: int, standard: str) -> None:
    """With an operator's book ($KALAH_BOOK_DIR) recording a complete Kalah(6,5) build, the verdict is "perfect" only
    when the databases on disk reach its level and the bots use them; else one line names what is missing. The other
    rule set's shipped book is complete with 30 levels, which are not on disk: the line names their build."""
    fake_levels(tmp_path / "egdb", 5)
    monkeypatch.setenv(book_mod.ENV_DIR, str(tmp_path / "books"))
    complete_book(tmp_path / "books", Capture.STANDARD, complete_at)
    lines = inventory.report(tmp_path / "egdb", bot_seeds=bot_seeds)
    assert lines[-2].startswith(standard), lines[-2]
    assert lines[-1].startswith("not perfect in Kalah(6,5) empty capture: its book is complete for the databases up "
                                "to 30 seeds, 5 on disk: `kalah egdb build --seeds 30 --capture empty` ("), lines[-1]

"""What a server's bots have to play with: books, endgame databases, and what that makes of `perfect`.

`report` gives the lines `kalah serve` prints at start for the rule sets of Kalah(6,n) (the
shipped books' games): the book's positions, the database levels on disk, and what the
`perfect` bot is then: in Kalah(6,4) as measured (docs/bots.md, "A fresh server"), in Kalah(6,5)
perfect only where the rule set's book records a complete build of that start at a database level
the bots have (`kalah_6_5`), else what is missing and the command that makes it. `small_build` names the
levels a rule set lacks that build within `SMALL_BUILD_S` (seconds on two cores); a server
started in a terminal builds them in the background at low priority (`start_small_builds`),
and its bots take them up when they are done (`Engines.reopen`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bots import book as book_mod
from bots import egdb
from bots.core import implementation
from bots.players import DEFAULT_BOT_EGDB
from bots.pysearch import level_size
from protocol.variant import Capture, Variant

log = logging.getLogger(__name__)

RULE_SETS = (Variant(), Variant(capture=Capture.EMPTY))
"""The rule sets of the shipped books: Kalah(6,n), standard and empty capture."""
PERFECT_SEEDS = 24
"""The databases the perfect bot's Kalah(6,4) play was checked with (docs/bots.md)."""
LARGE_SEEDS = 30
"""The databases the perfect bot's Kalah(6,5) books are built with (docs/bots.md): with 30 levels a full walk has
an estimated eighteenth of the hard positions it has with 28 (docs/benchmarks.md, "How big a complete book is")."""
BOOK_NODE_LIMIT = 2_000_000
"""The node limit of the Kalah(6,5) books' builds: a position whose proof from an empty table takes more goes in."""
SMALL_BUILD_S = 10.0
SMALL_SEEDS = 16
"""The levels a server builds on its own on two cores (within `SMALL_BUILD_S`), with which `perfect` was measured."""
"""The most a build may take (estimated, all cores) to be started by a server on its own."""
BUILD_NICE = 10


def small_build(variant: Variant, directory: Path | None = None, seconds: float = SMALL_BUILD_S) -> int:
    """The most seeds a rule set's databases reach when the levels missing up to it build within `seconds`
    (0 when no level is worth building: all there already, or the first one missing takes longer)."""
    have = egdb.present_seeds(variant, directory)
    seeds, todo = 0, 0
    for k in range(have + 1, PERFECT_SEEDS + 1):
        todo += level_size(variant.houses, k)
        if egdb.build_seconds(todo) > seconds:
            break
        seeds = k
    return seeds


def _bytes(n: int) -> str:
    """`1.2 GiB` or `230 MiB`."""
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def report(directory: Path | None = None, book_dirs: list[Path] | None = None,
           books: Callable[[Variant], Any] | None = None, bot_seeds: int | None = None) -> list[str]:
    """The lines saying what the bots have, per rule set, and what `perfect` is with it (`books`: the bots' own
    reader of books, `Engines.book`, so that they are read once; `bot_seeds`: the most levels the bots use,
    `KALAH_BOT_EGDB_SEEDS`): Kalah(6,4) in one line, then Kalah(6,5) in one line per rule set (`kalah_6_5`)."""
    bot_seeds = DEFAULT_BOT_EGDB if bot_seeds is None else bot_seeds
    directory = directory or egdb.cache_dir()
    lines = [f"bots: endgame databases in {directory}"]
    present = [egdb.present_seeds(variant, directory) for variant in RULE_SETS]
    least, on_disk = min(PERFECT_SEEDS, bot_seeds, *present), min(present)
    found = []
    for variant, seeds in zip(RULE_SETS, present, strict=True):
        book = books(variant) if books is not None else book_mod.load(variant, book_dirs)
        found.append(book)
        held = f"a book of {len(book):,} proved positions" if book is not None else "no book"
        lines.append(f"  {egdb.rule_key(variant)}: {held}, databases up to {seeds} seeds")
    need = sum(level_size(6, k) for k in range(1, PERFECT_SEEDS + 1))
    disk = _bytes(egdb.disk_bytes(need))
    build = (f"`kalah egdb build --seeds {PERFECT_SEEDS}` and `... --capture empty` ({disk} and an "
             f"estimated {egdb.build_seconds(need) / 60:.0f} min each) make every move proved")
    if on_disk >= PERFECT_SEEDS:  # there, but the bots are told to use fewer
        build = f"KALAH_BOT_EGDB_SEEDS={PERFECT_SEEDS} lets the bots use the databases on disk (up to {on_disk} seeds)"
    if least >= PERFECT_SEEDS:
        lines.append("perfect: proved moves throughout Kalah(6,4), as docs/bots.md measures it")
    elif least >= SMALL_SEEDS:
        lines.append(f"perfect: nearly perfect in Kalah(6,4) with databases up to {least} seeds: a few moves are "
                     f"not proved within a move (logged; docs/bots.md); {build}")
    else:
        lines.append(f"perfect: not perfect in Kalah(6,4) without databases: the books play the opening and the "
                     "hard positions, but some later moves are not proved within a move (logged) and a few of "
                     f"those give seeds away (docs/bots.md); {build}")
    for variant, book, seeds in zip(RULE_SETS, found, present, strict=True):
        lines.append(kalah_6_5(variant, book, seeds, bot_seeds))
    return lines


def capture_flag(variant: Variant) -> str:
    """The capture flag of a rule set in a command (none for the standard rule)."""
    return "" if variant.capture is Capture.STANDARD else f" --capture {variant.capture.value}"


def _egdb_build(variant: Variant, seeds: int) -> str:
    """The command that builds a rule set's databases up to `seeds`, with their size and estimated time."""
    need = sum(level_size(variant.houses, k) for k in range(1, seeds + 1))
    disk = _bytes(egdb.disk_bytes(need))
    return (f"`{egdb.build_command(variant, seeds)}` ({disk}, an estimated "
            f"{egdb.build_seconds(need) / 60:.0f} min)")


def kalah_6_5(rules: Variant, book: Any, on_disk: int, bot_seeds: int) -> str:
    """What `perfect` is in Kalah(6,5) under `rules` (a rule set of `RULE_SETS`), in one line: perfect only when the
    rule set's book records a complete build of the Kalah(6,5) start (`book.Completion`) whose database level the
    bots have (`on_disk` levels, of which they use `bot_seeds` at most); else what is missing and the command that
    makes it."""
    variant = Variant(houses=rules.houses, seeds=5, capture=rules.capture)
    name = f"Kalah(6,5) {'standard' if rules.capture is Capture.STANDARD else rules.capture.value + ' capture'}"
    usable = min(on_disk, bot_seeds)
    complete = book.completions(variant) if book is not None else []
    done = next((c for c in complete if c.databases <= usable), None)
    if done is not None:
        return (f"perfect in {name}: its book is complete for the databases up to {done.databases} seeds and the bots "
                f"use {usable}: every move is the book's or proved within {done.node_limit:,} nodes (logged, "
                "docs/bots.md)")
    if complete:
        level = complete[0].databases
        if on_disk < level:
            return (f"not perfect in {name}: its book is complete for the databases up to {level} seeds, {on_disk} on "
                    f"disk: {_egdb_build(variant, level)} completes them")
        return (f"not perfect in {name}: its book is complete for the databases up to {level} seeds and the bots use "
                f"{usable} of the {on_disk} on disk: KALAH_BOT_EGDB_SEEDS={level} lets them use enough")
    held = f"its book's build is not finished ({len(book):,} positions)" if book is not None else "it has no book"
    levels = "" if on_disk >= LARGE_SEEDS else f", after {_egdb_build(variant, LARGE_SEEDS)}"
    return (f"not perfect in {name}: {held}, so some moves are searched, not proved (logged); `kalah book build -H 6 "
            f"-s 5{capture_flag(variant)} --egdb-seeds {LARGE_SEEDS} --node-limit {BOOK_NODE_LIMIT}` finishes it in "
            f"the background, resumably{levels} (`kalah book status -H 6 -s 5{capture_flag(variant)}`: how far)")


def _lower_priority() -> None:
    """Lower this thread's scheduling priority (threads it starts inherit it), where the OS allows it."""
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + BUILD_NICE)


def start_small_builds(directory: Path | None = None, done: Callable[[], Any] | None = None,
                       say: Callable[[str], Any] = log.info) -> threading.Thread | None:
    """Build, in a background thread at low priority, the levels of each rule set that take seconds;
    `done()` is called once they are on disk. None when there is nothing that small to build."""
    plans = [(v, small_build(v, directory)) for v in RULE_SETS]
    plans = [(v, seeds) for v, seeds in plans if seeds]
    if not plans:
        return None
    todo = sum(lv.size for v, seeds in plans for lv in egdb.plan(v, seeds, directory) if not lv.present)
    say(f"building the small endgame databases in the background: {todo:,} positions, about "
        f"{egdb.build_seconds(todo):.0f} s on all cores at low priority ("
        + ", ".join(f"{egdb.rule_key(v)} up to {seeds} seeds" for v, seeds in plans) + ")")

    def work() -> None:
        """Build each plan, then tell."""
        _lower_priority()
        core = implementation("c")
        try:
            for variant, seeds in plans:
                egdb.load(variant, seeds, core, directory)
        except (OSError, RuntimeError, egdb.LevelFileError) as exc:  # RuntimeError: the server is shutting down
            say(f"the small endgame databases were not built: {exc}")
            return
        say("small endgame databases built: " + ", ".join(
            f"{egdb.rule_key(v)} up to {seeds} seeds" for v, seeds in plans))
        if done is not None:
            done()

    thread = threading.Thread(target=work, name="egdb-small-build", daemon=True)
    thread.start()
    return thread


def announce(engines: Any, build: bool, say: Callable[[str], Any]) -> threading.Thread | None:
    """Say what a server's bots have (`report`) and start reading their databases in the background
    (`Engines.preload`); then start the small builds (`build`: a server in a terminal), or name the command that
    makes them. `engines` is the bots' `Engines` pool (None: bots of their own)."""
    directory = getattr(engines, "egdb_dir", None) or egdb.cache_dir()
    for line in report(directory, getattr(engines, "book_dirs", None), getattr(engines, "book", None)):
        say(line)
    if engines is not None:
        for variant in RULE_SETS:  # opened and read into memory now, not during the first game's first moves
            if egdb.present_seeds(variant, directory):
                engines.preload(variant, DEFAULT_BOT_EGDB, timeout=0)
    if build:
        return start_small_builds(directory, getattr(engines, "reopen", None), say)
    plans = [(v, small_build(v, directory)) for v in RULE_SETS]
    for variant, seeds in plans:
        if seeds:
            say(f"  `{egdb.build_command(variant, seeds)}` builds {egdb.rule_key(variant)}'s small databases "
                "in seconds (a server started in a terminal builds them itself)")
    return None

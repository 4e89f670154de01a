"""What a server's bots have to play with: books, endgame databases, and what that makes of `perfect`.

`report` gives the lines `kalah serve` prints at start for the rule sets of Kalah(6,n) (the
shipped books' games): the book's positions, the database levels on disk, and what the
`perfect` bot is then, as measured (docs/bots.md, "A fresh server"). `small_build` names the
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
LARGE_SEEDS = 28
"""The databases the perfect bot's Kalah(6,5) play was checked with (docs/bots.md, bench/perfect.py)."""
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
    `KALAH_BOT_EGDB_SEEDS`)."""
    bot_seeds = DEFAULT_BOT_EGDB if bot_seeds is None else bot_seeds
    directory = directory or egdb.cache_dir()
    lines = [f"bots: endgame databases in {directory}"]
    present = [egdb.present_seeds(variant, directory) for variant in RULE_SETS]
    least, on_disk = min(LARGE_SEEDS, bot_seeds, *present), min(present)
    for variant, seeds in zip(RULE_SETS, present, strict=True):
        book = books(variant) if books is not None else book_mod.load(variant, book_dirs)
        held = f"a book of {len(book):,} proved positions" if book is not None else "no book"
        lines.append(f"  {egdb.rule_key(variant)}: {held}, databases up to {seeds} seeds")
    need = sum(level_size(6, k) for k in range(1, PERFECT_SEEDS + 1))
    build = (f"`kalah egdb build --seeds {PERFECT_SEEDS}` and `... --capture empty` ({_bytes(need)} and an "
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
    lines.append(_kalah_6_5(least, on_disk))
    return lines


def _kalah_6_5(seeds: int, on_disk: int) -> str:
    """What `perfect` is in Kalah(6,5) using databases up to `seeds` in both rule sets, `on_disk` being there
    (docs/bots.md measures it)."""
    if seeds >= LARGE_SEEDS:
        return ("perfect in Kalah(6,5): with these databases and the books every judged move kept the game's value, "
                "in both rule sets and seats against every bot; where the best move is not proved within a move, a "
                "move proved to keep that value is played (docs/bots.md)")
    if on_disk >= LARGE_SEEDS:
        return (f"perfect in Kalah(6,5): the books' opening moves, then searches that may give seeds away: the bots "
                f"use the databases up to {seeds} seeds of the {on_disk} on disk; KALAH_BOT_EGDB_SEEDS={LARGE_SEEDS} "
                "lets them prove most of its moves (docs/bots.md)")
    need = sum(level_size(6, k) for k in range(1, LARGE_SEEDS + 1))
    return (f"perfect in Kalah(6,5): the books' opening moves, then searches that may give seeds away; "
            f"`kalah egdb build --seeds {LARGE_SEEDS}` and `... --capture empty` ({_bytes(need)} and an estimated "
            f"{egdb.build_seconds(need) / 60:.0f} min each) let it prove most of them")


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
            capture = "" if variant.capture is Capture.STANDARD else f" --capture {variant.capture.value}"
            say(f"  `kalah egdb build --seeds {seeds}{capture}` builds {egdb.rule_key(variant)}'s small databases "
                "in seconds (a server started in a terminal builds them itself)")
    return None

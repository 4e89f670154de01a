"""`kalah book`: build, show and verify books of proved positions (see `bots.book`).

`kalah book build` proves, once, the positions of a game whose proof takes longer than a
bot's move (every position the perfect bot can face within `--depth` turns of the start, and
the game it plays against itself), saving after each position it adds (and at once on Ctrl-C or
SIGTERM, which stop it within a second) so that it resumes when run again, at low priority
(`--nice`). It uses the endgame databases up to `--egdb-seeds` (building missing ones first, as
`kalah solve` does, unless `--no-build-egdb`). A walk that ends with every answer followed is
recorded as complete in the book's header (`book.Completion`). `kalah book status` says how far
a build is, from the status file it writes beside the book (`bots.book_status`). `kalah book
show` prints a position's entry as a book line, then a legend of its fields in `#` comment
lines (as a book file has them); `kalah book verify` proves entries again and exits 1 on any
difference (Ctrl-C stops it within a second too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bots import book as book_mod
from bots import egdb
from bots.book import Book, BookBusyError, BookFormatError, Completion, house_key
from bots.book_builder import Builder, BuildStats, Plan
from bots.book_status import WRITE_EVERY_S, BuildStatus, builder, status_path
from bots.inventory import capture_flag
from bots.solver import Engine, relative_board
from cli.egdb import Reporter, describe, duration
from cli.interrupts import run_stoppable
from cli.variant_args import add_variant_args, variant_from_args
from protocol import Game, KalahError, Position, Variant

DEFAULT_EGDB_SEEDS = 24
DEFAULT_NICE = 10
"""How much `kalah book build` lowers its own scheduling priority (a build runs for hours beside other work)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register `kalah book build|status|show|verify` and their flags."""
    sub = parser.add_subparsers(dest="book_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="prove the positions whose proof takes longer than a move (resumable)",
                           description="Prove and store the positions of a game that a bot cannot prove "
                                       "within a move (see bots.book); run again to resume.")
    status = sub.add_parser("status", help="how far the build of a book is: positions proved, queued, the turn "
                                           "reached, whether complete",
                            description="How far the book build of the variant's start is (from the status file the "
                                        "build writes beside the book) and whether the book is complete.")
    status.add_argument("--json", action="store_true", help="one JSON object")
    show = sub.add_parser("show", help="the book's entry of the position after a record")
    verify = sub.add_parser("verify", help="prove book entries again; exit 1 on any difference",
                            description="Prove again the entries a game of the variant can reach (no more seeds "
                                        "in play than it has: -s 5 adds the Kalah(6,5) ones to Kalah(6,4)'s).")
    for p in (build, status, show, verify):
        add_variant_args(p)
        p.add_argument("--dir", type=Path, default=None,
                       help=f"book directory (default: ${book_mod.ENV_DIR} or the user cache directory)")
    for p in (build, verify):
        p.add_argument("--egdb-seeds", type=int, default=DEFAULT_EGDB_SEEDS, metavar="N",
                       help="endgame databases up to N seeds in play (built first if missing)")
        p.add_argument("--tt-bits", type=int, default=24, metavar="B", help="table of 2^B entries of 24 bytes")
    build.add_argument("--depth", type=int, default=book_mod.DEFAULT_DEPTH, metavar="T",
                       help="turns from the start within which every answer of the opponent is followed")
    build.add_argument("--node-limit", type=int, default=book_mod.DEFAULT_NODE_LIMIT, metavar="N",
                       help="positions whose proof from an empty table takes more nodes go into the book")
    build.add_argument("--check-egdb-seeds", type=int, default=None, metavar="N",
                       help="databases of the bot whose proofs decide which positions are easy (default: "
                            "--egdb-seeds); a larger --egdb-seeds then only speeds up the hard positions' proofs")
    build.add_argument("--workers", type=int, default=1, metavar="W",
                       help="threads of each hard position's proof (the easy checks take one)")
    build.add_argument("--keep", action="store_true",
                       help="off the bot's own game, leave to the board the positions where a move keeping the game's "
                            "value is proved within the node limit (the bot keeps the value there; fewer positions)")
    build.add_argument("--per-move-depth", type=int, default=0, metavar="T",
                       help="book positions up to T turns in also get every move's value (-1: none)")
    build.add_argument("--from-scratch", action="store_true",
                       help="prove every position again instead of taking those of the books already there")
    build.add_argument("--nice", type=int, default=DEFAULT_NICE, metavar="N",
                       help=f"lower this build's scheduling priority by N, 0..19 (default {DEFAULT_NICE}; 0: keep it)")
    build.add_argument("--no-build-egdb", action="store_true",
                       help="use only the database levels on disk: refuse to start when one up to --egdb-seeds is "
                            "missing (never build them here)")
    show.add_argument("--moves", default="", metavar="BINS", help="the position after this record")
    verify.add_argument("--sample", type=int, default=0, metavar="N", help="N random entries (default: all)")
    verify.add_argument("--seed", type=int, default=0, help="seed of the sample")


class BuildReport:
    """Progress lines of a book build on stderr, at most one every two seconds."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, stats: BuildStats) -> None:
        """One progress report from the builder."""
        if time.monotonic() - self.last < 2:
            return
        self.last = time.monotonic()
        sys.stderr.write(f"\rbook: {stats.entries:,} positions (+{stats.added:,}), {stats.easy:,} left to the board, "
                         f"{stats.queued:,} queued, turn {stats.depth}, {duration(stats.seconds)}   ")
        sys.stderr.flush()


def _path(args: argparse.Namespace, variant: Variant) -> Path:
    """The book file the flags choose."""
    return (args.dir or book_mod.book_dir()) / book_mod.file_name(variant)


def _open(args: argparse.Namespace, variant: Variant) -> tuple[Path, Book]:
    """The book file chosen by the flags and its contents (empty if it does not exist yet)."""
    path = _path(args, variant)
    if path.is_file():
        return path, Book.loads(path.read_text())
    return path, Book(egdb.rule_key(variant))


def _engine(args: argparse.Namespace, variant: Variant) -> Engine:
    """An engine with the databases the flags ask for (built first if missing, saying so)."""
    levels = egdb.plan(variant, args.egdb_seeds)
    if not all(lv.present for lv in levels):
        print(describe(variant, levels, egdb.cache_dir()), file=sys.stderr)
    return Engine(variant, tt_log2=args.tt_bits, egdb_seeds=args.egdb_seeds, progress=Reporter(levels),
                  workers=getattr(args, "workers", 1))


def build(args: argparse.Namespace, variant: Variant) -> int:
    """`kalah book build`: the flags checked, then the build with the book's lock held (one builder a book)."""
    check = args.egdb_seeds if args.check_egdb_seeds is None else args.check_egdb_seeds
    if not 0 <= check <= args.egdb_seeds:
        print(f"kalah book: --check-egdb-seeds must be 0..{args.egdb_seeds} (--egdb-seeds)", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("kalah book: --workers must be at least 1", file=sys.stderr)
        return 2
    if not 0 <= args.nice <= 19:
        print("kalah book: --nice must be 0..19", file=sys.stderr)
        return 2
    if args.no_build_egdb and (have := egdb.present_seeds(variant)) < min(args.egdb_seeds, variant.total_seeds):
        print(f"kalah book: the databases in {egdb.cache_dir()} reach {have} seeds, not {args.egdb_seeds} "
              f"(--no-build-egdb): build them with `{egdb.build_command(variant, args.egdb_seeds)}` or pass "
              f"--egdb-seeds {have}", file=sys.stderr)
        return 2
    if args.nice:
        with contextlib.suppress(AttributeError, OSError):  # not every system has it
            os.nice(args.nice)
    lock = book_mod.hold_build(_path(args, variant))  # before the book and its log are read: no one else saves them
    try:
        return _build(args, variant, check)
    finally:
        os.close(lock)


def _build(args: argparse.Namespace, variant: Variant, check: int) -> int:
    """`kalah book build` with the book's lock held and databases up to `check` seeds deciding easiness."""
    path, book = _open(args, variant)
    if args.from_scratch:
        book.entries.clear()
        book.forget_completions(variant)
    known = None if args.from_scratch else book_mod.load(variant)
    if known is not None:
        book.entries.update({k: e for k, e in known.entries.items() if k not in book.entries})
    plan = Plan(depth=args.depth, node_limit=args.node_limit, per_move_depth=args.per_move_depth,
                check_egdb_seeds=check, keep=args.keep)
    note = (f"{variant.text()}: depth {plan.depth}, node limit {plan.node_limit:,} "
            f"(table 2^{plan.check_tt_log2}), databases up to {check} seeds"
            + (", positions where the game's value is kept left to the board" if plan.keep else ""))
    if note not in book.notes:
        book.notes.append(note)
    stamp = (f"{egdb.rule_key(variant)} node-limit {plan.node_limit} table 2^{plan.check_tt_log2} "
             f"databases {check}")
    if args.from_scratch:
        book_mod.easy_path(path).unlink(missing_ok=True)
    easy = book_mod.EasyLog(book_mod.easy_path(path), stamp)

    status = StatusWriter(status_path(path, variant), BuildStatus(
        variant.text(), "running", os.getpid(), len(book), 0, 0, 0, 0, check, plan.node_limit, 0.0))
    report = BuildReport()

    def save(saved: Book) -> None:
        """Write the book, then the status saying so."""
        saved.save(path)
        status.write(len(saved))

    def progress(stats: BuildStats) -> None:
        """Report on stderr and in the status file (each at its own pace)."""
        report(stats)
        status.update(stats)

    def work() -> BuildStats:
        """Build the book (saving as it goes, and what is proved when interrupted)."""
        # printed here, once SIGTERM is handled: a stop at this line saves and exits 130 like any other
        print(f"book {path}: {len(book):,} positions; adding those of {note}"
              + (f"; {len(easy.known) + len(easy.kept):,} positions known to be easy" if easy.known or easy.kept
                 else ""), flush=True)
        status.write(len(book))
        builder = Builder(_engine(args, variant), book, plan, save=save, progress=progress,
                          known_easy=easy.known, on_easy=easy.add, known_kept=easy.kept, on_kept=easy.add_kept)
        state = "interrupted"
        try:
            stats = builder.run(Position.initial(variant))
            if stats.complete:
                book.record(Completion(book_mod.start_name(variant), check, plan.node_limit, plan.check_tt_log2))
                book.save(path)
            state = "complete" if stats.complete else "finished"
            return stats
        finally:
            easy.close()
            status.update(builder.stats, force=True)
            status.write(len(book), state)

    stats = run_stoppable(work, "kalah book")
    sys.stderr.write("\n")
    print(f"{stats.entries:,} positions ({stats.added:,} proved now, {stats.easy:,} left to the board, "
          f"{stats.easy_known:,} of them known, {stats.kept:,} where the game's value is kept) in "
          f"{duration(stats.seconds)}, {stats.nodes:,} nodes; "
          f"written to {path}")
    print(f"complete: every position of {variant.text()} the bot can meet is in the book or proved within "
          f"{plan.node_limit:,} nodes with the databases up to {check} seeds (noted in the book's header)"
          if stats.complete else
          "not complete: " + ("--keep leaves positions to a move keeping the game's value" if plan.keep else
                              f"answers past turn {plan.depth} (--depth) were not followed"))
    return 0


class StatusWriter:
    """The build's status file (`bots.book_status`): updated from the builder's stats, written at most once a
    `WRITE_EVERY_S` unless told."""

    def __init__(self, path: Path, status: BuildStatus) -> None:
        self.path = path
        self.status = status
        self.last = 0.0

    def update(self, stats: BuildStats, force: bool = False) -> None:
        """Take the builder's figures; write them if a second passed since the last write (or `force`)."""
        s = self.status
        s.positions, s.added, s.left_to_board = stats.entries, stats.added, stats.easy
        s.queued, s.turn = stats.queued, stats.depth
        if force or time.monotonic() - self.last >= WRITE_EVERY_S:
            self.write(s.positions)

    def write(self, positions: int, state: str | None = None) -> None:
        """Write the status now (with the book's positions, and a new state if given)."""
        self.status.positions = positions
        if state is not None:
            self.status.state = state
        self.status.write(self.path)
        self.last = time.monotonic()


def status(args: argparse.Namespace, variant: Variant) -> int:
    """`kalah book status`: the book's positions and completeness, and how far its build is (`--json`: one object)."""
    path = _path(args, variant)
    dirs = [book_mod.PACKAGE_DIR] + ([] if path.parent == book_mod.PACKAGE_DIR else [path.parent])
    found = book_mod.load(variant, dirs)
    own = Book.loads(path.read_text()) if path.is_file() else None
    complete = found.completions(variant) if found is not None else []
    state = BuildStatus.read(status_path(path, variant))
    running = builder(path)
    if state is not None and state.state == "running" and running is None:
        state.state = "stopped"  # killed: its lock went with it
    out: dict[str, Any] = {
        "variant": variant.text(), "book": str(path), "positions": len(own) if own is not None else 0,
        "positions_with_shipped": len(found) if found is not None else 0,
        "complete": [{"databases": c.databases, "node_limit": c.node_limit, "table_log2": c.table_log2}
                     for c in complete],
        "build": None if state is None else {
            "state": state.state, "pid": state.pid, "positions": state.positions, "proved_this_run": state.added,
            "left_to_board_this_run": state.left_to_board, "queued": state.queued, "turn": state.turn,
            "databases": state.databases, "node_limit": state.node_limit,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(state.updated))},
        "running": running}
    if args.json:
        print(json.dumps(out))
        return 0
    held = f"{out['positions']:,} positions in {path}" + (
        f" ({out['positions_with_shipped']:,} with the shipped book)" if found is not None and own is not found
        and out["positions_with_shipped"] != out["positions"] else "")
    if complete:
        c = complete[0]
        print(f"{variant.text()}: complete with the databases up to {c.databases} seeds (node limit "
              f"{c.node_limit:,}); {held}")
    else:
        print(f"{variant.text()}: not complete; {held}")
    if state is None:
        if complete:
            levels = complete[0].databases
            print(f"build: none recorded here, none needed: the bots play every move of it proved with the databases "
                  f"up to {levels} seeds (`{egdb.build_command(variant, levels)}`, KALAH_BOT_EGDB_SEEDS={levels})")
        else:
            print(f"build: none recorded here; `kalah book build {_flags(variant)} --egdb-seeds N` starts it")
        return 0
    ago = duration(max(0.0, time.time() - state.updated))
    line = (f"build: {state.state}" + (f" (process {running})" if running else f" (process {state.pid})"
                                       if state.state in ("stopped", "interrupted") else "")
            + f", turn {state.turn}: {state.added:,} positions proved and {state.left_to_board:,} left to the board "
            f"this run, {state.queued:,} queued; databases up to {state.databases} seeds, node limit "
            f"{state.node_limit:,}; updated {ago} ago")
    if state.state in ("stopped", "interrupted"):
        line += f"; `kalah book build {_flags(variant)} ...` with the same flags resumes it"
    print(line)
    return 0


def _flags(variant: Variant) -> str:
    """The variant flags of a Kalah(h,s) start, as `kalah book` takes them."""
    return f"-H {variant.houses} -s {variant.seeds}{capture_flag(variant)}"


def show(args: argparse.Namespace, variant: Variant) -> int:
    """`kalah book show`."""
    position = Game.from_record(variant, args.moves).position
    found = book_mod.load(variant, None if args.dir is None else [args.dir])
    entry = found.get(relative_board(position)) if found is not None else None
    if entry is None:
        print(f"not in the book ({len(found or []):,} positions for rule set {egdb.rule_key(variant)})")
        return 1
    line = entry.line(house_key(relative_board(position)))
    print(line)
    print(legend(line))
    return 0


LEGEND = ("houses: the mover's / the opponent's, each from its first house",
          "value: what the mover gains over the opponent with perfect play",
          "best house (1: the mover's first house)",
          "each house's value (.: an empty house)")
"""What each field of a book line is."""


def legend(line: str) -> str:
    """Comment lines (`#`, as in a book file) naming each field of a book line."""
    fields = line.split()
    width = max(map(len, fields))
    return "\n".join(f"# {field:<{width}}  {text}" for field, text in zip(fields, LEGEND, strict=False))


def verify(args: argparse.Namespace, variant: Variant) -> int:
    """`kalah book verify`: exit 1 if any entry's value or best move is not what a proof finds."""
    found = book_mod.load(variant, None if args.dir is None else [args.dir])
    if found is None:
        print(f"no book for rule set {egdb.rule_key(variant)}", file=sys.stderr)
        return 1
    keys = [key for key in found.entries if sum(key) <= variant.total_seeds]
    if args.sample:
        keys = random.Random(args.seed).sample(keys, min(args.sample, len(keys)))
    h = variant.houses

    def work() -> int:
        """Prove every chosen entry again; the number of wrong ones."""
        engine = _engine(args, variant)
        wrong = 0
        for key in keys:
            entry = found.entries[key]
            pit, value = engine.prove((*key[:h], 0, *key[h:], 0))
            if (pit, value) != (entry.pit, entry.value):
                wrong += 1
                print(f"wrong: {entry.line(key)} (proved {value:+d}, best house {pit + 1})", flush=True)
        return wrong

    wrong = run_stoppable(work, "kalah book")
    print(f"{len(keys) - wrong:,} of {len(keys):,} entries proved again")
    return 1 if wrong else 0


def run(args: argparse.Namespace) -> int:
    """Run `kalah book ACTION`; exit 2 on bad input."""
    try:
        variant = variant_from_args(args)
    except KalahError as exc:
        print(f"kalah book: {exc}", file=sys.stderr)
        return 2
    if not egdb.applies(variant):
        print("kalah book: clockwise, relay and majority-end variants have no books", file=sys.stderr)
        return 2
    if args.book_command in ("build", "verify") and not 0 <= args.egdb_seeds <= 40:
        print("kalah book: --egdb-seeds must be 0..40", file=sys.stderr)
        return 2
    try:
        return {"build": build, "status": status, "show": show, "verify": verify}[args.book_command](args, variant)
    except (KalahError, BookFormatError, BookBusyError) as exc:
        print(f"kalah book: {exc}", file=sys.stderr)
        return 2

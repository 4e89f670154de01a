"""Engines lent to bots one search at a time: made on first need, shared databases, bounded in bytes.

A bot borrows an engine for one decision (`with engines.borrow(...) as engine:`); an engine
is never searched by two threads at once, so bots serving several matches get one engine per
search running at the same time. Idle engines are kept for the next move (their tables hold
what the last search learnt) and dropped least recently used first once the estimated memory
of all of them passes `max_bytes`: full transposition tables plus the endgame database levels
read into this process (`KALAH_EGDB_READ=1`), which engines of one rule set share and which are
counted once. Mapped levels (the default) are not counted against it: their pages are the page
cache's, shared by every process and given back by the kernel under pressure, and dropping them
would only make the next move open them anew and search without them meanwhile.

Databases are only opened, never built (`egdb.load(build=False)`: files mapped read-only, shared
with every process on the machine): a bot plays without the levels that are missing on disk,
and without a damaged level and those above it (logged as a warning). Large sets are opened in
a background thread (`preload` starts it ahead): mapping takes milliseconds, but reading them
(`KALAH_EGDB_READ=1`) takes seconds, and no move waits for that: engines lent meanwhile search
without them and take them up once open. Books (`bots.book`) are read once per rule set and shared.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots import book as book_mod
from bots import egdb
from bots.book import Book
from bots.core import SearchCore, implementation
from bots.pysearch import level_size
from bots.solver import Engine
from protocol.variant import Variant

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 3 << 30
"""Default bound: both Kalah(6,4) rule sets' 24-seed databases read in (1.2 GiB each) and a few dozen tables."""
DEFAULT_MAX_TABLE_BYTES = 192 << 20
"""Default bound on the engines' transposition tables alone (eight 24 MiB tables): many different
bots each bring a table, while databases are shared by rule set and built only by the operator."""
HOSTED_THREADS = min(os.cpu_count() or 1, 4)
"""Threads of each proof a hosted bot makes (`Engines(threads=...)` in `server.core.hosted`): the machine's
cores, at most 4. A move's proof on two cores keeps the game's value in Kalah(6,5) positions one core does not
close in a second."""
SYNC_LOAD_BYTES = 64 << 20
"""Database levels larger than this in all are read in a background thread, not during a move."""


@dataclass(frozen=True)
class EngineKey:
    """What makes engines interchangeable: the bot that owns them, the variant, the table and database sizes."""

    owner: str
    variant: Variant
    tt_log2: int
    egdb_seeds: int


def plain(variant: Variant) -> Variant:
    """The variant without its clock: engines do not depend on it."""
    return variant.with_options(time_control=None) if variant.time_control is not None else variant


def level_bytes(levels: list[Any]) -> int:
    """Bytes of loaded database levels."""
    return sum(len(level) for level in levels)


class Engines:
    """A pool of engines by `EngineKey`, lent one search at a time, trimmed to `max_bytes` (estimated)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, egdb_dir: Path | None = None, impl: str = "c",
                 book_dirs: list[Path] | None = None, max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES,
                 threads: int = 1) -> None:
        self.max_bytes = max_bytes
        self.threads = threads
        """Threads of each engine's exact searches (the perfect bot's proofs; its deepening takes one)."""
        self.max_table_bytes = max_table_bytes
        self.egdb_dir = egdb_dir
        self.impl = impl
        self.book_dirs = book_dirs
        """Where books are read from (None: the package's, then `$KALAH_BOOK_DIR`)."""
        self._books: dict[str, Book | None] = {}
        self._loading: dict[tuple[str, int], threading.Event] = {}
        self._lock = threading.Lock()
        self._published = threading.Condition(self._lock)
        self._idle: OrderedDict[int, tuple[EngineKey, Engine]] = OrderedDict()  # least recently used first
        self._busy: dict[int, Engine] = {}
        self._levels: dict[tuple[str, int], tuple[list[Any], int]] = {}  # (rules, seeds) -> (levels, engines)
        self._variants: dict[tuple[str, int], Variant] = {}  # (rules, seeds) -> a variant of those rules
        self.made = 0

    def nbytes(self) -> int:
        """Estimated memory of every engine, idle or lent: full tables plus each database level once."""
        with self._lock:
            return self._table_bytes() + sum(level_bytes(lv) for lv, _ in self._levels.values())

    def _bounded_bytes(self) -> int:
        """What `max_bytes` bounds (the lock is held): the tables, and the levels if read into this process.

        Mapped levels are left out: a rule set's 28-seed Kalah(6,5) levels (5.3 GiB) counted against the 3 GiB
        default were dropped after every move, and each move then searched on a new engine without them."""
        levels = sum(level_bytes(lv) for lv, _ in self._levels.values()) if egdb.read_mode() else 0
        return self._table_bytes() + levels

    def _table_bytes(self) -> int:
        """The engines' transposition tables, in bytes (the lock is held)."""
        engines = [e for _, e in self._idle.values()] + list(self._busy.values())
        return sum(e.table_bytes() for e in engines)

    def level_bytes(self) -> int:
        """Bytes of the database levels loaded (each counted once)."""
        with self._lock:
            return sum(level_bytes(lv) for lv, _ in self._levels.values())

    def __len__(self) -> int:
        """Engines kept, idle or lent."""
        with self._lock:
            return len(self._idle) + len(self._busy)

    @contextmanager
    def borrow(self, owner: str, variant: Variant, tt_log2: int, egdb_seeds: int = 0) -> Iterator[Engine]:
        """An engine for `owner`'s search of `variant`, no other thread's while lent."""
        key = EngineKey(owner, plain(variant), tt_log2, egdb_seeds)
        engine = self._take(key) or self._make(key)
        try:
            yield engine
        finally:
            with self._lock:
                del self._busy[id(engine)]
                self._idle[id(engine)] = (key, engine)
                self._trim()

    def _take(self, key: EngineKey) -> Engine | None:
        """The most recently used idle engine for `key`, now lent; None if there is none."""
        with self._lock:
            for ident, (k, engine) in reversed(self._idle.items()):
                if k == key:
                    del self._idle[ident]
                    self._busy[ident] = engine
                    break
            else:
                return None
        self._upgrade(key, engine)
        return engine

    def _make(self, key: EngineKey) -> Engine:
        """A new engine for `key`, lent, sharing the database levels of its rule set."""
        share = self._share_levels(key)
        engine = Engine(key.variant, impl=self.impl, tt_log2=key.tt_log2, workers=self.threads, levels=share)
        with self._lock:
            self._busy[id(engine)] = engine
            self.made += 1
            self._trim()
        return engine

    def _levels_key(self, key: EngineKey) -> tuple[str, int] | None:
        """Which shared levels an engine uses (None: no databases)."""
        seeds = min(key.egdb_seeds, key.variant.total_seeds)
        if seeds <= 0 or not egdb.applies(key.variant):
            return None
        return egdb.rule_key(key.variant), seeds

    def _share_levels(self, key: EngineKey) -> list[Any]:
        """The levels on disk for `key` (loaded once per rule set and seed count), counted as used once more.

        Levels that take long to read (over `SYNC_LOAD_BYTES`) are read in a background thread:
        until they are in, engines get none and take them up when next lent (`_upgrade`).
        """
        lk = self._levels_key(key)
        if lk is None:
            return []
        with self._lock:
            self._variants[lk] = key.variant
            held = self._levels.get(lk)
            if held is not None:
                self._levels[lk] = (held[0], held[1] + 1)
                return held[0]
            loading = lk in self._loading
        if not loading:
            present = sum(lv.bytes for lv in itertools.takewhile(
                lambda lv: lv.present, egdb.plan(key.variant, lk[1], self.egdb_dir)))
            if present > SYNC_LOAD_BYTES:
                self._load_later(key, lk)
                return []
        loaded = [] if loading else self._load(key, lk)
        if self._ahead(lk, level_bytes(loaded)):
            egdb.warm(loaded, self._core(key))  # at most SYNC_LOAD_BYTES: milliseconds, even from the disk
        with self._lock:
            held = self._levels.get(lk)
            if held is None and loading:
                return []
            levels = held[0] if held is not None else loaded
            self._levels[lk] = (levels, (held[1] if held is not None else 0) + 1)
            return levels

    def _load(self, key: EngineKey, lk: tuple[str, int], have: list[Any] | None = None) -> list[Any]:
        """Read the levels on disk for `key` (never building one), after those in `have`."""
        core = self._core(key)
        try:
            return egdb.load(key.variant, lk[1], core, self.egdb_dir, build=False, have=have)
        except egdb.LevelFileError as exc:
            log.warning("%s; the bots use the levels below it", exc)
            if exc.k <= 1:
                return []
            return egdb.load(key.variant, exc.k - 1, core, self.egdb_dir, build=False, have=have)

    @staticmethod
    def _ahead(lk: tuple[str, int], whole: int) -> bool:
        """Whether a rule set's mapped levels (`whole` bytes) are to be read into memory once opened (`egdb.warm`):
        not where that takes more than half the memory available (logged: the first searches then wait for the
        disk), nor where they were read in already (`KALAH_EGDB_READ=1`)."""
        if egdb.read_mode() or not whole:
            return False
        if egdb.worth_warming(whole):
            return True
        log.warning("endgame databases %s up to %d seeds (%.1f GiB) not read into memory ahead: more than half the "
                    "memory available; the bots' first searches will wait for the disk", lk[0], lk[1], whole / 2**30)
        return False

    def _core(self, key: EngineKey) -> SearchCore[Any]:
        """The search core of `key`'s engines (the Python twin for relay variants)."""
        return implementation("py" if key.variant.relay else self.impl)

    def _load_later(self, key: EngineKey, lk: tuple[str, int]) -> None:
        """Start reading large levels in a background thread; they are shared as they come.

        The smaller levels (up to a quarter of the bytes) are published first, so that moves
        soon get most of the databases' help; the whole set follows. Each stage, once published, is
        read through (`egdb.warm`): on a machine whose page cache does not hold the files (after a
        reboot, or under memory pressure) the first searches would otherwise wait for the disk at
        every probe, and a one-second move took two. The loading ends (`preload` returns) when all
        levels are in memory.
        """
        with self._lock:
            self._variants[lk] = key.variant  # `reopen` opens them again after a build
            if lk in self._loading:
                return
            done = threading.Event()
            self._loading[lk] = done
        sizes = list(itertools.accumulate(level_size(key.variant.houses, k) for k in range(1, lk[1] + 1)))
        first = sum(1 for size in sizes if size <= sizes[-1] // 4)
        stages = [first, lk[1]] if 0 < first < lk[1] else [lk[1]]

        def publish(levels: list[Any]) -> None:
            """Share these levels from now on (engines lent meanwhile take them up when next lent).

            None on disk is published too (as no levels), so that later moves do not look again.
            """
            with self._lock:
                held = self._levels.get(lk)
                if levels or held is None:
                    self._levels[lk] = (levels, held[1] if held is not None else 0)
                self._published.notify_all()

        def work() -> None:
            """Read the levels stage by stage and publish each."""
            levels: list[Any] = []
            ahead = self._ahead(lk, sum(lv.bytes for lv in egdb.plan(key.variant, lk[1], self.egdb_dir)))
            try:
                for seeds in stages:
                    warmed = len(levels)
                    levels = self._load(key, (lk[0], seeds), levels)
                    publish(levels)
                    if ahead:
                        egdb.warm(levels[warmed:], self._core(key))
            finally:
                with self._lock:
                    del self._loading[lk]
                    self._published.notify_all()
                done.set()

        threading.Thread(target=work, name=f"egdb-load-{lk[0]}", daemon=True).start()

    def preload(self, variant: Variant, egdb_seeds: int, timeout: float | None = None) -> bool:
        """Open a rule set's levels on disk ahead of its first search and read them into memory; whether all are in
        within `timeout`."""
        key = EngineKey("", plain(variant), 4, egdb_seeds)
        lk = self._levels_key(key)
        if lk is None:
            return True
        with self._lock:
            if lk in self._levels and lk not in self._loading:
                return True
        self._load_later(key, lk)
        with self._lock:
            done = self._loading.get(lk)
        if done is not None:
            done.wait(timeout)
        with self._lock:
            return lk in self._levels and lk not in self._loading

    def ready(self, variant: Variant, egdb_seeds: int, timeout: float) -> bool:
        """Wait up to `timeout` while a rule set's levels are being read and none is shared yet; whether some are."""
        lk = self._levels_key(EngineKey("", plain(variant), 4, egdb_seeds))
        if lk is None:
            return False
        with self._lock:
            return self._published.wait_for(lambda: lk in self._levels or lk not in self._loading,
                                            max(0.0, timeout)) and bool(self._levels.get(lk, ([], 0))[0])

    def _upgrade(self, key: EngineKey, engine: Engine) -> None:
        """Give an engine made while its levels were being read the levels read since (and a new table)."""
        lk = self._levels_key(key)
        if lk is None:
            return
        with self._lock:
            held = self._levels.get(lk)
            if held is None or not held[0] or held[0] is engine.levels:
                return
            if not engine.levels:
                self._levels[lk] = (held[0], held[1] + 1)
        engine.use_levels(held[0])

    def reopen(self) -> None:
        """Open again the levels on disk of the rule sets in use (after a build added some): engines lent
        from now on search with them."""
        with self._lock:
            held = [(lk, variant) for lk, variant in self._variants.items() if lk not in self._loading]
        for lk, variant in held:
            levels = self._load(EngineKey("", variant, 4, lk[1]), lk)
            with self._lock:
                before = self._levels.get(lk)
                if before is not None and len(levels) > len(before[0]):
                    self._levels[lk] = (levels, before[1])

    def book(self, variant: Variant) -> Book | None:
        """The book of a variant's rule set (read once; None if there is none)."""
        rules = egdb.rule_key(variant) if egdb.applies(variant) else ""
        with self._lock:
            if rules in self._books:
                return self._books[rules]
        found = book_mod.load(variant, self.book_dirs) if rules else None
        with self._lock:
            return self._books.setdefault(rules, found)

    def _trim(self) -> None:
        """Drop idle engines, least recently used first, until the bounded bytes and the tables fit (the lock is
        held)."""
        while self._idle and (self._bounded_bytes() > self.max_bytes or self._table_bytes() > self.max_table_bytes):
            _, (key, engine) = self._idle.popitem(last=False)
            lk = self._levels_key(key)
            if lk is not None and lk in self._levels and engine.levels:
                levels, users = self._levels[lk]
                if users <= 1:
                    del self._levels[lk]
                else:
                    self._levels[lk] = (levels, users - 1)

"""Engines lent to bots one search at a time: made on first need, shared databases, bounded in bytes.

A bot borrows an engine for one decision (`with engines.borrow(...) as engine:`); an engine
is never searched by two threads at once, so bots serving several matches get one engine per
search running at the same time. Idle engines are kept for the next move (their tables hold
what the last search learnt) and dropped least recently used first once the estimated memory
of all of them passes `max_bytes`: full transposition tables plus the endgame database levels,
which engines of one rule set share and which are counted once.

Databases are only loaded, never built (`egdb.load(build=False)`): a bot plays without the
levels that are missing on disk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots import egdb
from bots.core import implementation
from bots.solver import Engine
from protocol.variant import Variant

DEFAULT_MAX_BYTES = 512 << 20


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

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, egdb_dir: Path | None = None, impl: str = "c") -> None:
        self.max_bytes = max_bytes
        self.egdb_dir = egdb_dir
        self.impl = impl
        self._lock = threading.Lock()
        self._idle: OrderedDict[int, tuple[EngineKey, Engine]] = OrderedDict()  # least recently used first
        self._busy: dict[int, Engine] = {}
        self._levels: dict[tuple[str, int], tuple[list[Any], int]] = {}  # (rules, seeds) -> (levels, engines)
        self.made = 0

    def nbytes(self) -> int:
        """Estimated memory of every engine, idle or lent: full tables plus each database level once."""
        with self._lock:
            return self._nbytes()

    def _nbytes(self) -> int:
        """`nbytes` with the lock held."""
        engines = [e for _, e in self._idle.values()] + list(self._busy.values())
        return sum(e.table_bytes() for e in engines) + sum(level_bytes(lv) for lv, _ in self._levels.values())

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
                    return engine
        return None

    def _make(self, key: EngineKey) -> Engine:
        """A new engine for `key`, lent, sharing the database levels of its rule set."""
        share = self._share_levels(key)
        engine = Engine(key.variant, impl=self.impl, tt_log2=key.tt_log2, workers=1, levels=share)
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
        """The levels on disk for `key` (loaded once per rule set and seed count), counted as used once more."""
        lk = self._levels_key(key)
        if lk is None:
            return []
        with self._lock:
            held = self._levels.get(lk)
            if held is not None:
                self._levels[lk] = (held[0], held[1] + 1)
                return held[0]
        core = implementation("py" if key.variant.relay else self.impl)
        loaded = egdb.load(key.variant, lk[1], core, self.egdb_dir, build=False)
        with self._lock:
            held = self._levels.get(lk)
            levels = held[0] if held is not None else loaded
            self._levels[lk] = (levels, (held[1] if held is not None else 0) + 1)
            return levels

    def _trim(self) -> None:
        """Drop idle engines, least recently used first, until the estimate fits (the lock is held)."""
        while self._idle and self._nbytes() > self.max_bytes:
            _, (key, _engine) = self._idle.popitem(last=False)
            lk = self._levels_key(key)
            if lk is not None and lk in self._levels:
                levels, users = self._levels[lk]
                if users <= 1:
                    del self._levels[lk]
                else:
                    self._levels[lk] = (levels, users - 1)

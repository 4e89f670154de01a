"""Endgame database levels in the former format v1 (one byte a position), built as they were before format v2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bots._search as csearch
from bots import egdb
from protocol import Variant, compile_variant


def v1_levels(variant: Variant, seeds: int) -> list[bytes]:
    """Levels 0..seeds in format v1 (one byte a rank), built as before format v2, each on the v1 levels below."""
    rules = csearch.Rules(compile_variant(variant))
    levels: list[Any] = [b""]
    for k in range(1, seeds + 1):
        levels.append(bytes(egdb._build(csearch, rules, k, csearch.level_size(variant.houses, k), levels, None)))
    return levels


def write_v1(directory: Path, variant: Variant, levels: list[bytes]) -> None:
    """Write v1 level files of levels 1.. into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for k in range(1, len(levels)):
        egdb.level_path(directory, variant, k, egdb.OLD_FORMAT).write_bytes(levels[k])

"""Converting a rule set's endgame database levels from format v1 to v2, level by level, losing nothing when
stopped: the v1 file goes only after its v2 file decodes to the same values."""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bots import egdb, pylevels, pysearch
from protocol.variant import Variant

if TYPE_CHECKING:
    from bots.core import SearchCore


@dataclass(frozen=True)
class Converted:
    """One level converted from format v1 to v2: its seed count, bytes before and after, exceptions, positions."""

    k: int
    v1_bytes: int
    v2_bytes: int
    exceptions: int
    positions: int


def convert(variant: Variant, impl: SearchCore[Any], directory: Path | None = None,
            report: Callable[[Converted], None] | None = None) -> list[Converted]:
    """Convert every v1 level of a rule set in `directory` to format v2, level by level.

    Each level is encoded, written to a temporary file and renamed into place, then opened, checked and decoded
    whole: only when every value equals the v1 file's is the v1 file deleted. An interrupted conversion loses
    nothing and the next run goes on (a v2 file already renamed into place is checked again before its v1 file
    goes). A v1 file that is not a level raises `egdb.LevelFileError` and is kept.
    """
    directory = directory or egdb.cache_dir()
    h = variant.houses
    done = []
    for k in range(1, 121):
        old = egdb.level_path(directory, variant, k, egdb.OLD_FORMAT)
        if not old.exists():
            continue
        new = egdb.level_path(directory, variant, k)
        positions = pysearch.level_size(h, k)
        opened = egdb.map_file(old)
        if opened is None:
            continue
        fh, v1 = opened
        with fh, contextlib.closing(v1):
            if len(v1) != positions:
                raise egdb.LevelFileError(old, k, f"{len(v1):,} bytes where level {k} has {positions:,}")
            egdb.check_v1(v1, k, old)
            check = _open_checked(directory, variant, k, new)
            if check is None:
                egdb.write_level(new, impl, variant, k, v1)
                check = _open_checked(directory, variant, k, new)
            if check is None:
                raise egdb.LevelFileError(new, k, "not found after it was written")
            with contextlib.closing(check):
                out = egdb.scratch(positions)
                try:
                    impl.decode_level(h, k, check, out)
                    same = memoryview(out) == memoryview(v1)
                finally:
                    if isinstance(out, mmap.mmap):
                        out.close()
                size = len(check)
                exceptions = pylevels.FIELDS.unpack_from(check)[11]
            if not same:
                new.unlink()
                raise egdb.LevelFileError(new, k, "its values differ from the v1 file's (kept)")
        old.unlink()
        item = Converted(k, positions, size, exceptions, positions)
        done.append(item)
        if report is not None:
            report(item)
    return done


def _open_checked(directory: Path, variant: Variant, k: int, path: Path) -> mmap.mmap | None:
    """The v2 file of level k mapped and checked; None when there is none or it is not a complete level (a damaged
    one is then deleted, to be written again)."""
    if not path.exists():
        return None
    try:
        return egdb.open_level(directory, variant, k, False)
    except egdb.LevelFileError:
        path.unlink(missing_ok=True)
        return None

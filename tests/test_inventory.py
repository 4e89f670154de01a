"""What a server's bots have (`bots.inventory`): the report, and the small database builds started in the background."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bots import egdb, inventory
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

"""The server's sweep of `guards` (`server.front.guard_sweep`): lapsed claims go at start and then periodically,
live ones and those kept for good stay."""

from __future__ import annotations

import time
from pathlib import Path

from server.storage import open_storage
from server.storage.writer import RACE_S, op_guard, race_claim
from tests.conftest import Serve
from tests.helpers.wire import eventually

CLAIMS = "SELECT key FROM guards WHERE key NOT LIKE 'kalah:%'"
"""The claims stored (not the probe that checks the file can be written)."""


async def test_the_server_sweeps_lapsed_claims_at_start_and_then_periodically(serve: Serve, tmp_path: Path) -> None:
    """Stored lapsed and live claims: at start only the lapsed go; a lease that lapses while the server runs goes at
    a later sweep; live claims and claims kept for good stay throughout."""
    db = tmp_path / "arena.sqlite3"
    now = time.time()
    storage = await open_storage(db)
    await storage.write([op_guard("review:lapsed", now - 1), op_guard("redo:lapsed", now - 600),
                         race_claim("code:old", now - RACE_S - 1), race_claim("passkey-count:ab:2", now - RACE_S - 5),
                         op_guard("review:live", now + 600), race_claim("code:new", now), op_guard("m:g1:3"),
                         op_guard("e:t1:2")])
    await storage.close()
    live = {"review:live", "code:new", "m:g1:3", "e:t1:2"}
    arena = await serve(db, guard_sweep_s=0.1)

    async def stored() -> set[str]:
        """The claims stored now."""
        return {str(r[0]) for r in await arena.arena.storage.fetch_rows(CLAIMS)}

    await eventually(lambda: arena.sweep.sweeps >= 1, timeout=10, what="the sweep at start")
    assert await stored() == live
    await arena.arena.storage.write([op_guard("review:soon", time.time() + 0.5)])
    assert "review:soon" in await stored()
    async def soon_gone() -> bool:
        """The lease that lapsed while the server ran has been swept."""
        return "review:soon" not in await stored()

    await eventually(soon_gone, timeout=10, what="the lapsed lease swept")
    assert await stored() == live

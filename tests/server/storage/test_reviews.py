"""The stored reviews (`reviews`, schema version 15) on both backends: written once, read back by the server's
reads and by the command line's offline reads, and found missing for games that finished lately."""

from __future__ import annotations

import time
from pathlib import Path

from protocol import Variant
from server.storage import open_storage, read_offline
from server.storage.reviews import REVIEW, UNREVIEWED, op_review, review_claim
from server.storage.writer import op_guard
from tests.helpers.stored_games import store_finished

SMALL = Variant.parse("kalah(2,3)")


async def test_a_review_is_stored_once_and_read_back_online_and_offline(any_db: str | Path) -> None:
    """The first review stored for a match stays (a second one is ignored); the server's read and the offline read
    return it; the unreviewed games are those with neither a review nor a claim."""
    await store_finished(any_db, {"g1": (SMALL, "1 5 2 5"), "g2": (SMALL, "1 5 2 5"), "g3": (SMALL, "1 5 2 5")})
    storage = await open_storage(any_db)
    try:
        since = time.time() - 60
        assert [r[0] for r in await storage.fetch_rows(UNREVIEWED, since, 10)] == ["g1", "g2", "g3"]
        await storage.write([op_review("g1", '{"first": true}', True)])
        await storage.write([op_review("g1", '{"second": true}', False)])
        await storage.write([op_guard(review_claim("g2"))])
        assert await storage.fetch_rows(REVIEW, "g1") == [('{"first": true}',)]
        assert await storage.fetch_review("g1") == '{"first": true}'
        assert await storage.fetch_review("g2") is None
        assert [r[0] for r in await storage.fetch_rows(UNREVIEWED, since, 10)] == ["g3"]
        assert await storage.fetch_rows(UNREVIEWED, time.time() + 60, 10) == []
    finally:
        await storage.close()
    assert read_offline(any_db, lambda db: db.fetch_review("g1")) == '{"first": true}'

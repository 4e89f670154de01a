"""The stored reviews (`reviews`, schema versions 15 and 20) on both backends: written once, read back by the server's
reads and by the command line's offline reads, found missing for games that finished lately, claimed for a time, and
made again while they hold estimates."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from protocol import Variant
from protocol.errors import ConflictError
from server.storage import open_storage, read_offline
from server.storage.reviews import ESTIMATES, REVIEW, UNREVIEWED, op_review, op_review_redone, redo_claim, review_claim
from server.storage.writer import op_guard, op_lease
from tests.helpers.stored_games import store_finished

SMALL = Variant.parse("kalah(2,3)")


async def test_a_review_is_stored_once_and_read_back_online_and_offline(any_db: str | Path) -> None:
    """The first review stored for a match stays (a second one is ignored); the server's read and the offline read
    return it; the unreviewed games are those with neither a review nor a claim."""
    await store_finished(any_db, {"g1": (SMALL, "1 5 2 5"), "g2": (SMALL, "1 5 2 5"), "g3": (SMALL, "1 5 2 5")})
    storage = await open_storage(any_db)
    try:
        since = time.time() - 60
        assert [r[0] for r in await storage.fetch_rows(UNREVIEWED, since, time.time(), 10)] == ["g1", "g2", "g3"]
        await storage.write([op_review("g1", '{"first": true}', True)])
        await storage.write([op_review("g1", '{"second": true}', False)])
        await storage.write([op_guard(review_claim("g2"))])
        assert await storage.fetch_rows(REVIEW, "g1") == [('{"first": true}',)]
        assert await storage.fetch_review("g1") == '{"first": true}'
        assert await storage.fetch_review("g2") is None
        assert [r[0] for r in await storage.fetch_rows(UNREVIEWED, since, time.time(), 10)] == ["g3"]
        assert await storage.fetch_rows(UNREVIEWED, time.time() + 60, time.time(), 10) == []
    finally:
        await storage.close()
    assert read_offline(any_db, lambda db: db.fetch_review("g1")) == '{"first": true}'


async def test_a_claim_holds_for_its_lease_and_is_then_taken_over(any_db: str | Path) -> None:
    """A review's claim hides its game from the unreviewed and refuses a second claim until it lapses; then the game
    is unreviewed again and one claim takes it over (the next one is refused)."""
    await store_finished(any_db, {"g1": (SMALL, "1 5 2 5")})
    storage = await open_storage(any_db)
    try:
        since, now = time.time() - 60, time.time()
        await storage.write(op_lease(review_claim("g1"), 30, now))
        with pytest.raises(ConflictError):
            await storage.write(op_lease(review_claim("g1"), 30, now + 29))
        assert await storage.fetch_rows(UNREVIEWED, since, now + 29, 10) == []
        assert [r[0] for r in await storage.fetch_rows(UNREVIEWED, since, now + 31, 10)] == ["g1"]
        await storage.write(op_lease(review_claim("g1"), 30, now + 31))
        with pytest.raises(ConflictError):
            await storage.write(op_lease(review_claim("g1"), 30, now + 32))
        await storage.write([op_guard("kept-for-good")])
        with pytest.raises(ConflictError):
            await storage.write(op_lease("kept-for-good", 30, now + 10**9))
    finally:
        await storage.close()


async def test_a_review_with_estimates_is_made_again_a_bounded_number_of_times(any_db: str | Path) -> None:
    """Reviews holding estimates are listed for a redo until made again `redos` times; a better one replaces the
    stored review (a proved one leaves the list), a worse one is only counted, and a stale count changes nothing."""
    await store_finished(any_db, {"g1": (SMALL, "1 5 2 5"), "g2": (SMALL, "1 5 2 5"), "g3": (SMALL, "1 5 2 5")})
    storage = await open_storage(any_db)
    try:
        await storage.write([op_review("g1", "estimate 1", False), op_review("g2", "estimate 2", False),
                             op_review("g3", "proved", True)])
        now = time.time()
        assert sorted(r[0] for r in await storage.fetch_rows(ESTIMATES, 2, now, 10)) == ["g1", "g2"]
        await storage.write([op_review_redone("g1", 0, "worse", False, False)])
        await storage.write([op_review_redone("g1", 0, "stale", True, True)])  # counted 0 no more: nothing
        await storage.write([op_review_redone("g2", 0, "proved 2", True, True)])
        assert await storage.fetch_rows(REVIEW, "g1") == [("estimate 1",)]
        assert await storage.fetch_rows(REVIEW, "g2") == [("proved 2",)]
        assert [tuple(r) for r in await storage.fetch_rows(ESTIMATES, 2, now, 10)] == [("g1", 1)]
        await storage.write(op_lease(redo_claim("g1"), 30, now))
        assert await storage.fetch_rows(ESTIMATES, 2, now, 10) == []
        await storage.write([op_review_redone("g1", 1, "better", False, True)])
        assert await storage.fetch_rows(REVIEW, "g1") == [("better",)]
        assert await storage.fetch_rows(ESTIMATES, 2, now + 31, 10) == []  # made again twice: left
    finally:
        await storage.close()

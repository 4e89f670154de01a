"""Game reviews in the database (`reviews`): one row per reviewed match, its review as the wire's JSON.

One SQL for both backends (`?` placeholders; PostgreSQL numbers them). A review is written once
(`ON CONFLICT DO NOTHING`: the first stored wins when two nodes review the same game) and read
back by every node and by the command line.
"""

from __future__ import annotations

import time

from server.storage.ops import Op, OpKind

REVIEW_SQL: dict[OpKind, str] = {
    OpKind.REVIEW: "INSERT INTO reviews (match_id, review, exact, at) VALUES (?, ?, ?, ?)"
                   " ON CONFLICT (match_id) DO NOTHING",
}
"""The statement of the review `Op` kind."""

REVIEW = "SELECT review FROM reviews WHERE match_id = ?"
"""The stored review of a match (its wire JSON), if any."""
UNREVIEWED = ("SELECT m.id FROM matches m WHERE m.status = 'finished' AND m.finished_at > ?"
              " AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.match_id = m.id)"
              " AND NOT EXISTS (SELECT 1 FROM guards g WHERE g.key = 'review:' || m.id)"
              " ORDER BY m.finished_at LIMIT ?")
"""Matches finished since a time that no review is stored or claimed for, the oldest first."""


def op_review(match_id: str, text: str, exact: bool) -> Op:
    """Store the review of a match (its `game_review` JSON), unless one is stored already."""
    return (OpKind.REVIEW, (match_id, text, exact, time.time()))


def review_claim(match_id: str) -> str:
    """The `guards` key a node claims before it reviews a finished match by itself."""
    return f"review:{match_id}"

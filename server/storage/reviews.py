"""Game reviews in the database (`reviews`): one row per reviewed match, its review as the wire's JSON.

One SQL for both backends (`?` placeholders; PostgreSQL numbers them). A review is written once
(`ON CONFLICT DO NOTHING`: the first stored wins when two nodes review the same game) and read
back by every node and by the command line; a review holding estimates may be made again (`redone` times), and
the new one replaces it if it proves no fewer plies.
"""

from __future__ import annotations

import time

from server.storage.ops import Op, OpKind

REVIEW_SQL: dict[OpKind, str] = {
    OpKind.REVIEW: "INSERT INTO reviews (match_id, review, exact, at) VALUES (?, ?, ?, ?)"
                   " ON CONFLICT (match_id) DO NOTHING",
    OpKind.REVIEW_REDONE: "UPDATE reviews SET review = CASE WHEN ? THEN ? ELSE review END,"
                          " exact = CASE WHEN ? THEN ? ELSE exact END, at = ?, redone = redone + 1"
                          " WHERE match_id = ? AND redone = ? AND NOT exact",
}
"""The statements of the review `Op` kinds."""

REVIEW = "SELECT review FROM reviews WHERE match_id = ?"
"""The stored review of a match (its wire JSON), if any."""
UNREVIEWED = ("SELECT m.id FROM matches m WHERE m.status = 'finished' AND m.finished_at > ?"
              " AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.match_id = m.id)"
              " AND NOT EXISTS (SELECT 1 FROM guards g WHERE g.key = 'review:' || m.id"
              " AND (g.expires_at IS NULL OR g.expires_at > ?))"
              " ORDER BY m.finished_at LIMIT ?")
"""Matches finished since a time that no review is stored for, nor claimed by a claim holding at a time, the oldest
first."""
ESTIMATES = ("SELECT r.match_id, r.redone FROM reviews r WHERE NOT r.exact AND r.redone < ?"
             " AND NOT EXISTS (SELECT 1 FROM guards g WHERE g.key = 'redo:' || r.match_id"
             " AND (g.expires_at IS NULL OR g.expires_at > ?))"
             " ORDER BY r.redone, r.at DESC LIMIT ?")
"""Stored reviews with estimates, made again fewer than a number of times and not claimed for a redo by a claim
holding at a time: the least redone first, then the newest."""


def op_review(match_id: str, text: str, exact: bool) -> Op:
    """Store the review of a match (its `game_review` JSON), unless one is stored already."""
    return (OpKind.REVIEW, (match_id, text, exact, time.time()))


def op_review_redone(match_id: str, redone: int, text: str, exact: bool, better: bool) -> Op:
    """Count one more making of a stored review with estimates (made `redone` times before), and store the new one
    (its JSON, `exact`) if `better` (no fewer proved plies); nothing if it was redone or proved meanwhile."""
    return (OpKind.REVIEW_REDONE, (better, text, better, exact, time.time(), match_id, redone))


def review_claim(match_id: str) -> str:
    """The `guards` key a node claims (for `REVIEW_LEASE_S`) before it reviews a finished match by itself."""
    return f"review:{match_id}"


def redo_claim(match_id: str) -> str:
    """The `guards` key a node claims before it makes again a stored review with estimates."""
    return f"redo:{match_id}"

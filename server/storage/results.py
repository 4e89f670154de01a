"""Reading the results of rated games back, for the standings (plain sqlite3, off the event loop)."""

from __future__ import annotations

import asyncio
from contextlib import closing
from pathlib import Path

from protocol.outcome import seat_score
from server.storage.games import _connect

_RESULTS = """
SELECT m.seat0, m.seat1, m.winner_seat, p0.name, p1.name
FROM matches m JOIN players p0 ON p0.id = m.seat0 JOIN players p1 ON p1.id = m.seat1
WHERE m.status = 'finished' AND m.rated = 1
ORDER BY m.finished_at, m.id
"""


def rated_results(db_path: str | Path) -> list[tuple[str, str, float, str, str]]:
    """Every finished rated game in order: (seat 0 id, seat 1 id, seat 0's score, names...)."""
    with closing(_connect(db_path)) as db:
        rows = db.execute(_RESULTS).fetchall()
    out = []
    for seat0, seat1, winner, name0, name1 in rows:
        score = seat_score(None if winner is None else int(winner))
        out.append((str(seat0), str(seat1), score, str(name0), str(name1)))
    return out


async def arated_results(db_path: str | Path) -> list[tuple[str, str, float, str, str]]:
    """`rated_results` off the event loop."""
    return await asyncio.to_thread(rated_results, db_path)

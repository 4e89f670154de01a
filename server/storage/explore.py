"""The opening explorer's index (`explore`): for each position of each finished game, the move played there.

A row counts, for one position and one move played from it, the games of one kind: all games
(`player` empty) or one player's (`player`: its id; a game counts for both its players), rated
or not, by the mover's rating band (a hundred points: 1450 is band 14) and by whether the mover
was a hosted bot. It holds how many games, the mover's wins, draws and losses, the sum of the
movers' ratings (for the average) and the game that played the move last (`last_match`, at
`last_at`). A position is keyed by a 64-bit hash of its rules (the variant without its clock)
and its board (pits, side to move, pending choices: not its ply, so move orders that reach one
board meet there); a move played twice from one position in one game counts once.

The rows of a game are written in the same durable write as its end (`Arena.store`), so a game
that finished is in the index, and one that did not is not, across any crash or restart; the
migration that made the table indexed the games already stored (`index_stored_sqlite`,
`index_stored_postgres`), with each player's rating at the time of the migration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from protocol.actions import parse_action
from protocol.errors import KalahError
from protocol.game import Game
from protocol.outcome import EndReason
from protocol.position import Position
from protocol.variant import Variant
from server.storage.ops import Op, OpKind

BAND = 100
"""Rating points per band."""
DEFAULT_RATING = 1500.0
"""The rating of a player with no rated game (Glicko-2's start)."""

EXPLORE_SQL: dict[OpKind, str] = {
    OpKind.EXPLORE: "INSERT INTO explore (position, player, action, rated, band, bot, games, wins, draws, losses,"
                    " rating_sum, last_at, last_match) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (position, player, action, rated, band, bot) DO UPDATE SET"
                    " games = explore.games + excluded.games, wins = explore.wins + excluded.wins,"
                    " draws = explore.draws + excluded.draws, losses = explore.losses + excluded.losses,"
                    " rating_sum = explore.rating_sum + excluded.rating_sum,"
                    " last_match = CASE WHEN excluded.last_at >= explore.last_at THEN excluded.last_match"
                    " ELSE explore.last_match END,"
                    " last_at = CASE WHEN excluded.last_at >= explore.last_at THEN excluded.last_at"
                    " ELSE explore.last_at END",
}
"""The statement of the explore `Op` kind: add a game's counts to its row."""

EXPLORED = ("SELECT action, rated, band, bot, games, wins, draws, losses, rating_sum, last_at, last_match"
            " FROM explore WHERE position = ? AND player = ?")
"""Every row of one position (of all games, or of one player's), read by the table's key."""
PLAYER_ID = "SELECT id FROM players WHERE name_key = ?"
"""The id of the player holding a name's canonical form."""
FILL_EXPLORE = "-- fill explore"
"""A migration step run in Python, not as SQL: index every finished game already stored."""
_RECORD = {
    "sqlite": "(SELECT group_concat(action, ' ') FROM (SELECT action FROM actions a WHERE a.match_id = m.id"
              " ORDER BY a.ply))",
    "postgres": "(SELECT string_agg(a.action, ' ' ORDER BY a.ply) FROM actions a WHERE a.match_id = m.id)",
}
_STORED_GAMES = ("SELECT m.id, m.variant, m.rated, m.seat0, m.seat1, m.winner_seat, m.reason, m.finished_at,"
                 " p0.bot, p1.bot, r0.rating, r1.rating, {record} FROM matches m"
                 " LEFT JOIN players p0 ON p0.id = m.seat0 LEFT JOIN players p1 ON p1.id = m.seat1"
                 " LEFT JOIN ratings r0 ON r0.player_id = m.seat0 LEFT JOIN ratings r1 ON r1.player_id = m.seat1"
                 " WHERE m.status = 'finished' ORDER BY m.finished_at, m.id")
STORED_GAMES = {dialect: _STORED_GAMES.format(record=record) for dialect, record in _RECORD.items()}
"""Every finished game with its record and what its rows need, by dialect (the ratings are today's: no earlier one
is kept)."""
FILL_CHUNK = 2000
"""Games whose rows the migration sums and writes at a time."""


@dataclass(frozen=True, slots=True)
class Mover:
    """One seat's player as the index counts it: its id, its rating when the game ended, and whether a hosted bot."""

    player_id: str
    rating: float
    bot: bool


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """What the index needs of a finished game."""

    match_id: str
    variant: Variant
    record: Sequence[str]
    rated: bool
    seats: tuple[Mover, Mover]
    winner_seat: int | None
    reason: EndReason
    finished_at: float


@lru_cache(maxsize=256)
def rules_of(variant: Variant) -> str:
    """The text of a variant's rules (its clock left out: games at any clock share one index)."""
    return variant.with_options(time_control=None).text()


def position_key(variant: Variant, position: Position) -> int:
    """The index's key of a position: a signed 64-bit hash of its rules and its board, not its ply."""
    flags = "p" * position.pie_open + "t" * position.transfer_pending + "w" * position.swapped or "-"
    text = f"{rules_of(variant)}|{','.join(map(str, position.pits))} {position.to_move.letter} {flags}"
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def band_of(rating: float) -> int:
    """The band of a rating (a hundred points each: 1450 is band 14)."""
    return int(rating // BAND)


def seat_to_move(position: Position) -> int:
    """The seat (0: who opened as South) of the side to move."""
    return int(position.to_move) ^ int(position.swapped)


def indexed(game: FinishedGame) -> bool:
    """Whether a finished game counts in the index: every end but the operator's abort (no result to count)."""
    return game.reason is not EndReason.ABORTED and bool(game.record)


def explore_ops(game: FinishedGame, played: Game | None = None) -> list[Op]:
    """The index rows a finished game adds, as upserts: each position's move once, for all games and for each
    player (none for an aborted game, or one whose record does not replay); `played`: its game already replayed."""
    if not indexed(game):
        return []
    if played is None:
        try:
            played = Game.from_record(game.variant, [parse_action(token) for token in game.record])
        except KalahError:
            return []
    seen: set[tuple[int, str]] = set()
    ops: list[Op] = []
    rated = 1 if game.rated else 0
    for position, action in zip(played.positions, played.actions, strict=False):
        key, token = position_key(game.variant, position), action.token()
        if (key, token) in seen:
            continue
        seen.add((key, token))
        seat = seat_to_move(position)
        mover = game.seats[seat]
        win = 0 if game.winner_seat is None else int(game.winner_seat == seat)
        loss = 0 if game.winner_seat is None else 1 - win
        draw = 1 if game.winner_seat is None else 0
        counts = (1, win, draw, loss, mover.rating, game.finished_at, game.match_id)
        common = (rated, band_of(mover.rating), 1 if mover.bot else 0)
        for player in ("", *dict.fromkeys(s.player_id for s in game.seats if s.player_id)):
            ops.append((OpKind.EXPLORE, (key, player, token, *common, *counts)))
    return ops


def merged(ops: Iterable[Op]) -> list[Op]:
    """Explore upserts of many games summed by row (one statement per row: a bulk load's shortcut)."""
    rows: dict[tuple[object, ...], list[object]] = {}
    for _, params in ops:
        key = params[:6]
        row = rows.get(key)
        if row is None:
            rows[key] = list(params)
            continue
        for index in range(6, 11):
            row[index] = row[index] + params[index]
        if params[11] >= row[11]:
            row[11], row[12] = params[11], params[12]
    return [(OpKind.EXPLORE, tuple(row)) for row in rows.values()]


def finished_of(row: Sequence[object]) -> FinishedGame | None:
    """The `FinishedGame` of a row of `STORED_GAMES`, or None if it cannot be read."""
    (mid, variant, rated, seat0, seat1, winner, reason, finished, bot0, bot1, rating0, rating1, record) = row
    try:
        seats = tuple(Mover("" if pid is None else str(pid),
                            DEFAULT_RATING if rating is None else float(str(rating)), bot is not None)
                      for pid, rating, bot in ((seat0, rating0, bot0), (seat1, rating1, bot1)))
        return FinishedGame(str(mid), Variant.parse(str(variant)), str(record or "").split(), bool(rated),
                            (seats[0], seats[1]),
                            None if winner is None else int(str(winner)), EndReason(str(reason)),
                            float(str(finished or 0.0)))
    except (KalahError, ValueError, TypeError):
        return None


def stored_ops(rows: Iterable[Sequence[object]]) -> Iterable[list[Op]]:
    """The index rows of the stored games of `STORED_GAMES`, summed `FILL_CHUNK` games at a time (the migration)."""
    chunk: list[Op] = []
    count = 0
    for row in rows:
        game = finished_of(row)
        if game is None:
            continue
        chunk += explore_ops(game)
        count += 1
        if count % FILL_CHUNK == 0:
            yield merged(chunk)
            chunk = []
    if chunk:
        yield merged(chunk)


@dataclass(slots=True)
class Tally:
    """One move's counts under a request's filters, summed over the index rows."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    rating_sum: float = 0.0
    last_at: float = -1.0
    last_match: str | None = None


def band_range(min_rating: int | None, max_rating: int | None) -> tuple[int, int]:
    """The bands a rating range takes (by hundreds: at least `min_rating`'s band, below `max_rating`)."""
    low = -(10**9) if min_rating is None else band_of(min_rating)
    high = 10**9 if max_rating is None else -(-max_rating // BAND) - 1
    return low, high


def tally(rows: Iterable[Sequence[object]], rated: bool, bands: tuple[int, int], movers: str) -> dict[str, Tally]:
    """Each move's counts from the rows of `EXPLORED` that pass the filters: only rated games, the movers' rating
    bands (inclusive), whose moves (`any`, `people`, `bots`)."""
    found: dict[str, Tally] = {}
    for action, row_rated, band, bot, games, wins, draws, losses, rating_sum, last_at, last_match in rows:
        if (rated and not row_rated) or not bands[0] <= int(str(band)) <= bands[1]:
            continue
        if (movers == "people" and bot) or (movers == "bots" and not bot):
            continue
        t = found.setdefault(str(action), Tally())
        t.games += int(str(games))
        t.wins += int(str(wins))
        t.draws += int(str(draws))
        t.losses += int(str(losses))
        t.rating_sum += float(str(rating_sum))
        if float(str(last_at)) >= t.last_at:
            t.last_at, t.last_match = float(str(last_at)), str(last_match)
    return found

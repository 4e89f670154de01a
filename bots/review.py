"""Game review: each ply's seeds lost against perfect play, its mark in words, and each player's summary.

The value of a position is South's final margin under best play (stores included), so the
seeds a move lost are, from the mover's side, the value of the position before it minus the
value of the position after it; a perfect move loses 0. Each position of the game is valued
once (`needs_value`), by whoever computes the review: the server's analysis queue, or the
`perfect` bot in the command line (`perfect_valuer`); `assemble` then builds the review.
A pie-rule decision (the opener's first turn, North's swap offer) and an opening transfer are
listed but not judged (`unjudged`): their value is not the board's alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bots import pie
from protocol.actions import Sow, parse_action
from protocol.errors import KalahError
from protocol.game import Game
from protocol.position import Position, Side
from protocol.review_messages import GameReview, MarkName, MarkThresholds, ReviewedPly, ReviewSummary
from protocol.variant import Variant

REVIEW_BUDGET_MS = 20_000
"""The most a review may think in all: each position gets an equal share of it, within the bounds below."""
MIN_PLY_MS = 50
"""The least each position's analysis may think, however long the game (so a review lasts at most
`max(REVIEW_BUDGET_MS, positions * MIN_PLY_MS)`)."""
MAX_PLY_MS = 1000
"""The most one position's analysis may think (an analysis request's default)."""


@dataclass(frozen=True)
class Valuation:
    """South's final margin under the best play found from a position, a best action there, and how it was found."""

    value: int
    best: tuple[str, ...] = ()
    exact: bool = True
    depth: int = -1


Valuer = Callable[[Position, int], Valuation]
"""South's valuation of a position where a side sows, thinking at most the given milliseconds."""


def thresholds(variant: Variant) -> MarkThresholds:
    """The seeds lost from which a ply is an inaccuracy (1), a mistake (a 24th of the seeds, at least 2) and a
    blunder (an 8th of the seeds, at least one more than a mistake): Kalah(6,4) 1, 2, 6."""
    total = variant.total_seeds
    mistake = max(2, round(total / 24))
    return MarkThresholds(inaccuracy=1, mistake=mistake, blunder=max(mistake + 1, round(total / 8)))


def mark_of(loss: int, limits: MarkThresholds) -> MarkName:
    """The word for a ply that lost `loss` seeds."""
    if loss >= limits.blunder:
        return "blunder"
    if loss >= limits.mistake:
        return "mistake"
    if loss >= limits.inaccuracy:
        return "inaccuracy"
    return "perfect"


def replay(variant: Variant, record: str | Sequence[str]) -> Game:
    """The game of a stored record, as far as it replays legally."""
    game = Game(variant)
    for token in record.split() if isinstance(record, str) else record:
        try:
            game.play(parse_action(token))
        except KalahError:
            break
    return game


def needs_value(position: Position) -> bool:
    """Whether a position is valued by a search: a side sows there (an ended game's value is its margin)."""
    return not position.over and bool(position.legal_bins())


def judged(position: Position) -> bool:
    """Whether the action played at `position` is weighed: a sowing with no pie-rule choice and no transfer."""
    return needs_value(position) and not position.swap_offered and not pie.in_first_turn(position)


def ply_budget_ms(game: Game) -> int:
    """The milliseconds each position of `game` may be analysed for in its review."""
    count = max(1, sum(needs_value(p) for p in game.positions))
    return max(MIN_PLY_MS, min(MAX_PLY_MS, REVIEW_BUDGET_MS // count))


def _seat(position: Position) -> int:
    """The seat (0: who opened as South) of the side to move."""
    return int(position.to_move) ^ int(position.swapped)


def assemble(match_id: str, game: Game, names: tuple[str | None, str | None], values: dict[int, Valuation],
             budget_ms: int, reviewed_at: datetime | None = None) -> GameReview:
    """The review of `game` from the valuations of its positions (by index; those `needs_value` skips are
    valued here by their margin)."""
    limits = thresholds(game.variant)
    plies: list[ReviewedPly] = []

    def valuation(index: int) -> Valuation | None:
        """The valuation of position `index`, if there is one."""
        position = game.positions[index]
        if position.over:
            return Valuation(int(position.margin))
        return values.get(index)

    for index, action in enumerate(game.actions):
        position = game.positions[index]
        before, after = valuation(index), valuation(index + 1)
        fallback = int(position.margin)
        value = before.value if before else after.value if after else fallback
        value_after = after.value if after else value
        sign = 1 if position.to_move == Side.SOUTH else -1
        if isinstance(action, Sow) and len(position.legal_bins()) == 1:
            loss, exact, depth, mark = 0, True, -1, mark_of(0, limits)
        elif judged(position) and before is not None and after is not None:
            loss = max(0, sign * (before.value - after.value))
            exact = before.exact and after.exact
            depth = -1 if exact else min(d for d in (before.depth, after.depth) if d >= 0) \
                if (before.depth >= 0 or after.depth >= 0) else 0
            mark = mark_of(loss, limits)
        else:
            loss, exact, depth, mark = 0, False, 0, "unjudged"
        plies.append(ReviewedPly(ply=index, side="south" if position.to_move == Side.SOUTH else "north",
                                 player=names[_seat(position)], action=action.token(), value=value,
                                 after=value_after, best=list(before.best) if before else [], loss=loss,
                                 exact=exact, depth=depth, mark=mark))
    players = [_summary(seat, names[seat], [p for p, pos in zip(plies, game.positions, strict=False)
                                            if p.mark != "unjudged" and _seat(pos) == seat])
               for seat in (0, 1)]
    when = reviewed_at or datetime.now(UTC)
    return GameReview(match_id=match_id, variant=game.variant.text(), plies=plies, players=players,
                      thresholds=limits, exact=all(p.exact for p in plies if p.mark != "unjudged"),
                      budget_ms=budget_ms, reviewed_at=when.isoformat(timespec="seconds"))


def _summary(seat: int, name: str | None, plies: list[ReviewedPly]) -> ReviewSummary:
    """One player's summary of their judged plies."""
    worst = max(plies, key=lambda p: (p.loss, -p.ply), default=None)
    lost = worst is not None and worst.loss > 0
    return ReviewSummary(seat=seat, player=name, moves=len(plies), perfect=sum(p.loss == 0 for p in plies),
                         lost=sum(p.loss for p in plies), worst_ply=worst.ply if lost and worst else None,
                         worst_loss=worst.loss if lost and worst else 0, exact=all(p.exact for p in plies))


def review_game(match_id: str, variant: Variant, record: str | Sequence[str], names: tuple[str | None, str | None],
                value: Valuer) -> GameReview:
    """The review of a stored game, each position valued by `value` (synchronously: the command line)."""
    game = replay(variant, record)
    budget = ply_budget_ms(game)
    values = {index: value(position, budget) for index, position in enumerate(game.positions)
              if needs_value(position)}
    return assemble(match_id, game, names, values, budget)


def perfect_valuer(egdb_seeds: int | None = None) -> Valuer:
    """A valuer by the `perfect` bot in this process (its books, the databases on disk, else deepening)."""
    from bots.players import DEFAULT_BOT_EGDB, PerfectPlayer

    player = PerfectPlayer(DEFAULT_BOT_EGDB if egdb_seeds is None else egdb_seeds)

    def value(position: Position, budget_ms: int) -> Valuation:
        """The perfect bot's valuation of a sowing position within `budget_ms`."""
        decision = player.best_sowing(position, time.monotonic() + budget_ms / 1000)
        south = int(position.margin) if decision.value is None else decision.value
        return Valuation(south, (decision.action.token(),), decision.exact, -1 if decision.exact else decision.depth)

    return value

"""The opening explorer's answer: the moves played from a position (the index's tallies) beside the solver's values.

`start_of` reads the position a request names; `to_value` lists the positions whose value the
answer shows (the position itself, for the solver's move, and the position after each move
played); `explored` builds the reply from the tallies and whatever valuations were found. The
server values through its analysis queue, the command line with the `perfect` bot in its own
process (`value_all`); both within `VALUE_BUDGET_MS` a position.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bots.review import Valuation, Valuer, needs_value
from protocol.actions import parse_action
from protocol.errors import KalahError
from protocol.explore_messages import MAX_EXPLORED_MOVES, Explore, Explored, ExploredMove
from protocol.position import Position
from protocol.variant import Variant
from server.storage.explore import Tally, band_range, tally

VALUE_BUDGET_MS = 200
"""The most the solver thinks about one position of an answer (small boards and book positions are proved at once)."""


def start_of(msg: Explore) -> tuple[Variant, Position]:
    """The variant and the position a request asks about (its start if none); `NotationError` and kin if the
    position cannot be read or reached."""
    variant = Variant.parse(msg.variant)
    if msg.position is None:
        return variant, Position.initial(variant)
    return variant, Position.from_fen(variant, msg.position).check_possible()


def tallied(msg: Explore, rows: Iterable[Sequence[object]]) -> dict[str, Tally]:
    """Each move's counts from a position's index rows under the request's filters."""
    return tally(rows, msg.rated, band_range(msg.min_rating, msg.max_rating), msg.movers)


def after_moves(position: Position, actions: list[str]) -> dict[str, Position]:
    """The position after each action (those that cannot be played there are left out)."""
    found: dict[str, Position] = {}
    for token in actions:
        try:
            found[token] = position.apply(parse_action(token))
        except (KalahError, ValueError):
            continue
    return found


def to_value(position: Position, afters: Mapping[str, Position]) -> list[Position]:
    """The positions a search values for the answer: the position (for the solver's move), then each one after a
    move played where a side sows (an ended game's value is its margin)."""
    return [p for p in (position, *afters.values()) if needs_value(p)]


def value_all(positions: list[Position], value: Valuer, budget_ms: int = VALUE_BUDGET_MS) -> dict[str, Valuation]:
    """The valuation of each position by its text (synchronously: the command line)."""
    return {p.fen(): value(p, budget_ms) for p in positions}


def explored(msg: Explore, position: Position, tallies: Mapping[str, Tally], afters: Mapping[str, Position],
             values: Mapping[str, Valuation]) -> Explored:
    """The reply to `msg`: each move played (the most played first) with its counts and the value after it where
    known, and the position's own value and solver's move."""

    def valuation(p: Position) -> Valuation | None:
        """A position's value: its margin when over, else what the search found (None: not valued)."""
        if p.over:
            return Valuation(int(p.margin))
        return values.get(p.fen())

    moves = []
    for token, t in sorted(tallies.items(), key=lambda item: (-item[1].games, item[0]))[:MAX_EXPLORED_MOVES]:
        after = afters.get(token)
        if after is None or t.games <= 0:
            continue
        found = valuation(after) if msg.values else None
        moves.append(ExploredMove(action=token, games=t.games, wins=t.wins, draws=t.draws, losses=t.losses,
                                  average_rating=round(t.rating_sum / t.games), after=after.fen(),
                                  value=None if found is None else found.value,
                                  exact=found is not None and found.exact, last_match=t.last_match))
    root = valuation(position) if msg.values else None
    solver = root.best[0] if root is not None and root.best else None
    return Explored(variant=msg.variant, position=position.fen(), games=sum(m.games for m in moves), moves=moves,
                    value=None if root is None else root.value, exact=root is not None and root.exact,
                    solver=solver, depth=-1 if root is None or root.exact else max(0, root.depth))



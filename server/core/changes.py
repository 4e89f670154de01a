"""The changes the arena makes to matches, and the statements that store each one.

`Match` prepares joins, actions and ends; a new match and a cancelled one are the arena's
own changes. `Arena.apply` stores, commits and publishes every kind through one path.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from protocol.actions import Action
from server.core.identities import bot_player_op
from server.core.match import ActionChange, EndChange, JoinChange, Match, Seat
from server.core.ratings import Rating
from server.storage import Op
from server.storage.explore import DEFAULT_RATING, FinishedGame, Mover, explore_ops
from server.storage.moderation import op_unrate
from server.storage.writer import op_action, op_cancel, op_create, op_finish, op_forfeit, op_join


@dataclass(frozen=True, slots=True)
class CreateChange:
    """A new match prepared in private (seats taken, opening played): nothing is stored or visible yet."""

    match: Match = field(compare=False)
    creator_seat: int
    steps: tuple[JoinChange | ActionChange, ...]
    """The joins and opening actions already committed to the private match, in order."""
    creator: tuple[str, str] | None = None
    """The network prefix and the address of the client that opened it to anyone (stored while it is open, for
    the lobby's fair order on every node); None for a match made with both seats."""


@dataclass(frozen=True, slots=True)
class CancelChange:
    """An open match that its creator left before anyone joined."""


ArenaChange = CreateChange | JoinChange | ActionChange | EndChange | CancelChange


def prepare_create(match: Match, creator_seat: int, seats: list[tuple[int, Seat]],
                   opening: list[Action], creator: tuple[str, str] | None = None) -> CreateChange:
    """Seat the players and play the opening on a fresh, private match; raises if the opening is illegal."""
    steps: list[JoinChange | ActionChange] = []
    for seat, player in seats:
        join = match.prepare_join(player, seat)
        match.commit(join)
        steps.append(join)
    for action in opening:
        mover = match.seat_to_move()
        assert mover is not None, "an opening is played only in a live match"
        change = match.prepare_action(mover, action, match.ply)
        assert isinstance(change, ActionChange), "a fresh ply is never a duplicate"
        match.commit(change)
        steps.append(change)
    return CreateChange(match, creator_seat, tuple(steps), creator)


def end_of(change: ArenaChange) -> EndChange | None:
    """The end a change brings (an end itself, or an action that ends the game)."""
    if isinstance(change, EndChange):
        return change
    if isinstance(change, ActionChange):
        return change.end
    return None


def _join_ops(match_id: str, join: JoinChange, live: bool) -> list[Op]:
    """A seat taken (a hosted bot's player row stored with it)."""
    p = join.player
    ops = [] if p.bot is None else [bot_player_op(p)]
    return [*ops, op_join(match_id, join.seat, p.player_id, live)]


def _action_ops(match_id: str, change: ActionChange) -> list[Op]:
    """An action with both clocks after it, and the end it causes."""
    ops = [op_action(match_id, change.ply, change.seat, change.action.token(), change.clocks_ms)]
    if change.end is not None:
        ops.append(op_finish(match_id, change.end.result, change.end.winner, change.end.reason))
    return ops


def _forfeit_ops(match: Match, end: EndChange) -> list[Op]:
    """Why the loser forfeited, stored with the end in the same write."""
    if end.detail is None or end.winner is None:
        return []
    holder = match.seats[1 - end.winner]
    return [] if holder is None else [op_forfeit(match.match_id, 1 - end.winner, holder.player_id, end.detail)]


def ops_of(match: Match, change: ArenaChange) -> list[Op]:
    """The statements that store `change` to `match` (before it is committed), ratings aside."""
    mid = match.match_id
    if isinstance(change, CreateChange):
        ops = [op_create(mid, match.variant.text(), match.rated, change.creator_seat, change.creator)]
        joined = 0
        for step in change.steps:
            if isinstance(step, JoinChange):
                joined += 1
                ops += _join_ops(mid, step, joined == 2)
            else:
                ops += _action_ops(mid, step)
        return ops
    if isinstance(change, JoinChange):
        return _join_ops(mid, change, match.seats[1 - change.seat] is not None)
    if isinstance(change, ActionChange):
        return _action_ops(mid, change)
    if isinstance(change, EndChange):
        unrated = [op_unrate(mid)] if match.unrates(change) else []  # an abort, or a resignation at ply 0
        return [op_finish(mid, change.result, change.winner, change.reason), *_forfeit_ops(match, change), *unrated]
    return [op_cancel(mid)]


def explore_ops_of(match: Match, change: ArenaChange, ratings: Mapping[str, tuple[Rating, int]]) -> list[Op]:
    """The opening explorer's rows of a game that `change` ends (none for any other change), stored in the same write
    as its end; each mover counted at its rating before this game's update."""
    end = end_of(change)
    if end is None:
        return []
    tokens = [action.token() for action in match.game.actions]
    if isinstance(change, ActionChange):
        tokens.append(change.action.token())

    def mover(seat: Seat | None) -> Mover:
        """How the index counts the player in a seat."""
        if seat is None:
            return Mover("", DEFAULT_RATING, False)
        rating = ratings.get(seat.player_id)
        return Mover(seat.player_id, DEFAULT_RATING if rating is None else rating[0].rating, seat.bot is not None)

    return explore_ops(FinishedGame(match.match_id, match.variant, tokens, match.rates(end),
                                    (mover(match.seats[0]), mover(match.seats[1])), end.winner, end.reason,
                                    time.time()))

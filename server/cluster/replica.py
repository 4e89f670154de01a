"""A node's copy of a match that is stored by others: loaded on demand, brought up to date from the database.

A match's version is how many changes made it: its plies, its seats taken, and 1 once it
ended, so every change raises it and two changes from the same state claim the same guard.
A node told of a newer version (or unsure, after losing the bus) reads the stored match and
commits what it lacks to its copy in order; its followers get exactly the events they lacked,
with the numbers the storing node gave them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from protocol.actions import parse_action
from protocol.events import AnyMatchEvent
from server.cluster.messages import Acted, Carried, Changed, Ended, Joined
from server.core.changes import CancelChange
from server.core.match import ActionChange, EndChange, JoinChange, Match, Seat
from server.core.resume import rebuild, seat_players
from server.core.rooms import Room

if TYPE_CHECKING:
    from server.core.changes import ArenaChange
    from server.core.match_host import MatchHost


def version(match: Match) -> int:
    """How many changes the match has had: plies played, seats taken, and its end."""
    return match.ply + sum(seat is not None for seat in match.seats) + (match.end is not None)


async def seat_of(arena: MatchHost, player_id: str) -> Seat:
    """The seat value of a stored player (read from the database if this node has not seen it)."""
    player = await arena.identities.get(player_id)
    return Seat(player_id, player_id if player is None else player.name, None if player is None else player.bot)


async def load(arena: MatchHost, match_id: str) -> Room | None:
    """A stored open, live or finished match as a room of this node (not registered), or None."""
    stored = await arena.storage.stored_match(match_id)
    if stored is None or stored.status not in ("open", "live", "finished"):
        return None
    await seat_players(arena, stored)
    return Room(rebuild(arena, stored, charge=True))


async def refresh(arena: MatchHost, room: Room) -> list[AnyMatchEvent]:
    """Commit to `room`'s match what is stored beyond it (the caller holds its lock), each change published
    like one made here; return the events.

    A match cancelled or set aside meanwhile leaves the arena (published as a cancel).
    """
    m = room.match
    stored = await arena.storage.stored_match(m.match_id)
    if stored is None:
        return []
    if stored.status not in ("open", "live", "finished"):
        if m.match_id in arena.rooms:
            arena.publish(room, CancelChange(), 0)
        return []
    changes: list[JoinChange | ActionChange | EndChange] = []
    for seat in (stored.creator_seat, 1 - stored.creator_seat):
        holder = stored.seats[seat]
        if m.seats[seat] is None and holder is not None:
            changes.append(JoinChange(seat, await seat_of(arena, holder)))
    if len(stored.actions) > m.ply:
        idle = stored.idle_s()  # by the database's clock: no node's clock comes in
        at = arena.now() - (idle or 0.0)
        for ply, seat, token, ms0, ms1 in stored.actions[m.ply:]:
            changes.append(ActionChange(seat, parse_action(token), ply, (ms0, ms1), at))
    if stored.end is not None and m.end is None:
        result, winner, reason = stored.end
        changes.append(EndChange(reason, winner, result))
    events: list[AnyMatchEvent] = []
    for change in changes:
        events += commit(arena, room, change)
    return events


def commit(arena: MatchHost, room: Room, change: JoinChange | ActionChange | EndChange) -> list[AnyMatchEvent]:
    """Commit a change another node stored to this node's copy, and publish it as the arena publishes its own."""
    events = room.match.commit(change)
    arena.publish(room, change, len(events))
    return events


def _ended(end: EndChange | None) -> Ended | None:
    """An end as a notice carries it."""
    return None if end is None else Ended(end.result, end.winner, end.reason)


def _end(end: Ended | None) -> EndChange | None:
    """An end a notice carried."""
    return None if end is None else EndChange(end.reason, end.winner, end.result)


def carried(arena: MatchHost, change: ArenaChange) -> Carried | None:
    """A stored join, action or end as a notice carries it (None for other kinds)."""
    if isinstance(change, JoinChange):
        p = change.player
        return Joined(change.seat, p.player_id, p.name, p.bot)
    if isinstance(change, ActionChange):
        age = max(0.0, arena.now() - change.at)
        return Acted(change.ply, change.seat, change.action.token(), change.clocks_ms, time.time() - age,
                     _ended(change.end), age)
    if isinstance(change, EndChange):
        return _ended(change)
    return None


def apply_carried(arena: MatchHost, room: Room, notice: Changed) -> bool:
    """Commit the change a notice carried to a copy at the version it was made from, and publish it; False if it
    does not apply (another version, or a change the match refuses), so that the caller reads the database."""
    m = room.match
    c = notice.change
    if c is None or notice.before != version(m):
        return False
    change: JoinChange | ActionChange | EndChange
    if isinstance(c, Joined):
        change = JoinChange(c.seat, Seat(c.player_id, c.name, c.bot))
    elif isinstance(c, Acted):
        at = arena.now() - c.age  # the bus's own delay (milliseconds) is not charged: no wall clock is compared
        change = ActionChange(c.seat, parse_action(c.action), c.ply, c.clocks_ms, at, _end(c.end))
    else:
        change = EndChange(c.reason, c.winner, c.result)
    try:
        logged = m.commit_logged(change)
    except (ValueError, KeyError, TypeError):
        return False
    arena.publish(room, change, logged)
    if isinstance(c, Acted):
        arena.metrics.bus_follower_seconds.observe(max(0.0, time.time() - c.at))
    return True

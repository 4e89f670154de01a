"""A node's copy of a match that is stored by others: loaded on demand, brought up to date from the database.

A match's version is how many changes made it: its plies, its seats taken, and 1 once it
ended, so every change raises it and two changes from the same state claim the same guard.
A node told of a newer version (or unsure, after losing the bus) reads the stored match and
commits what it lacks to its copy in order; its followers get exactly the events they lacked,
with the numbers the storing node gave them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.actions import parse_action
from protocol.events import AnyMatchEvent
from server.match import ActionChange, EndChange, JoinChange, Match, Seat
from server.resume import rebuild
from server.rooms import Room

if TYPE_CHECKING:
    from server.arena import Arena


def version(match: Match) -> int:
    """How many changes the match has had: plies played, seats taken, and its end."""
    return match.ply + sum(seat is not None for seat in match.seats) + (match.end is not None)


async def seat_of(arena: Arena, player_id: str) -> Seat:
    """The seat value of a stored player (read from the database if this node has not seen it)."""
    player = await arena.player(player_id)
    return Seat(player_id, player_id if player is None else player.name, None if player is None else player.bot)


async def load(arena: Arena, match_id: str) -> Room | None:
    """A stored open, live or finished match as a room of this node (not registered), or None."""
    stored = await arena.storage.stored_match(match_id)
    if stored is None or stored.status not in ("open", "live", "finished"):
        return None
    for player_id in stored.seats:
        if player_id is not None:
            await arena.player(player_id)
    return Room(rebuild(arena, stored, charge=True))


async def refresh(arena: Arena, room: Room) -> list[AnyMatchEvent]:
    """Commit to `room`'s match what is stored beyond it (the caller holds its lock); send and return the events.

    A match cancelled or set aside meanwhile is dropped from the arena.
    """
    m = room.match
    stored = await arena.storage.stored_match(m.match_id)
    if stored is None:
        return []
    if stored.status not in ("open", "live", "finished"):
        arena.drop_room(m.match_id)
        room.cancel_timer()
        return []
    events: list[AnyMatchEvent] = []
    for seat in (stored.creator_seat, 1 - stored.creator_seat):
        holder = stored.seats[seat]
        if m.seats[seat] is None and holder is not None:
            events += m.commit(JoinChange(seat, await seat_of(arena, holder)))
    if len(stored.actions) > m.ply:
        at = arena.now() if stored.last_at is None else arena.local_time(stored.last_at)
        for ply, seat, token, ms0, ms1 in stored.actions[m.ply:]:
            events += m.commit(ActionChange(seat, parse_action(token), ply, (ms0, ms1), at))
    if stored.end is not None and m.end is None:
        result, winner, reason = stored.end
        events += m.commit(EndChange(reason, winner, result))
    if events:
        arena.index_seats(room)
        if m.status != "open":
            arena.quotas.release(m.match_id)
        room.send_all(events)
        arena.after_change(room)
    return events

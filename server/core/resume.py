"""Matches back from storage: every unfinished one at start-up, a finished one on demand for replay."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.actions import parse_action
from protocol.variant import Variant
from server.core.errors import UnknownMatchError
from server.core.match import ActionChange, EndChange, JoinChange, Match, Seat
from server.core.ratings import Rating
from server.core.rooms import Room
from server.logs import event as log_event
from server.storage import StoredMatch
from server.storage.writer import op_quarantine

if TYPE_CHECKING:
    from server.core.match_host import MatchHost


async def load(arena: MatchHost) -> None:
    """Load identities and ratings, then the matches the deployment runs from the start (a server on its own:
    every unfinished one; a cluster node: those it comes to own or hold, later)."""
    await arena.identities.load()
    for pid, (rating, rd, vol, games) in (await arena.storage.ratings()).items():
        arena.ratings[pid] = (Rating(rating, rd, vol), games)
    arena.quarantined = await arena.storage.quarantined()
    await arena.resume_matches()


async def resume_all(arena: MatchHost) -> None:
    """Rebuild every unfinished match from its stored actions (one that cannot be read is quarantined)."""
    for stored in await arena.storage.unfinished():
        try:
            await seat_players(arena, stored)
            room = Room(rebuild(arena, stored))
        except Exception as exc:  # one unreadable row never stops start-up
            await quarantine(arena, stored.match_id, exc)
            continue
        arena.load_room(room)
        arena.after_change(room)
        log_event("match_resumed", match=stored.match_id, ply=room.match.ply, status=room.match.status)
    arena.quarantined = await arena.storage.quarantined()


async def quarantine(arena: MatchHost, match_id: str, exc: Exception) -> None:
    """Set aside a match that cannot be rebuilt: logged, stored with the reason, never loaded again."""
    reason = f"{type(exc).__name__}: {exc}"
    log_event("match_quarantined", match=match_id, reason=reason, level=40)
    await arena.write(op_quarantine(match_id, reason))
    arena.quarantined += 1


async def seat_players(arena: MatchHost, stored: StoredMatch) -> None:
    """Have the players seated in a stored match in memory for `rebuild` (read back if they left the cache)."""
    for player_id in stored.seats:
        if player_id is not None:
            await arena.identities.get(player_id)


def rebuild(arena: MatchHost, stored: StoredMatch, charge: bool = False) -> Match:
    """A match replayed from storage: same seats, events and numbers as before; clocks as stored.

    `charge`: the running clock has been running since the last action was stored (a node takes
    over a match another was playing); otherwise it starts now (the server itself was down).
    """
    match = arena.new_match(stored.match_id, Variant.parse(stored.variant), stored.rated)
    for seat in (stored.creator_seat, 1 - stored.creator_seat):
        holder = stored.seats[seat]
        if holder is not None and holder in arena.identities.players:
            p = arena.identities.players[holder]
            match.commit(JoinChange(seat, Seat(holder, p.name, p.bot)))
    now = arena.now()
    for ply, seat, token, ms0, ms1 in stored.actions:
        match.commit(ActionChange(seat, parse_action(token), ply, (ms0, ms1), now))
    if stored.end is not None:
        result, winner, reason = stored.end
        match.commit(EndChange(reason, winner, result))
        return match
    if stored.actions:
        ms0, ms1 = stored.actions[-1][3:5]
        idle = stored.idle_s() if charge else None  # by the database's clock: no node's clock comes in
        since = None if idle is None else now - idle
        match.restore_clocks((ms0, ms1), since)
    return match


async def room_or_stored(arena: MatchHost, match_id: str) -> Room:
    """The room of a match in memory, or a finished one read back from storage (not kept: a finished match
    has no more events to follow, and keeping every one asked for would let requests fill the memory)."""
    room = await arena.loaded_room(match_id)  # a cluster loads any as a copy
    if room is not None:
        return room
    stored = await arena.storage.stored_match(match_id)
    if stored is None or stored.status != "finished" or match_id in arena.rooms:
        return arena.room(match_id)
    try:
        await seat_players(arena, stored)
        room = Room(rebuild(arena, stored))
    except Exception as exc:
        await quarantine(arena, match_id, exc)
        raise UnknownMatchError(f"stored match {match_id!r} cannot be read: it is quarantined") from None
    return room

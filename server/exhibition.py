"""Bot-against-bot matches from an agreed opening (the ladder's games), and the standings table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.actions import parse_action
from protocol.errors import NotationError
from protocol.game import Game
from protocol.messages import CreateExhibition, HeadToHead, Snapshot, StandingRow, Standings
from protocol.variant import Variant
from server.errors import MatchExistsError
from server.match import ActionChange, JoinChange
from server.standings import GameResult, compute
from server.storage.games import afetch_game
from server.storage.results import arated_results
from server.storage.writer import op_action

if TYPE_CHECKING:
    from server.arena import Arena
    from server.lobby import Lobby
    from server.session import Session


async def create_exhibition(lobby: Lobby, s: Session, msg: CreateExhibition) -> Snapshot:
    """Open a live match between two hosted bots, play the opening, start the bots; `s` follows it."""
    a = lobby.arena
    variant = Variant.parse(msg.variant)
    opening = [parse_action(token) for token in msg.opening]
    probe = Game.from_record(variant, opening)  # an illegal opening is refused before anything is stored
    if probe.over:
        raise NotationError("the opening ends the game: nothing would be left to play")
    if msg.match_id is not None and (msg.match_id in a.rooms or await afetch_game(a.storage.path, msg.match_id)):
        raise MatchExistsError(f"match {msg.match_id!r} already exists")
    seats, extra = [], []
    for seat, bot in enumerate((msg.south, msg.north)):
        player, op = lobby.bot_seat(bot)
        seats.append(JoinChange(seat, player))
        extra.append(op)
    room = await lobby.open_match(variant, msg.rated, seats, 0, extra, msg.match_id)
    m = room.match
    async with room.lock:
        for action in opening:
            mover = m.seat_to_move()
            assert mover is not None
            change = m.prepare_action(mover, action, m.ply)
            assert isinstance(change, ActionChange)  # a fresh ply is never a duplicate
            op = op_action(m.match_id, change.ply, mover, action.token(), change.clocks_ms)
            room.send_all(await a.store_and_commit(room, change, [op]))
    room.follow(s)
    a.after_change(room)
    return m.snapshot(None, room.spectators)


async def standings(arena: Arena, limit: int) -> Standings:
    """Stored Glicko-2 ratings with results and head-to-head of every finished rated game."""
    rows = await arated_results(arena.storage.path)
    names: dict[str, str] = {}
    results = []
    for first, second, score, name0, name1 in rows:
        names[first], names[second] = name0, name1
        results.append(GameResult(first, second, score))
    table, h2h = compute(results)
    for line in table:  # the stored rating is the one of record (same updates, same order)
        stored = arena.ratings.get(line.name)
        if stored is not None:
            line.rating = stored[0]
    table.sort(key=lambda s: (-s.rating.rating, s.name))
    table = table[:limit]
    kept = {s.name for s in table}
    return Standings(
        rows=[StandingRow(name=names[s.name], rating=round(s.rating.rating, 1), rd=round(s.rating.rd, 1),
                          games=s.games, wins=s.wins, draws=s.draws, losses=s.losses) for s in table],
        head_to_head=[HeadToHead(player=names[p], opponent=names[o], wins=w, draws=d, losses=lo)
                      for (p, o), (w, d, lo) in sorted(h2h.items()) if p in kept and o in kept],
    )


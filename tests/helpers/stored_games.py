"""Finished games written straight into a database, for tests that read, replay or review stored games: a record
that ends by the rules is stored with that end; one that does not, as resigned by the side to move."""

from __future__ import annotations

from pathlib import Path

from protocol import EndReason, Game, Variant
from server.storage import Storage, open_storage
from server.storage.explore import FinishedGame, Mover, explore_ops
from server.storage.writer import op_action, op_create, op_finish, op_join, op_player


async def store_finished(path: str | Path, games: dict[str, tuple[Variant, str]],
                         names: tuple[str, str] = ("alice", "bob")) -> dict[str, Game]:
    """Store each record as a finished match by that id between `names` (South, North), resigned by the side to move
if the rules did not end it; return the games."""
    storage = await open_storage(path)
    try:
        return await write_finished(storage, games, names)
    finally:
        await storage.close()


async def write_finished(storage: Storage, games: dict[str, tuple[Variant, str]],
                         names: tuple[str, str] = ("alice", "bob"), index: bool = False, rated: bool = True,
                         ratings: tuple[float, float] = (1500.0, 1500.0),
                         bots: tuple[str | None, str | None] = (None, None)) -> dict[str, Game]:
    """`store_finished` through an open storage (a running server's); with `index`, each game's opening-explorer
    rows are written with its end (as the arena does), its players rated `ratings` and hosted bots where `bots`
    names one."""
    played: dict[str, Game] = {}
    await storage.write([op_player(f"p-{names[0]}", names[0], None, bots[0]),
                         op_player(f"p-{names[1]}", names[1], None, bots[1])])
    for match_id, (variant, record) in games.items():
        game = Game.from_record(variant, record)
        reason = game.position.end or EndReason.RESIGN
        result = None if game.position.end is None else game.result or 0
        ops = [op_create(match_id, variant.text(), rated, 0), op_join(match_id, 0, f"p-{names[0]}", False),
               op_join(match_id, 1, f"p-{names[1]}", True)]
        ops += [op_action(match_id, ply, int(game.positions[ply].to_move), action.token(), (0, 0))
                for ply, action in enumerate(game.actions)]
        winner = (1 - int(game.position.to_move) if result is None else None if result == 0 else int(result < 0))
        ops.append(op_finish(match_id, result, winner, reason))
        if index:
            seats = (Mover(f"p-{names[0]}", ratings[0], bots[0] is not None),
                     Mover(f"p-{names[1]}", ratings[1], bots[1] is not None))
            ops += explore_ops(FinishedGame(match_id, variant, record.split(), rated, seats, winner, reason,
                                            float(len(played))))
        await storage.write(ops)
        played[match_id] = game
    return played

"""Finished games written straight into a database, for tests that read, replay or review stored games."""

from __future__ import annotations

from pathlib import Path

from protocol import Game, Variant
from server.storage import Storage, open_storage
from server.storage.writer import op_action, op_create, op_finish, op_join, op_player


async def store_finished(path: str | Path, games: dict[str, tuple[Variant, str]],
                         names: tuple[str, str] = ("alice", "bob")) -> dict[str, Game]:
    """Store each record as a finished match by that id between `names` (South, North); return the games."""
    storage = await open_storage(path)
    try:
        return await write_finished(storage, games, names)
    finally:
        await storage.close()


async def write_finished(storage: Storage, games: dict[str, tuple[Variant, str]],
                         names: tuple[str, str] = ("alice", "bob")) -> dict[str, Game]:
    """`store_finished` through an open storage (a running server's)."""
    played = {}
    await storage.write([op_player(f"p-{names[0]}", names[0], None), op_player(f"p-{names[1]}", names[1], None)])
    for match_id, (variant, record) in games.items():
        game = Game.from_record(variant, record)
        reason = game.position.end
        assert reason is not None, "a stored finished game ends by the rules here"
        result = game.result or 0
        ops = [op_create(match_id, variant.text(), True, 0), op_join(match_id, 0, f"p-{names[0]}", False),
               op_join(match_id, 1, f"p-{names[1]}", True)]
        ops += [op_action(match_id, ply, int(game.positions[ply].to_move), action.token(), (0, 0))
                for ply, action in enumerate(game.actions)]
        ops.append(op_finish(match_id, result, None if result == 0 else int(result < 0), reason))
        await storage.write(ops)
        played[match_id] = game
    return played

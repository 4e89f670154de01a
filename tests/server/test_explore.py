"""The opening explorer over the wire (`explore`): counts and the mover's results from the index, its filters, the
solver's values beside the moves, and the index kept by games that finish here and across a restart."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import asyncpg

from bots.review import perfect_valuer
from protocol import Game, Position, Variant
from protocol.actions import Sow
from server.storage import open_storage
from tests.conftest import Serve
from tests.helpers.stored_games import write_finished
from tests.helpers.wire import Client, live_match, move_answer

SMALL = Variant.parse("kalah(2,3)")
PEOPLE = {"a1": (SMALL, "1 5 2 5"), "a2": (SMALL, "1 4 1 5"), "a3": (SMALL, "1 5 1 4 2 4 5"),
          "b1": (SMALL, "2 4 1 5 5 4 5"), "b2": (SMALL, "2 4 1 4 2")}
"""alice (South, rated 1450) against bob (North, 1720), rated: South wins a1, a3; North a2, b2; b1 is drawn."""
BOTS = {"c1": (SMALL, "2 4 1 4 2")}
"""Two hosted bots (rated 1500), unrated: North wins."""


async def store_hand_made(db: Path) -> None:
    """The hand-made games, indexed as the arena indexes a game that ends."""
    storage = await open_storage(db)
    try:
        await write_finished(storage, PEOPLE, ("alice", "bob"), index=True, ratings=(1450.0, 1720.0))
        await write_finished(storage, BOTS, ("greedy", "random"), index=True, rated=False,
                             bots=("greedy", "random"))
    finally:
        await storage.close()


def counts(answer: dict[str, Any]) -> dict[str, tuple[int, int, int, int]]:
    """Each move's (games, wins, draws, losses) of an `explored` answer."""
    return {m["action"]: (m["games"], m["wins"], m["draws"], m["losses"]) for m in answer["moves"]}


async def explore(client: Client, **filters: Any) -> dict[str, Any]:
    """The explorer's answer for kalah(2,3) with `filters` (no values unless asked)."""
    filters.setdefault("values", False)
    return await client.request("explored", timeout=30, type="explore", variant="kalah(2,3)", **filters)


async def test_counts_and_the_movers_results_match_the_stored_games(serve: Serve, tmp_path: Path) -> None:
    """From the start and after a move, each move's games, the mover's wins, draws and losses and the movers' average
    rating are those of the hand-made games; the most played first; a position no game reached has no move."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    running = await serve(db)
    c = await Client.open(running.url, None)
    start = await explore(c)
    assert start["position"] == "3,3,0,3,3,0 S 0 -" and start["games"] == 6
    assert counts(start) == {"1": (3, 2, 0, 1), "2": (3, 0, 1, 2)}
    assert [m["average_rating"] for m in start["moves"]] == [1450, 1467]
    assert start["moves"][0]["after"] == "0,4,1,4,3,0 N 1 -" and start["moves"][0]["last_match"] in PEOPLE
    after_one = await explore(c, position=start["moves"][0]["after"])
    assert counts(after_one) == {"5": (2, 0, 0, 2), "4": (1, 1, 0, 0)}
    assert [m["action"] for m in after_one["moves"]] == ["5", "4"]
    assert after_one["moves"][0]["average_rating"] == 1720
    nowhere = await explore(c, position="4,1,1,5,0,1 S 2 -")
    assert nowhere["moves"] == [] and nowhere["games"] == 0
    await c.send(type="explore", variant="kalah(2,3)", position="1,2,3 S 0 -")
    assert await c.error() == "bad_notation"
    await c.close()


async def test_filters_rated_rating_range_player_and_movers(serve: Serve, tmp_path: Path) -> None:
    """Only rated games, a range of the movers' ratings, one player's games, and people's or hosted bots' moves each
    leave out exactly the games they should."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    running = await serve(db)
    c = await Client.open(running.url, None)
    assert counts(await explore(c, rated=True)) == {"1": (3, 2, 0, 1), "2": (2, 0, 1, 1)}
    assert counts(await explore(c, movers="bots")) == {"2": (1, 0, 0, 1)}
    assert counts(await explore(c, movers="people")) == {"1": (3, 2, 0, 1), "2": (2, 0, 1, 1)}
    assert counts(await explore(c, player="greedy")) == {"2": (1, 0, 0, 1)}
    assert counts(await explore(c, player="ALICE")) == {"1": (3, 2, 0, 1), "2": (2, 0, 1, 1)}
    assert counts(await explore(c, player="nobody")) == {}
    assert counts(await explore(c, min_rating=1400, max_rating=1500)) == {"1": (3, 2, 0, 1), "2": (2, 0, 1, 1)}
    assert counts(await explore(c, min_rating=1500)) == {"2": (1, 0, 0, 1)}
    north = "0,4,1,4,3,0 N 1 -"
    assert counts(await explore(c, position=north, min_rating=1700)) == {"5": (2, 0, 0, 2), "4": (1, 1, 0, 0)}
    assert counts(await explore(c, position=north, max_rating=1700)) == {}
    await c.send(type="explore", variant="kalah(2,3)", min_rating=1600, max_rating=1500)
    assert await c.error() == "bad_field"
    await c.close()


async def test_each_move_is_valued_and_the_solvers_move_named(serve: Serve, tmp_path: Path) -> None:
    """On a small board every value is proved: the value after each move and the position's value are the solver's,
    and the solver's move is the one the `perfect` bot plays."""
    db = tmp_path / "arena.sqlite3"
    await store_hand_made(db)
    running = await serve(db)
    c = await Client.open(running.url, None)
    value = perfect_valuer(egdb_seeds=0)
    for fen in ("3,3,0,3,3,0 S 0 -", "0,4,1,4,3,0 N 1 -"):
        answer = await explore(c, position=fen, values=True)
        position = Position.from_fen(SMALL, fen)
        root = value(position, 1000)
        assert (answer["value"], answer["exact"], answer["solver"]) == (root.value, True, root.best[0])
        for move in answer["moves"]:
            after = Position.from_fen(SMALL, move["after"])
            expected = int(after.margin) if after.over else value(after, 1000).value
            assert (move["value"], move["exact"]) == (expected, True)
    await c.close()


async def test_a_game_finished_here_is_indexed_with_its_end_and_kept_across_a_restart(
        serve: Serve, tmp_path: Path) -> None:
    """A game played to its end on the server is in the explorer at once, and still after the server restarts; while
    it is played, its players get no values at its position (whatever the ply written), only the counts."""
    db = tmp_path / "arena.sqlite3"
    running = await serve(db)
    south, north, match_id = await live_match(running.url, "kalah(2,3)", ("sue", "ned"))
    await north.send(type="explore", variant="kalah(2,3)", position="3,3,0,3,3,0 S 7 -")
    assert await north.error() == "in_play"
    assert (await explore(north))["moves"] == []
    game = Game.from_record(SMALL, "1 5 2 5")
    for ply, action in enumerate(game.actions):
        mover = south if game.positions[ply].to_move.letter == "S" else north
        assert (await move_answer(mover, match_id, ply, int(action.token())))["type"] == "ack"
    reader = await Client.open(running.url, None)
    assert counts(await explore(reader)) == {"1": (1, 1, 0, 0)}
    assert counts(await explore(reader, player="ned")) == {"1": (1, 1, 0, 0)}
    for client in (south, north, reader):
        await client.close()
    await running.close()
    restarted = await serve(db)
    reader = await Client.open(restarted.url, None)
    answer = await explore(reader, position="0,4,1,4,3,0 N 1 -")
    assert counts(answer) == {"5": (1, 0, 0, 1)} and answer["moves"][0]["last_match"] == match_id
    await reader.close()


async def drop_index(db: str | Path) -> None:
    """Take the index out of a database, as one of version 16 has none (the later versions' tables are made again
    only if missing)."""
    statements = ("DROP TABLE explore", "DELETE FROM schema_version WHERE version >= 17")
    if isinstance(db, Path):
        with closing(sqlite3.connect(db)) as lite:
            for statement in statements:
                lite.execute(statement)
            lite.commit()
        return
    conn = await asyncpg.connect(db)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def test_the_migration_indexes_the_games_stored_before_it(serve: Serve, any_db: str | Path) -> None:
    """Games stored before the index existed are indexed when the server opens the database (SQLite and
    PostgreSQL), and a game indexed later adds to their rows."""
    storage = await open_storage(any_db)
    await write_finished(storage, PEOPLE, ("alice", "bob"))
    await storage.close()
    await drop_index(any_db)
    running = await serve(any_db)
    c = await Client.open(running.url, None)
    assert counts(await explore(c)) == {"1": (3, 2, 0, 1), "2": (2, 0, 1, 1)}
    await write_finished(running.arena.storage, BOTS, ("greedy", "random"), index=True, rated=False,
                         bots=("greedy", "random"))
    assert counts(await explore(c)) == {"1": (3, 2, 0, 1), "2": (3, 0, 1, 2)}
    assert counts(await explore(c, movers="bots")) == {"2": (1, 0, 0, 1)}
    await c.close()


async def test_counts_match_the_stored_games_counted_one_by_one(serve: Serve, tmp_path: Path) -> None:
    """For random games between several players, each answer along stored lines (and under each filter) is what
    counting the stored games themselves gives: every game that passed through the position and the move it played
    there, with the mover's result."""
    rng = random.Random(7)
    variant = Variant.parse("kalah(3,2)")
    db = tmp_path / "arena.sqlite3"
    storage = await open_storage(db)
    games: list[tuple[Game, str, str, bool]] = []
    names = ["ann", "ben", "cat", "dan"]
    for index in range(40):
        game = Game(variant)
        while not game.over:
            game.play(Sow(rng.choice(game.position.legal_bins())))
        south, north = rng.sample(names, 2)
        rated = rng.random() < 0.5
        await write_finished(storage, {f"r{index}": (variant, game.record())}, (south, north), index=True,
                             rated=rated)
        games.append((game, south, north, rated))
    await storage.close()
    running = await serve(db)
    c = await Client.open(running.url, None)

    def expected(fen: str, rated: bool, player: str | None) -> dict[str, tuple[int, int, int, int]]:
        """The counts of the stored games themselves at the board of `fen`."""
        board = fen.split(" ")
        found: dict[str, list[int]] = {}
        for game, south, north, game_rated in games:
            if (rated and not game_rated) or (player is not None and player not in (south, north)):
                continue
            played: set[str] = set()
            for position, action in zip(game.positions, game.actions, strict=False):
                here = position.fen().split(" ")
                if (here[0], here[1], here[3]) != (board[0], board[1], board[3]) or action.token() in played:
                    continue
                played.add(action.token())
                margin = game.result or 0
                mover_wins = margin > 0 if position.to_move.letter == "S" else margin < 0
                row = found.setdefault(action.token(), [0, 0, 0, 0])
                row[0] += 1
                row[1 if margin and mover_wins else 2 if not margin else 3] += 1
        return {action: (g, w, d, lost) for action, (g, w, d, lost) in found.items()}

    for game, *_ in games[:5]:
        for ply in range(min(3, len(game.positions) - 1)):
            fen = game.positions[ply].fen()
            for rated, player in ((False, None), (True, None), (False, "ann")):
                answer = await c.request("explored", type="explore", variant=variant.text(), position=fen,
                                         values=False, rated=rated, player=player)
                assert counts(answer) == expected(fen, rated, player), (fen, rated, player)
                await asyncio.sleep(0.1)  # within the connection's message budget
    await c.close()

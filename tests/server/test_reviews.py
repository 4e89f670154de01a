"""Game review over the wire (`review`): made once through the analysis queue, stored, read back by later requests
and after a restart, refused for games not over, held by the queue's per-address bound, and made by the server
itself for games that finish (and made again, when the queue is idle, while they hold estimates), taken over from a
node killed mid-review once its claim lapses."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bots.review import Valuation, perfect_valuer, review_game
from protocol import Game, Position, Sow, Variant
from protocol.messages import encode
from protocol.review_messages import GameReview
from server import assembly
from server.front.analysis import Analyst
from server.front.reviews import Reviews
from server.storage import open_storage
from server.storage.reviews import REVIEW, op_review
from tests.conftest import Serve
from tests.helpers.processes import KALAH, first_line, started
from tests.helpers.stored_games import store_finished, write_finished
from tests.helpers.wire import Client, eventually, live_match

SMALL = Variant.parse("kalah(2,3)")
GAMES = {"g1": (SMALL, "1 5 1 4 2 4 5"), "g2": (SMALL, "2 5 1 5 4 1 4 2"), "g3": (SMALL, "1 5 2 5")}


async def test_a_review_is_made_once_stored_and_read_back_after_a_restart(serve: Serve, tmp_path: Path) -> None:
    """The first `review` makes the review (its losses those of `bots.review`), the second reads the stored one,
    and a restarted server answers the same review without making it again."""
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, GAMES)
    arena = await serve(db)
    c = await Client.open(arena.url, "reader")
    first = await c.request("game_review", timeout=30, type="review", match_id="g1")
    expected = review_game("g1", SMALL, GAMES["g1"][1], ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    assert [p["loss"] for p in first["plies"]] == [p.loss for p in expected.plies] == [0, 10, 2, 0, 4, 2, 0]
    assert first["exact"] and [p["player"] for p in first["plies"][:2]] == ["alice", "bob"]
    again = await c.request("game_review", timeout=10, type="review", match_id="g1")
    assert again == first and arena.reviews.made == 1
    assert await arena.arena.storage.fetch_rows(REVIEW, "g1")
    await c.close()
    await arena.close()
    restarted = await serve(db)
    c = await Client.open(restarted.url, "reader2")
    assert await c.request("game_review", timeout=10, type="review", match_id="g1") == first
    assert restarted.reviews.made == 0
    await c.close()


async def test_only_a_finished_game_is_reviewed(serve: Serve, tmp_path: Path) -> None:
    """A live match is refused `in_play` (no help during a game), an unknown one `unknown_match`."""
    arena = await serve()
    south, north, match_id = await live_match(arena.url, "kalah(3,3)", ("sly", "shy"))
    await south.send(type="review", match_id=match_id)
    assert await south.error() == "in_play"
    await north.send(type="review", match_id="nothing-here")
    assert await north.error() == "unknown_match"
    for client in (south, north):
        await client.close()


async def test_a_flood_of_reviews_from_one_address_is_held_to_one_at_a_time(
        serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reviews asked at once from one address: one is made, the others are refused `too_many` with a retry hint;
    asking for the review being made shares it; another address is served meanwhile; the asker's connection answers
    its other requests while its review is being made, its own analyses included."""
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, GAMES)
    arena = await serve(db)
    analyst = arena.router.analyst
    decide = analyst._decide

    def slow(position: Position, budget_s: float) -> tuple[list[int], int, bool, int]:
        """The analyst's answer, a little later (so the reviews overlap)."""
        time.sleep(0.1)
        return decide(position, budget_s)

    monkeypatch.setattr(analyst, "_decide", slow)
    clients = [await Client.open(arena.url, f"flood{i}") for i in range(3)]
    sharer = await Client.open(arena.url, "sharer")
    other = await Client.open(arena.url, "other", source="127.0.0.2")
    for client, match_id in zip(clients, GAMES, strict=True):
        await client.send(type="review", match_id=match_id)
        await asyncio.sleep(0.05)
    await clients[0].send(type="standings")  # served while its review is being made
    start = Game(SMALL).position.fen()
    await clients[0].send(type="analyse", variant="kalah(2,3)", position=start, budget_ms=100)  # beside the review
    await sharer.send(type="review", match_id="g1")
    await other.send(type="review", match_id="g2")
    answers = [await client.expect("game_review", timeout=30)
               if i == 0 else await client.expect("error", timeout=10) for i, client in enumerate(clients)]
    assert [a.get("code") for a in answers[1:]] == ["too_many", "too_many"]
    kinds = [m["type"] for m in clients[0].seen]
    assert kinds.index("standings_table") < kinds.index("game_review")
    assert kinds.index("analysis") < kinds.index("game_review")  # not refused: a review's positions are its own
    assert all(a.get("retry_ms") for a in answers[1:])
    assert (await sharer.expect("game_review", timeout=30)) == answers[0]
    assert (await other.expect("game_review", timeout=30))["match_id"] == "g2"
    assert arena.reviews.made == 2
    for client in [*clients, sharer, other]:
        await client.close()


async def test_the_server_reviews_the_games_that_finish(serve: Serve, tmp_path: Path) -> None:
    """With `review_every_s`, a game finished lately gets its review stored with no one asking for it."""
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"g3": GAMES["g3"]})
    arena = await serve(db, review_every_s=0.05)
    await eventually(lambda: arena.arena.storage.fetch_rows(REVIEW, "g3"), timeout=30, what="the stored review")
    assert arena.reviews.made == 1


def resigned_record(variant: Variant, plies: int, seed: int) -> str:
    """`plies` random sowings (the game not over): a game its side to move resigned."""
    rng = random.Random(seed)
    game = Game(variant)
    while len(game.actions) < plies:
        game.play(Sow(rng.choice(game.position.legal_bins())))
        assert not game.over
    return game.record()


def read_db(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Rows of a query on the database file, read beside the server that writes it."""
    with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as conn:
        return conn.execute(sql, params).fetchall()


async def test_a_game_claimed_by_a_node_killed_mid_review_is_reviewed_after_a_restart(tmp_path: Path) -> None:
    """`kalah serve` killed with SIGKILL while it reviews a finished game by itself leaves its claim; restarted, it
    takes the game over once the claim's lease lapses and stores its review with no one asking."""
    variant = Variant()
    record = resigned_record(variant, 8, seed=3)  # off the book: each position thinks its share, seconds in all
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"g64": (variant, record)})
    serve = [*KALAH, "serve", "--port", "0", "--db", str(db), "--log-level", "error", "--review-every", "0.1",
             "--review-lease", "2"]
    with started(serve, stdout=subprocess.PIPE, text=True) as proc:
        assert " on ws://" in first_line(proc)

        def claimed() -> bool:
            """The node claimed the game and has not stored its review yet."""
            return bool(read_db(db, "SELECT 1 FROM guards WHERE key = 'review:g64'")) and not read_db(
                db, "SELECT 1 FROM reviews WHERE match_id = 'g64'")

        await eventually(claimed, timeout=30, what="the node's claim on the game")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
    assert read_db(db, "SELECT 1 FROM guards WHERE key = 'review:g64'")
    assert not read_db(db, "SELECT 1 FROM reviews WHERE match_id = 'g64'")
    with started(serve, stdout=subprocess.PIPE, text=True) as proc:
        assert " on ws://" in first_line(proc)
        rows = await eventually(lambda: read_db(db, "SELECT review FROM reviews WHERE match_id = 'g64'"), timeout=90,
                                what="the review made after the restart")
        proc.terminate()
        proc.wait(timeout=30)
    review = GameReview.model_validate_json(str(rows[0][0]))
    assert [p.action for p in review.plies] == record.split()


class PressedAnalyst(Analyst):
    """The server's analyst with a switch that puts it under pressure (`PRESSED` on)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        real = self.pressure
        self.pressure = lambda: PRESSED[0] or real()


PRESSED = [True]


async def test_a_review_with_estimates_is_made_again_when_the_queue_is_idle(serve: Serve, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Stored reviews holding estimates are left alone while the server is under pressure; once the analysis queue is
    idle they are made again: one that can be proved is replaced by the proved review, one that cannot (clockwise
    sowing) is made again `review_redos` times and then left."""
    cycling = Variant.parse("kalah(2,3,clockwise=on)")
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"g1": GAMES["g1"], "cw": (cycling, "1 2 4 1")})
    perfect = perfect_valuer(egdb_seeds=0)

    def hurried(position: Position, budget_ms: int) -> Valuation:
        """The perfect bot's valuation, labelled an estimate (as one cut short under pressure is)."""
        return replace(perfect(position, budget_ms), exact=False, depth=2)

    pressed = review_game("g1", SMALL, GAMES["g1"][1], ("alice", "bob"), hurried)
    cycled = review_game("cw", cycling, "1 2 4 1", ("alice", "bob"), perfect)
    assert not pressed.exact and not cycled.exact
    storage = await open_storage(db)
    await storage.write([op_review("g1", encode(pressed), False), op_review("cw", encode(cycled), False)])
    await storage.close()
    PRESSED[0] = True
    monkeypatch.setattr(assembly, "Analyst", PressedAnalyst)
    arena = await serve(db, review_every_s=0.05, review_lease_s=0.2, review_redos=2)
    await asyncio.sleep(1.0)
    assert arena.reviews.redone == 0 and await arena.reviews.stored("g1") == pressed
    PRESSED[0] = False

    async def redone(match_id: str) -> int:
        """How many times the stored review was made again."""
        return int((await arena.arena.storage.fetch_rows("SELECT redone FROM reviews WHERE match_id = ?",
                                                         match_id))[0][0])

    await eventually(lambda: redone("cw"), timeout=30, what="the clockwise game's review made again")
    await eventually(lambda: arena.reviews.redone == 3, timeout=30, what="three reviews made again")
    made = await arena.reviews.stored("g1")
    assert made is not None and made.exact and [p.loss for p in made.plies] == [0, 10, 2, 0, 4, 2, 0]
    await asyncio.sleep(1.0)
    assert arena.reviews.redone == 3 and await redone("g1") == 1 and await redone("cw") == 2


async def test_a_review_made_again_never_holds_up_the_reviews_of_games_that_finish(
        serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a stored review is being made again (here held waiting for room for good), a game that finishes is
    still reviewed by the server itself."""
    cycling = Variant.parse("kalah(2,3,clockwise=on)")
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, {"cw": (cycling, "1 2 4 1")})
    cycled = review_game("cw", cycling, "1 2 4 1", ("alice", "bob"), perfect_valuer(egdb_seeds=0))
    storage = await open_storage(db)
    await storage.write([op_review("cw", encode(cycled), False)])
    await storage.close()
    waiting, release = asyncio.Event(), asyncio.Event()

    async def held(self: Reviews, match_id: str, redone: int) -> None:
        """A review made again that waits until released."""
        waiting.set()
        await release.wait()

    monkeypatch.setattr(Reviews, "_remake", held)
    arena = await serve(db, review_every_s=0.05)
    await asyncio.wait_for(waiting.wait(), 10)
    await write_finished(arena.arena.storage, {"g3": GAMES["g3"]}, names=("carol", "dan"))
    await eventually(lambda: arena.arena.storage.fetch_rows(REVIEW, "g3"), timeout=30, what="the new game's review")
    assert arena.reviews.made == 1
    release.set()

"""The `analyse` request: solver values of positions for clients (the replay screen)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from protocol import Game, Position, Variant
from protocol.messages import Analyse
from server.assembly import RunningServer
from server.core.networks import prefix_of
from server.core.rates import RateLimiter
from server.edge.session import Peer
from server.front.analysis import CROWDED_BUDGET_MS, Analyst
from tests.helpers.wire import Client, live_match


async def test_small_board_values_are_exact(arena: RunningServer) -> None:
    """Kalah(3,3) from the start is solved exactly: South wins by 2 (RULES.md table)."""
    c = await Client.open(arena.url, "student")
    start = Game(Variant(houses=3, seeds=3)).position.fen()
    await c.send(type="analyse", variant="kalah(3,3)", position=start, budget_ms=3000)
    answer = await c.expect("analysis", timeout=10)
    assert answer["exact"] and answer["value"] == 2 and answer["best"][0] in (1, 2, 3)
    await c.close()


async def test_finished_position_and_bad_requests(arena: RunningServer) -> None:
    """A finished position's value is its result; a bad or impossible position, or no hello, is refused."""
    c = await Client.open(arena.url, "student")
    over = Game.from_record(Variant(houses=1, seeds=3), "1").position
    await c.send(type="analyse", variant="kalah(1,3)", position=over.fen())
    answer = await c.expect("analysis")
    assert answer["value"] == 6 and answer["exact"] and answer["best"] == []
    await c.send(type="analyse", variant="kalah(6,4)", position="1,2,3 S 0 -")
    assert await c.error() == "bad_notation"
    await c.send(type="analyse", variant="kalah(6,4)", position="99999,4,4,4,4,4,0,4,4,4,4,4,4,0 S 0 -")
    assert await c.error() == "impossible_position"  # well-formed, but no kalah(6,4) game holds that many seeds
    anon = await Client.open(arena.url, None)
    await anon.send(type="analyse", variant="kalah(6,4)", position=Game().position.fen())
    assert await anon.error() == "hello_first"
    await c.close()
    await anon.close()


async def test_big_board_gives_a_bounded_value_in_budget(arena: RunningServer) -> None:
    """Kalah(12,12) cannot be solved in 50 ms: the answer is a depth-limited value, marked inexact."""
    c = await Client.open(arena.url, "student")
    start = Game(Variant(houses=12, seeds=12)).position.fen()
    await c.send(type="analyse", variant="kalah(12,12)", position=start, budget_ms=50)
    answer = await c.expect("analysis", timeout=10)
    assert not answer["exact"] and 1 <= answer["best"][0] <= 12
    await c.close()


async def test_the_analysis_time_of_networks_is_remembered_within_a_bound() -> None:
    """Each network's analysis time is kept for the fair queue, at most `max_networks` of them: past it, those
    whose record faded away (finished positions cost next to nothing), then the least recently served, are forgotten."""
    analyst = Analyst(max_networks=3)
    over = Game.from_record(Variant(houses=1, seeds=3), "1").position.fen()
    sizes = []
    for i in range(5):
        address = f"10.{i}.0.1"
        peer = Peer(address, RateLimiter(1e9, 10**9), network=prefix_of(address))
        answer = await analyst.aanalyse(Analyse(variant="kalah(1,3)", position=over), peer)
        assert answer is not None and answer.value == 6
        sizes.append(len(analyst.networks))
    analyst.close()
    assert sizes[:3] == [1, 2, 3] and max(sizes) == 3


def test_an_analysis_thinks_less_while_others_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Alone, an analysis gets its whole budget; while others wait, at most `CROWDED_BUDGET_MS`."""
    analyst = Analyst()
    budgets: list[float] = []

    def recording(position: Position, budget_s: float) -> tuple[list[int], int, bool, int]:
        """Note the budget; answer the first legal bin with value 0."""
        budgets.append(budget_s)
        return position.legal_bins()[:1], 0, False, 1

    monkeypatch.setattr(analyst, "_decide", recording)
    msg = Analyse(variant="kalah(6,4)", position=Game(Variant()).position.fen(), budget_ms=5000)
    try:
        analyst.pending = 1
        analyst.analyse(msg)
        analyst.pending = 3
        analyst.analyse(msg)
        assert budgets == [5.0, CROWDED_BUDGET_MS / 1000]
    finally:
        analyst.close()


@pytest.mark.parametrize(("capture", "value", "best"), [("standard", 8, 3), ("empty", 10, 3)])
async def test_kalah_6_4_start_is_exact_from_the_book(capture: str, value: int, best: int,
                                                      arena: RunningServer) -> None:
    """The wire's analysis of the Kalah(6,4) start says what `kalah solve` says: the book's proved value, exact."""
    c = await Client.open(arena.url, "student")
    variant = f"kalah(6,4,capture={capture})"
    start = Game(Variant.parse(variant)).position.fen()
    await c.send(type="analyse", variant=variant, position=start, budget_ms=200)
    answer = await c.expect("analysis", timeout=10)
    assert (answer["value"], answer["exact"], answer["depth"], answer["best"]) == (value, True, -1, [best])
    await c.close()


async def test_a_player_cannot_analyse_the_position_its_live_game_stands_at(arena: RunningServer) -> None:
    """Both players of a live match are refused `in_play` for the position it stands at (also asked with a clock in
    the variant text); a spectator is answered, so is a player about another position, and about the same
    position once the game has ended."""
    south, north, match_id = await live_match(arena.url, "kalah(3,3)", ("studious", "sly"))
    watcher = await Client.open(arena.url, "onlooker")
    start = Game(Variant(houses=3, seeds=3)).position.fen()
    for player in (south, north):
        await player.send(type="analyse", variant="kalah(3,3)", position=start, budget_ms=200)
        assert await player.error() == "in_play"
    await south.send(type="analyse", variant="kalah(3,3,clock=60+0)", position=start, budget_ms=200)
    assert await south.error() == "in_play"
    await watcher.send(type="analyse", variant="kalah(3,3)", position=start, budget_ms=200)
    assert (await watcher.expect("analysis", timeout=10))["value"] == 2
    later = Game.from_record(Variant(houses=3, seeds=3), "1").position.fen()
    await south.send(type="analyse", variant="kalah(3,3)", position=later, budget_ms=200)
    assert (await south.expect("analysis", timeout=10))["position"] == later
    await north.request("event", type="resign", match_id=match_id)
    await south.send(type="analyse", variant="kalah(3,3)", position=start, budget_ms=200)
    assert (await south.expect("analysis", timeout=10))["value"] == 2
    for c in (south, north, watcher):
        await c.close()


async def test_work_for_no_one_waits_behind_every_request_and_while_the_server_is_pressed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A `low` analysis (a review made again) starts only when no other request waits: one asked after it is served
    first; and while the server is under pressure it does not start at all."""
    analyst = Analyst()
    pressed = [False]
    analyst.pressure = lambda: pressed[0]
    held = threading.Event()
    served: list[str] = []

    def recording(position: Position, budget_s: float) -> tuple[list[int], int, bool, int]:
        """Note the position (the first one waits until released); answer its first bin."""
        served.append(position.fen())
        held.wait(10)
        return position.legal_bins()[:1], 0, True, -1

    monkeypatch.setattr(analyst, "_decide", recording)
    game = Game.from_record(Variant(houses=2, seeds=3), "1 5 1")
    first, later, low = (Analyse(variant="kalah(2,3)", position=p.fen()) for p in game.positions[:3])
    try:
        running = asyncio.create_task(analyst.aanalyse(first))
        await asyncio.sleep(0.1)
        waiting_low = asyncio.create_task(analyst.aanalyse(low, low=True))
        await asyncio.sleep(0.05)
        asked_after = asyncio.create_task(analyst.aanalyse(later))
        await asyncio.sleep(0.05)
        held.set()
        await asyncio.gather(running, waiting_low, asked_after)
        assert served == [first.position, later.position, low.position]
        served.clear()
        pressed[0] = True
        pressed_low = asyncio.create_task(analyst.aanalyse(low, low=True))
        await asyncio.sleep(0.5)
        assert served == [] and not pressed_low.done()
        pressed[0] = False
        await asyncio.wait_for(pressed_low, 10)
        assert served == [low.position]
    finally:
        analyst.close()

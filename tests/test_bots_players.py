"""Bot players: names, legal actions, pie rule and opening transfer, perfect play, a free event loop."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from bots.players import PLAYER_NAMES, Player, UnknownPlayerError, make_player
from bots.solver import Engine
from protocol import Game, Position, Sow, Swap, Transfer, Variant

NAMES = ["random", "greedy", "alphabeta:1", "alphabeta:6", "perfect", "perfect:8"]


@pytest.fixture(autouse=True)
def egdb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Databases built by the bots go to a temporary directory."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("name", NAMES)
def test_names_make_players(name: str) -> None:
    """Each documented name makes a Player that reports its name."""
    player = make_player(name)
    assert isinstance(player, Player)
    assert player.name == name


@pytest.mark.parametrize("name", ["", "minimax", "alphabeta", "alphabeta:0", "alphabeta:x", "greedy:3",
                                  "perfect:-1", "random:2"])
def test_unknown_names_raise_typed_error(name: str) -> None:
    """An unknown or malformed bot name raises UnknownPlayerError naming the choices."""
    with pytest.raises(UnknownPlayerError, match="unknown bot"):
        make_player(name)
    assert "alphabeta:N" in PLAYER_NAMES


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", ["kalah(3,3)", "kalah(4,2,pie=on,transfer=on)", "kalah(2,3,clockwise=on)",
                                  "kalah(3,2,relay=on,extra=off)", "kalah(3,3,majority=on,capture=empty)"])
async def test_whole_games_are_legal(name: str, text: str) -> None:
    """A bot plays whole games against a random bot with legal actions only."""
    variant = Variant.parse(text)
    bot, other = make_player(name), make_player("random")
    game = Game(variant)
    seat = 0
    while not game.over and game.ply < 200:
        mover = bot if game.position.to_move == seat else other
        action = await mover.choose(game.position, 0.2)
        assert action in game.position.legal_actions()
        game.play(action)
        if isinstance(action, Swap):
            seat = 1 - seat


async def test_perfect_plays_only_best_moves() -> None:
    """On a solved board the perfect bot always picks a move of the best value."""
    v = Variant(houses=3, seeds=3)
    engine = Engine(v)
    bot = make_player("perfect")
    rng = random.Random(3)
    pos = Position.initial(v)
    while not pos.over:
        action = await bot.choose(pos, 2.0)
        sol = engine.solve(pos, per_move=True)
        assert isinstance(action, Sow)
        assert action.bin in sol.best
        pos = pos.apply(Sow(rng.choice(pos.legal_bins())))


@pytest.mark.parametrize("name", ["random", "greedy", "alphabeta:4", "perfect"])
async def test_swap_decision_follows_the_value(name: str) -> None:
    """Offered the swap, a bot swaps exactly when its evaluation favours the opener (South)."""
    v = Variant(houses=3, seeds=3, pie=True)
    start = Position.initial(v)
    bot = make_player(name)
    for first in start.legal_bins():
        pos = start.apply(Sow(first))
        while not pos.swap_offered:
            pos = pos.apply(Sow(pos.legal_bins()[0]))
        action = await bot.choose(pos, 2.0)
        assert (action == Swap()) == (bot.evaluate(pos, time.monotonic() + 2.0) > 0)


async def test_perfect_swaps_exactly_when_the_opener_wins() -> None:
    """The perfect bot swaps after an opening that wins for South and not after a losing one."""
    v = Variant(houses=3, seeds=3, pie=True)
    engine = Engine(v.with_options(pie=False))
    start = Position.initial(v)
    bot = make_player("perfect")
    seen = set()
    for first in start.legal_bins():
        pos = start.apply(Sow(first))
        while not pos.swap_offered:
            pos = pos.apply(Sow(pos.legal_bins()[0]))
        value = engine.solve(pos).value
        seen.add(value > 0)
        assert (await bot.choose(pos, 2.0) == Swap()) == (value > 0)
    assert seen == {True, False}


@pytest.mark.parametrize("name", NAMES)
async def test_opening_transfer_is_chosen(name: str) -> None:
    """With the opening transfer due, every bot answers with a transfer (or none)."""
    v = Variant(houses=3, seeds=2, opening_transfer=True)
    pos = Position.initial(v)
    action = await make_player(name).choose(pos, 0.5)
    assert isinstance(action, Transfer)
    assert action in pos.legal_actions()


async def test_perfect_transfer_is_the_worst_for_south() -> None:
    """The perfect bot's opening transfer leaves South the lowest exact value."""
    v = Variant(houses=2, seeds=2, opening_transfer=True)
    pos = Position.initial(v)
    engine = Engine(v.with_options(opening_transfer=False))
    values = {}
    for action in pos.legal_actions():
        after = pos.apply(action)
        values[action] = after.margin if after.over else engine.solve(after).value
    chosen = await make_player("perfect").choose(pos, 2.0)
    assert values[chosen] == min(values.values())


async def test_event_loop_keeps_serving_while_searching() -> None:
    """While a bot searches, other coroutines keep running."""
    v = Variant(houses=6, seeds=6)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    action = await make_player("alphabeta:14").choose(Position.initial(v), 1.0)
    task.cancel()
    assert action in Position.initial(v).legal_actions()
    assert ticks >= 5

"""The perfect bot in Kalah(6,4), both capture rules, at the server's 1 s a move (slow: builds 24-seed databases).

Every move the bot makes, against itself and against the other bots, is checked with the
solver: the value after the move must be the value before it. The shipped books' entries are
proved again on a sample.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bots import book as book_mod
from bots.engines import Engines
from bots.players import PerfectPlayer, RandomPlayer, make_player
from bots.solver import Engine
from protocol import Capture, Position, Sow, Variant

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

BUDGET_S = 1.0
"""The hosted bots' default thinking time a move (server.core.hosted.DEFAULT_BUDGET_S)."""
EGDB_SEEDS = 24
GAME_VALUES = {"standard": 8, "empty": 10}
"""Kalah(6,4) under perfect play, from SOLVER-NOTES.md."""


@pytest.fixture(scope="module")
def egdb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both rule sets' databases up to 24 seeds, built once for the module (minutes, 2.4 GB)."""
    directory = tmp_path_factory.mktemp("egdb")
    for capture in GAME_VALUES:
        Engine(Variant(capture=Capture(capture)), tt_log2=4, egdb_seeds=EGDB_SEEDS, egdb_dir=directory)
    return directory


@pytest.fixture(scope="module")
def judges(egdb_dir: Path) -> dict[str, Engine]:
    """A solver per rule set, with the databases and a large table (kept across the checks)."""
    return {c: Engine(Variant(capture=Capture(c)), tt_log2=24, egdb_seeds=EGDB_SEEDS, egdb_dir=egdb_dir, workers=1)
            for c in GAME_VALUES}


@pytest.fixture(scope="module")
def pools(egdb_dir: Path) -> dict[str, Engines]:
    """An engine pool per rule set as a server has it (default bound, shipped books only), databases read ahead."""
    out = {}
    for capture in GAME_VALUES:
        out[capture] = Engines(egdb_dir=egdb_dir, book_dirs=[book_mod.PACKAGE_DIR])
        assert out[capture].preload(Variant(capture=Capture(capture)), EGDB_SEEDS, timeout=600)
    return out


def check_move(judge: Engine, position: Position, action: Sow) -> None:
    """The value after the move is the position's value (the move keeps all the mover can get)."""
    after = position.apply(action)
    want = judge.solve(position).value
    got = after.margin if after.over else judge.solve(after).value
    assert got == want, f"{action} in {position.fen()} gives {got:+d}, the position is worth {want:+d}"


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_perfect_against_itself_ends_at_the_game_value(capture: str, pools: dict[str, Engines],
                                                        judges: dict[str, Engine]) -> None:
    """Perfect against perfect, 1 s a move: every move proved and best, the game ends at +8 (standard) or +10."""
    v = Variant(capture=Capture(capture))
    bot = PerfectPlayer(engines=pools[capture])
    pos = Position.initial(v)
    while not pos.over:
        decision = bot.explain(pos, BUDGET_S)
        assert decision.exact, f"not proved at {pos.fen()}: {decision}"
        assert isinstance(decision.action, Sow)
        check_move(judges[capture], pos, decision.action)
        pos = pos.apply(decision.action)
    assert pos.margin == GAME_VALUES[capture]


@pytest.mark.parametrize("opponent", ["random", "greedy", "alphabeta:8", "strong"])
@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_perfect_against_other_bots_never_gives_a_seed_away(capture: str, opponent: str, pools: dict[str, Engines],
                                                           judges: dict[str, Engine]) -> None:
    """In either seat against another bot, 1 s a move, every move of the perfect bot keeps its position's value."""
    v = Variant(capture=Capture(capture))
    engines = pools[capture]
    bot = PerfectPlayer(engines=engines)
    for seat in (0, 1):
        other = RandomPlayer(seed=seat, engines=engines) if opponent == "random" else make_player(opponent, engines)
        pos = Position.initial(v)
        while not pos.over:
            if pos.to_move != seat:
                pos = pos.apply(other.decide(pos, BUDGET_S))
                continue
            decision = bot.explain(pos, BUDGET_S)
            assert isinstance(decision.action, Sow)
            check_move(judges[capture], pos, decision.action)
            pos = pos.apply(decision.action)


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_shipped_book_entries_are_proved(capture: str, judges: dict[str, Engine]) -> None:
    """A sample of the shipped book's Kalah(6,4) entries: the solver proves the same value and best house."""
    v = Variant(capture=Capture(capture))
    found = book_mod.load(v, [book_mod.PACKAGE_DIR])
    assert found is not None
    judge = judges[capture]
    own = sorted(key for key in found.entries if sum(key) <= v.total_seeds)
    keys = random.Random(1).sample(own, min(40, len(own)))
    for key in keys:
        entry = found.entries[key]
        assert judge.prove((*key[:6], 0, *key[6:], 0)) == (entry.pit, entry.value), entry.line(key)

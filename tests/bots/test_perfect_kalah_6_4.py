"""The perfect bot in Kalah(6,4), both capture rules, at the server's 1 s a move (slow: needs 24-seed databases).

Every move the bot makes, against itself and against the other bots, is checked with the
solver: the value after the move must be the value before it. The shipped books' entries are
proved again on a sample. Whole games of the bot against the others, stored and reviewed by
`kalah review`, are checked with the solver at every ply.

The databases are those of `$KALAH_EGDB_DIR` for a rule set whose levels 1..24 are all there
(read only: nothing is written there), else they are built into a temporary folder (minutes,
1.2 GB a rule set).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from bots import book as book_mod
from bots import egdb
from bots.engines import Engines
from bots.players import PerfectPlayer, RandomPlayer, make_player
from bots.solver import Engine
from protocol import Capture, Game, Position, Sow, Variant
from tests.helpers.processes import KALAH, run
from tests.helpers.stored_games import store_finished

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

BUDGET_S = 1.0
"""The hosted bots' default thinking time a move (server.core.hosted.DEFAULT_BUDGET_S)."""
EGDB_SEEDS = 24
T = TypeVar("T")
GAME_VALUES = {"standard": 8, "empty": 10}
"""Kalah(6,4) under perfect play, from SOLVER-NOTES.md."""


class PerRuleSet(dict[str, T]):
    """A value per rule set (by capture rule), made on first need and kept."""

    def __init__(self, make: Callable[[str], T]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, capture: str) -> T:
        """Make and keep the rule set's value."""
        self[capture] = self.make(capture)
        return self[capture]


@pytest.fixture(scope="module")
def egdb_dirs(tmp_path_factory: pytest.TempPathFactory) -> PerRuleSet[Path]:
    """Each rule set's folder of databases up to 24 seeds, found or built on first need: `$KALAH_EGDB_DIR` where its
    levels 1..24 are all there (only read), else a temporary folder they are built into once."""

    def folder(capture: str) -> Path:
        """The folder of `capture`'s databases (built there first if need be)."""
        variant = Variant(capture=Capture(capture))
        shared = os.environ.get(egdb.ENV_DIR)
        if shared and egdb.present_seeds(variant, Path(shared), EGDB_SEEDS) >= EGDB_SEEDS:
            return Path(shared)
        built = tmp_path_factory.mktemp(f"egdb-{capture}")
        Engine(variant, tt_log2=4, egdb_seeds=EGDB_SEEDS, egdb_dir=built)
        return built

    return PerRuleSet[Path](folder)


@pytest.fixture(scope="module")
def judges(egdb_dirs: PerRuleSet[Path]) -> PerRuleSet[Engine]:
    """A solver per rule set (made on first need), with the databases and a large table (kept across the checks)."""
    return PerRuleSet[Engine](lambda c: Engine(Variant(capture=Capture(c)), tt_log2=24, egdb_seeds=EGDB_SEEDS,
                                               egdb_dir=egdb_dirs[c], workers=1, build_egdb=False))


@pytest.fixture(scope="module")
def pools(egdb_dirs: PerRuleSet[Path]) -> PerRuleSet[Engines]:
    """An engine pool per rule set (made on first need) as a server has it (default bound, shipped books only),
    databases read ahead."""

    def pool(capture: str) -> Engines:
        """The rule set's pool."""
        engines = Engines(egdb_dir=egdb_dirs[capture], book_dirs=[book_mod.PACKAGE_DIR])
        assert engines.preload(Variant(capture=Capture(capture)), EGDB_SEEDS, timeout=600)
        return engines

    return PerRuleSet[Engines](pool)


def check_move(judge: Engine, position: Position, action: Sow) -> None:
    """The value after the move is the position's value (the move keeps all the mover can get)."""
    after = position.apply(action)
    want = judge.solve(position).value
    got = after.margin if after.over else judge.solve(after).value
    assert got == want, f"{action} in {position.fen()} gives {got:+d}, the position is worth {want:+d}"


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_perfect_against_itself_ends_at_the_game_value(capture: str, pools: PerRuleSet[Engines],
                                                        judges: PerRuleSet[Engine]) -> None:
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
def test_perfect_against_other_bots_never_gives_a_seed_away(capture: str, opponent: str, pools: PerRuleSet[Engines],
                                                           judges: PerRuleSet[Engine]) -> None:
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
def test_shipped_book_entries_are_proved(capture: str, judges: PerRuleSet[Engine]) -> None:
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


def bot_game(capture: str, opponent: str, seat: int, engines: Engines) -> str:
    """The record of a whole game of the perfect bot in `seat` against `opponent`, 1 s a move each."""
    pos = Position.initial(Variant(capture=Capture(capture)))
    bot = PerfectPlayer(engines=engines)
    other = RandomPlayer(seed=seat, engines=engines) if opponent == "random" else make_player(opponent, engines)
    actions = []
    while not pos.over:
        action = bot.explain(pos, BUDGET_S).action if pos.to_move == seat else other.decide(pos, BUDGET_S)
        assert isinstance(action, Sow)
        actions.append(action.token())
        pos = pos.apply(action)
    return " ".join(actions)


@pytest.mark.parametrize("capture", ["standard", "empty"])
async def test_the_review_of_whole_bot_games_is_the_solvers_at_every_ply(capture: str, pools: PerRuleSet[Engines],
                                                                         judges: PerRuleSet[Engine],
                                                                         egdb_dirs: PerRuleSet[Path],
                                                                         tmp_path: Path) -> None:
    """Whole games of the perfect bot against greedy, random and alphabeta:8, in both seats, stored and reviewed by
    `kalah review --db --json` with the databases: at every ply the review's value before and after and its loss are
    the solver's wherever the review calls them proved (and its best move keeps the value), and every other figure
    is labelled an estimate."""
    variant = Variant(capture=Capture(capture))
    games = {f"{opponent.replace(':', '')}-{seat}": (variant, bot_game(capture, opponent, seat, pools[capture]))
             for opponent in ("greedy", "random", "alphabeta:8") for seat in (0, 1)}
    db = tmp_path / "arena.sqlite3"
    await store_finished(db, games)
    judge = judges[capture]
    env = {**os.environ, egdb.ENV_DIR: str(egdb_dirs[capture])}
    for match_id, (_, record) in games.items():
        done = await asyncio.to_thread(run, [*KALAH, "review", match_id, "--db", str(db), "--json"], 900, env=env)
        assert done.returncode == 0, done.stderr
        review = json.loads(done.stdout)
        game = Game.from_record(variant, record)
        values = [p.margin if p.over else judge.solve(p).value for p in game.positions]
        assert [p["action"] for p in review["plies"]] == record.split()
        for ply, before, after in zip(review["plies"], values[:-1], values[1:], strict=True):
            where = f"{match_id} ply {ply['ply']} at {game.positions[ply['ply']].fen()}"
            assert ply["loss"] >= 0, where
            if ply["exact"]:
                sign = 1 if ply["side"] == "south" else -1
                assert (ply["value"], ply["after"]) == (before, after), where
                assert ply["loss"] == sign * (before - after), where
                best = game.positions[ply["ply"]].apply(Sow(int(ply["best"][0])))
                assert (best.margin if best.over else judge.solve(best).value) == before, f"best move at {where}"
            else:
                assert ply["depth"] >= 0 and ply["mark"] != "unjudged", where
        assert review["exact"] == all(p["exact"] for p in review["plies"])

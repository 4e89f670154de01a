"""The perfect bot's bench (bench/perfect.py) on small boards: its counts add up and its judge catches bad moves."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bots import egdb
from bots.book import Book, house_key
from bots.book_builder import Builder, Plan
from bots.engines import Engines
from bots.players import Decision, PerfectPlayer
from bots.solver import Engine, relative_board
from protocol import Position, Sow, Variant
from tests.helpers.processes import ROOT, run

sys.path.insert(0, str(ROOT / "bench"))
import perfect

SMALL = Variant(houses=4, seeds=4)
BUDGET_S = 0.5


@pytest.fixture(autouse=True)
def no_operator_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No databases or operators' books from the user's cache."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path / "egdb"))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "none"))


def small_book(directory: Path) -> Book:
    """A book of Kalah(4,4)'s hard positions (the start's every move valued), saved in `directory`."""
    book = Book(egdb.rule_key(SMALL))
    Builder(Engine(SMALL, tt_log2=18), book, Plan(depth=2, node_limit=3000, per_move_depth=0, check_tt_log2=16)).run(
        Position.initial(SMALL))
    book.save(directory / f"book-v1-kalah-{egdb.rule_key(SMALL)}.txt")
    return book


def judge_of(book: Book) -> perfect.Judge:
    """A judge of Kalah(4,4) reading `book`, with a small node limit so that some values need full solves."""
    return perfect.Judge(Engine(SMALL, tt_log2=18), book, node_limit=200)


def test_counts_add_up_and_every_move_keeps_the_value(tmp_path: Path) -> None:
    """Against itself, random and greedy in both seats: each move counted once by source, some from the book, and the
    judge finds every one keeping the value; against itself the game ends at the book's value of the start."""
    book = small_book(tmp_path)
    tallies = perfect.run_variant(SMALL, Engines(book_dirs=[tmp_path]), 0, BUDGET_S, ["random", "greedy"], 2,
                                  judge_of(book))
    assert set(tallies) == {("perfect", "both seats"), ("random", "South"), ("random", "North"),
                            ("greedy", "South"), ("greedy", "North")}
    for tally in tallies.values():
        count = tally.sources()
        assert set(count) <= set(perfect.SOURCES)
        assert sum(count.values()) == len(tally.moves) == len(tally.verdicts) > 0
        assert all(verdict.keeps for _, verdict in tally.verdicts)
    assert sum(t.sources()["book"] for t in tallies.values()) > 0
    start = book.get(relative_board(Position.initial(SMALL)))
    assert start is not None and tallies["perfect", "both seats"].margins == [start.value]
    line = perfect.summary(SMALL, tallies)
    assert "5 games" in line and "every move kept the value" in line


class LosingBot(PerfectPlayer):
    """The perfect bot, but at its first move outside the book that has a worse sowing, it plays that (not proved)."""

    def __init__(self, engines: Engines) -> None:
        super().__init__(egdb_seeds=0, engines=engines)
        self.solver = Engine(SMALL, tt_log2=18)
        self.blundered: Position | None = None

    def explain(self, position: Position, budget_s: float) -> Decision:
        """A sowing worse than the best, once; else the perfect bot's decision."""
        decision = super().explain(position, budget_s)
        action = decision.action
        if self.blundered is None and decision.source == "proof" and isinstance(action, Sow):
            per_move = self.solver.solve(position, per_move=True).per_move
            worse = [b for b, v in per_move.items() if v != per_move[action.bin]]
            if worse:
                self.blundered = position
                return replace(decision, action=Sow(worse[0]), exact=False, source="search")
        return decision


def test_the_judge_flags_a_sowing_that_loses_value(tmp_path: Path) -> None:
    """A bot that plays one worse sowing: that move is counted not proved and the judge says it lost value, by how
    much; every other move kept it."""
    book = small_book(tmp_path)
    engines = Engines(book_dirs=[tmp_path])
    bot = LosingBot(engines)
    game = perfect.play(bot, None, SMALL, 0, BUDGET_S)
    tally = perfect.Tally()
    tally.add(game, judge_of(book))
    lost = tally.lost()
    assert bot.blundered is not None and [m.position for m, _ in lost] == [bot.blundered]
    (move, verdict), = lost
    assert move.source == "not proved" and verdict.got is not None and verdict.want is not None
    assert verdict.got < verdict.want
    assert sum(v.keeps is True for _, v in tally.verdicts) == len(game.moves) - 1
    assert any(line.startswith("  LOST at ply") for line in tally.lines())


def test_the_judge_by_the_games_value_flags_the_sowing_that_gives_it_away(tmp_path: Path) -> None:
    """Judged by the game's value (the book's for the start), perfect play against itself keeps it at every move, and
    the one worse sowing of a game the bot plays against itself is the one move that gives it away."""
    book = small_book(tmp_path)
    start = book.get(relative_board(Position.initial(SMALL)))
    assert start is not None
    engines = Engines(book_dirs=[tmp_path])
    judge = perfect.Judge(Engine(SMALL, tt_log2=18), book, node_limit=200, game=start.value)
    fair = perfect.Tally()
    fair.add(perfect.play(PerfectPlayer(egdb_seeds=0, engines=engines), None, SMALL, 0, BUDGET_S), judge)
    assert fair.verdicts and all(v.keeps for _, v in fair.verdicts)
    bot = LosingBot(engines)
    tally = perfect.Tally()
    tally.add(perfect.play(bot, None, SMALL, 0, BUDGET_S), judge)
    (move, verdict), = tally.lost()
    assert move.position == bot.blundered and verdict.how == "a proof at the game's value"
    assert any("which keeps the game's value" in line for line in tally.lines())
    assert "every move kept the value of the game" in perfect.summary(SMALL, {("perfect", "both seats"): fair}, True)


def test_the_judge_flags_a_book_move_below_the_books_value(tmp_path: Path) -> None:
    """A book whose start entry names a worse house (its value kept): the bot plays it from the book and the judge,
    checking it against the book's value, says it lost value."""
    book = small_book(tmp_path)
    key = house_key(relative_board(Position.initial(SMALL)))
    entry = book.entries[key]
    assert entry.per_move is not None
    worse = next(p for p, v in enumerate(entry.per_move) if v is not None and v < entry.value)
    book.entries[key] = replace(entry, pit=worse, per_move=None)
    book.save(tmp_path / f"book-v1-kalah-{egdb.rule_key(SMALL)}.txt")
    game = perfect.play(PerfectPlayer(egdb_seeds=0, engines=Engines(book_dirs=[tmp_path])), None, SMALL, 0, BUDGET_S)
    tally = perfect.Tally()
    tally.add(game, judge_of(book))
    (move, verdict), = tally.lost()
    assert move.position.ply == 0 and move.source == "book" and verdict.want == entry.value
    assert verdict.got == entry.per_move[worse]


@pytest.mark.parametrize(("by", "of"), [([], " of the game"), (["--judge-by", "position"], "")])
def test_the_bench_flag_runs_and_prints_a_summary(tmp_path: Path, by: list[str], of: str) -> None:
    """`python bench/solver.py --perfect --seeds 2 --judge` plays Kalah(6,2) and ends with a judged summary line (by the
    game's value, or by each position's)."""
    proc = run([sys.executable, "bench/solver.py", "--perfect", "--seeds", "2", "--captures", "empty",
                "--egdb-seeds", "0", "--rounds", "2", "--opponents", "random", "--budget", "0.2", "--judge",
                "--judge-seeds", "0", "--judge-tt-bits", "16", "--book-dir", str(tmp_path), *by], timeout=120)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("summary kalah(6,2,capture=empty): 3 games,") and "every move kept the value" + of in last

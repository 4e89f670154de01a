"""The opener's first turn under the pie rule (bots.pie): against a plain minimax that plays the swap itself."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from bots import pie
from bots.players import PerfectPlayer
from bots.solver import Engine
from protocol import Game, Position, Side, Sow, Swap, Variant


@pytest.fixture(autouse=True)
def no_operator_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bots read no operator's databases or books: every value here comes from search."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "books"))


def opener_minimax(position: Position) -> int:
    """The opener's final margin under best play by both, the swap being one of North's actions (rules only)."""
    return _minimax(position.variant, position.pits, position.to_move, position.pie_open, position.swapped,
                    position.end is not None)


@cache
def _minimax(variant: Variant, pits: tuple[int, ...], to_move: Side, pie_open: bool, swapped: bool,
             over: bool) -> int:
    """`opener_minimax` of a position by what decides its future (not its ply), so transpositions are shared."""
    if swapped and not pie_open:  # after the swap the same boards as without it, the opener on the other side
        return -_minimax(variant, pits, to_move, False, False, over)
    position = Position(variant, pits, to_move, 0, pie_open, False, swapped, None)
    if over:
        return position.margin if not swapped else -position.margin
    opener_moves = (to_move == Side.SOUTH) != swapped
    values = [opener_minimax(position.apply(a)) for a in position.legal_actions()]
    return max(values) if opener_moves else min(values)


def twin_valuer(variant: Variant) -> pie.Valuer:
    """Exact board values by the Python twin (the variant without the pie rule)."""
    engine = Engine(variant.with_options(pie=False), impl="py", egdb_seeds=0)

    def value_of(position: Position, left: int) -> tuple[int, bool]:
        """South's exact value of a board North is offered."""
        return engine.solve(position).value, True

    return value_of


BOARDS = ["kalah(2,3,pie=on)", "kalah(3,2,pie=on)", "kalah(3,3,pie=on)", "kalah(4,1,pie=on)",
          "kalah(4,2,pie=on)", "kalah(3,2,pie=on,capture=empty)"]


@pytest.mark.parametrize("variant", BOARDS)
def test_each_first_sowing_gets_the_value_minimax_gives_it(variant: str) -> None:
    """Every first sowing's opener value (Python twin's exact board values) equals the minimax that may swap."""
    start = Position.initial(Variant.parse(variant))
    choice = pie.choose(start, twin_valuer(start.variant))
    want = {b: opener_minimax(start.apply(Sow(b))) for b in start.legal_bins()}
    assert {b: line.opener for b, line in choice.per_move.items()} == want
    assert choice.exact and choice.line.opener == opener_minimax(start) == max(want.values())
    assert choice.bin == min(b for b, v in want.items() if v == choice.line.opener)


@pytest.mark.parametrize(("variant", "record"), [("kalah(4,2,pie=on)", ""), ("kalah(3,2,pie=on)", "2")])
def test_perfect_opener_plays_the_pie_move_not_the_plain_best(variant: str, record: str) -> None:
    """Where the plain best sowing of the first turn offers North a swap worth taking, the bot plays the pie-best."""
    v = Variant.parse(variant)
    start = Game.from_record(v, record).position
    assert pie.in_first_turn(start)
    plain = Engine(v.with_options(pie=False), impl="py", egdb_seeds=0).solve(start, per_move=True)
    decision = PerfectPlayer(egdb_seeds=0).explain(start, 5.0)
    assert isinstance(decision.action, Sow) and decision.exact and decision.source == "proof"
    assert opener_minimax(start.apply(decision.action)) == opener_minimax(start)
    assert decision.action.bin not in plain.best
    assert max(opener_minimax(start.apply(Sow(b))) for b in plain.best) < opener_minimax(start)


@pytest.mark.parametrize("variant", BOARDS)
def test_perfect_against_itself_ends_at_the_pie_value(variant: str) -> None:
    """Perfect against perfect under the pie rule: the opener ends with exactly the minimax value, swap included."""
    start = Position.initial(Variant.parse(variant))
    bot = PerfectPlayer(egdb_seeds=0)
    pos = start
    while not pos.over:
        action = bot.decide(pos, 5.0)
        assert opener_minimax(pos.apply(action)) == opener_minimax(pos)
        pos = pos.apply(action)
    assert (pos.margin if not pos.swapped else -pos.margin) == opener_minimax(start)


def test_only_the_openers_first_turn_is_a_pie_choice() -> None:
    """After the first turn (North offered the swap), after a swap, or without the pie rule, `choose` refuses."""
    v = Variant.parse("kalah(3,2,pie=on)")
    start = Position.initial(v)
    offered = start.play(1)
    assert pie.in_first_turn(start) and not pie.in_first_turn(offered) and offered.swap_offered
    for pos in (offered, offered.apply(Swap()), Position.initial(v.with_options(pie=False))):
        with pytest.raises(ValueError, match="first turn"):
            pie.choose(pos, twin_valuer(v))

"""Every board the rules allow (1 to 12 houses, 1 to 200 seeds a house): rules, both search cores, wire, record, TUI."""

from __future__ import annotations

import random
from typing import Any

import pytest

import bots._search as csearch
from bots import pysearch
from bots.core import relative_board
from bots.solver import AUTO_EGDB_MAX_SEEDS, Engine, auto_egdb_seeds
from cli.main import main
from client.screens.game import GameScreen
from client.widgets.board import Pit
from protocol import Game, Position, Sow, Variant, compile_variant
from protocol.variant import MAX_HOUSES, MAX_SEEDS
from server.assembly import RunningServer
from tests.client.test_board import host
from tests.helpers.wire import live_match
from tests.server.test_play import play_out

RULES_MD_ROW_H1 = [0, -2, +6, -2, +2, 0]
"""The h = 1 row of the small-board table in RULES.md (standard rules, s = 1..6)."""


def forced_line(variant: Variant) -> int:
    """South's margin at the end of Kalah(1,n): each side has one house, so every move is forced (no search)."""
    pos = Position.initial(variant)
    while not pos.over:
        [only] = pos.legal_bins()
        pos = pos.play(only)
    return pos.margin


def test_every_size_is_a_variant_with_a_possible_start() -> None:
    """Each houses x seeds corner of the range makes a variant whose text round-trips and whose start is possible."""
    assert (MAX_HOUSES, MAX_SEEDS) == (12, 200)
    for h in range(1, MAX_HOUSES + 1):
        for s in (1, 24, 25, 99, 100, 199, 200):
            v = Variant(houses=h, seeds=s, extra_turn=s % 2 == 0)
            assert Variant.parse(v.text()) == v
            start = Position.initial(v).check_possible()
            assert sum(start.pits) == 2 * h * s == v.total_seeds
            assert Position.from_fen(v, start.fen()) == start


@pytest.mark.parametrize("extra", ["on", "off"])
def test_kalah_1_n_values_up_to_200_seeds(extra: str) -> None:
    """Kalah(1,n) and KalahAlt(1,n), n = 1..200: both search cores give the forced line's margin."""
    got: dict[str, list[int]] = {"line": [], "c": [], "py": []}
    for n in range(1, 201):
        v = Variant.parse(f"kalah(1,{n},extra={extra})")
        start = Position.initial(v)
        got["line"].append(forced_line(v))
        for impl in ("c", "py"):
            got[impl].append(Engine(v, impl=impl, tt_log2=10, egdb_seeds=0).solve(start, per_move=True).value)
    assert got["c"] == got["line"] and got["py"] == got["line"]
    if extra == "on":
        assert got["line"][:6] == RULES_MD_ROW_H1
    assert len(set(got["line"])) > 5  # the values vary with n; not a constant


@pytest.mark.parametrize("variant", ["kalah(2,10)", "kalah(2,40)", "kalah(2,30,capture=empty)",
                                     "kalah(2,30,extra=off)", "kalah(3,8)"])
def test_small_boards_with_many_seeds_agree_between_the_cores(variant: str) -> None:
    """Exact values and per-move values of small boards with many seeds: the C core equals the Python twin."""
    v = Variant.parse(variant)
    start = Position.initial(v)
    c = Engine(v, impl="c", egdb_seeds=0).solve(start, per_move=True)
    py = Engine(v, impl="py", egdb_seeds=0).solve(start, per_move=True)
    assert c.exact and py.exact
    assert (c.value, c.per_move, c.best) == (py.value, py.per_move, py.best)


def perft_position(pos: Position, depth: int) -> int:
    """Sowing sequences of length `depth` with the Python rules (seeds conserved at every step)."""
    assert sum(pos.pits) == pos.variant.total_seeds
    if depth == 0:
        return 1
    if pos.over:
        return 0
    return sum(perft_position(pos.apply(Sow(b)), depth - 1) for b in pos.legal_bins())


def perft_core(core: Any, rules: Any, board: tuple[int, ...], depth: int) -> int:
    """The same count with a search core's `legal` and `play` on mover-relative boards."""
    if depth == 0:
        return 1
    total = 0
    for pit in core.legal(rules, board):
        after, _gain, _extra, over = core.play(rules, board, pit)
        if not over:
            total += perft_core(core, rules, tuple(after), depth - 1)
        elif depth == 1:
            total += 1
    return total


@pytest.mark.parametrize("variant, depth", [("kalah(12,200)", 3), ("kalah(2,200,capture=empty)", 8),
                                            ("kalah(3,150,extra=off)", 6), ("kalah(5,200,clockwise=on)", 4),
                                            ("kalah(6,200,capture=none,leftover=emptier)", 4)])
def test_perft_of_200_seed_boards_agrees(variant: str, depth: int) -> None:
    """Perft counts of many-seed boards: the Python rules, the C core and the Python twin count the same."""
    v = Variant.parse(variant)
    start = Position.initial(v)
    board = relative_board(start)
    want = [perft_position(start, d) for d in range(1, depth + 1)]
    c_rules, py_rules = csearch.Rules(compile_variant(v)), pysearch.Rules(compile_variant(v))
    assert [perft_core(csearch, c_rules, board, d) for d in range(1, depth + 1)] == want
    assert [perft_core(pysearch, py_rules, board, d) for d in range(1, depth + 1)] == want
    assert want[-1] > want[0] >= 1


def test_c_core_names_its_limit() -> None:
    """Boards past the C core's int16 limit are refused with a message naming it; every allowed board is within."""
    rules = csearch.Rules(compile_variant(Variant(houses=1, seeds=200)))
    with pytest.raises(ValueError, match=r"handles 0\.\.20000"):
        csearch.legal(rules, (20_001, 0, 1, 0))
    with pytest.raises(ValueError, match="at most 20000"):
        csearch.legal(rules, (10_000, 0, 10_001, 0))
    biggest = Position.initial(Variant(houses=12, seeds=200))
    assert csearch.legal(csearch.Rules(compile_variant(biggest.variant)), relative_board(biggest)) == list(range(12))


def test_automatic_databases_stay_small_on_many_seeds() -> None:
    """A solve sizes its databases to at most 40 seeds, however many seeds a tiny board holds."""
    assert auto_egdb_seeds(Variant(houses=1, seeds=200)) == AUTO_EGDB_MAX_SEEDS == 40
    assert auto_egdb_seeds(Variant(houses=2, seeds=200)) == 40
    assert auto_egdb_seeds(Variant(houses=1, seeds=3)) == 4


def test_bounded_search_on_the_largest_board() -> None:
    """Kalah(12,200) gets a bounded answer with a legal best move from the C core in a short budget."""
    v = Variant(houses=12, seeds=200)
    start = Position.initial(v)
    best, _value, exact, depth = Engine(v, tt_log2=16, egdb_seeds=0).best_by_deepening(start, 0.2, max_depth=5)
    assert best in start.legal_bins() and not exact and depth >= 1


async def test_200_seed_board_over_the_wire_recorded_and_shown(arena: RunningServer,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Kalah(2,200) is created, played over the wire, stored and replayed by `kalah record`; Kalah(12,200) analysed."""
    variant = "kalah(2,200)"
    alice, bob, mid = await live_match(arena.url, variant)
    game = await play_out(alice, bob, mid, variant, random.Random(11))
    stored = (await alice.request("game_record", type="game", match_id=mid))["game"]
    assert stored["variant"] == variant and stored["status"] == "finished"
    assert stored["record"] == [a.token() for a in game.actions] and stored["result"] == game.position.result
    assert main(["record", "--json", "-H", "2", "-s", "200", " ".join(stored["record"])]) == 0
    shown = capsys.readouterr().out
    assert f'"result": {game.position.result}' in shown and game.position.fen() in shown
    assert main(["record", "-H", "2", "-s", "200", " ".join(stored["record"][:1])]) == 0
    text = capsys.readouterr().out
    assert " 200 200\n" in text and text.count("\n") > 4
    await alice.send(type="create", variant="kalah(2,201)")
    assert await alice.error() == "bad_field"  # the variant field of the message is out of range
    biggest = Game(Variant(houses=12, seeds=200)).position.fen()
    await alice.send(type="analyse", variant="kalah(12,200)", position=biggest, budget_ms=50)
    answer = await alice.expect("analysis", timeout=10)
    assert not answer["exact"] and 1 <= answer["best"][0] <= 12
    await alice.close()
    await bob.close()


async def test_board_widget_shows_three_digit_counts() -> None:
    """On Kalah(12,200) at 80x24, every pit shows its whole count (one to three digits) inside its own box."""
    record = "12 14"  # two 200-seed houses sown round the board: counts of 8, 16 and 216
    want = Game.from_record(Variant(houses=12, seeds=200), record).position
    app = host(record, variant="kalah(12,200)")
    async with app.run_test(size=(80, 24)):
        screen = app.screen
        assert isinstance(screen, GameScreen)
        pits = list(screen.query(Pit))
        assert len(pits) == 26 and min(want.pits) < 10 and max(want.pits) >= 200
        for pit in pits:
            text = str(pit.render())
            assert text == str(want.pits[pit.bin - 1])
            assert pit.content_region.width >= len(text) and pit.region.right <= 80

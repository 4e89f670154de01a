"""`kalah puzzle` in the terminal: a house's key answers the puzzle shown; the right house is told right, a wrong one
wrong with the seeds it loses, the answer, the refutation and every move's proved value; from a server the first
answer is rated, offline it is judged from the stored values."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from client.puzzle_app import PuzzleApp, PuzzleLaunch
from client.screens.puzzle import PuzzleScreen
from client.widgets.board import HOUSE_KEYS, Board
from protocol import Position, Variant
from protocol.puzzle_messages import PuzzleInfo
from server.assembly import start_server
from tests.helpers.client_hosts import shown, until
from tests.helpers.puzzles import make_puzzles, store_puzzles, swap_puzzle
from tests.helpers.wire import OPERATOR

SIZE = (110, 40)


def key_of(puzzle: PuzzleInfo, action: str) -> str:
    """The key that plays `action` for the side to move (its houses along the bottom, 1 on the left)."""
    variant = Variant.parse(puzzle.variant)
    bin_number = int(action)
    return HOUSE_KEYS[(bin_number if bin_number <= variant.houses else bin_number - variant.houses - 1) - 1]


def text(screen: PuzzleScreen, widget: str) -> str:
    """What one line of the puzzle screen says."""
    return str(screen.query_one(f"#{widget}", Static).render())


async def test_offline_the_right_house_is_told_right_and_n_brings_the_next(tmp_path: Path) -> None:
    """With the stored puzzles, the board shows the first from the side to move; its answer's key says right (not
    rated) and lists every move; `n` shows the second."""
    puzzles = make_puzzles(2)
    app = PuzzleApp(PuzzleLaunch(stored=tuple(puzzles)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, PuzzleScreen) is not None and isinstance(app.focused, Board))
        screen = app.screen
        assert isinstance(screen, PuzzleScreen) and screen.shown is not None
        first = next(p for p in puzzles if p.id == screen.shown.id)
        board = screen.query_one(Board)
        variant = Variant.parse(first.variant)
        assert board.position == Position.from_fen(variant, first.position)
        assert board.choosable == frozenset(int(m.action) for m in first.moves)
        await pilot.press(key_of(first, first.answer))
        await until(pilot, lambda: screen.result is not None)
        assert text(screen, "puzzle-verdict").startswith("Right: house")
        values = text(screen, "puzzle-values")
        assert "(the answer)" in values and all(f"{m.value:+d}, {m.loss} lost" in values for m in first.moves)
        await pilot.press("n")
        await until(pilot, lambda: screen.shown is not None and screen.shown.id != first.id and screen.result is None)


async def test_from_a_server_a_wrong_house_is_told_wrong_with_the_refutation_and_rated(tmp_path: Path) -> None:
    """From a server, a wrong house's key is told wrong with the seeds lost, the answer and the refutation, and the
    answer rates the player."""
    [puzzle] = make_puzzles(1)
    db = tmp_path / "x.sqlite3"
    store_puzzles(db, [puzzle])
    server = await start_server(db, operator_token=OPERATOR)
    try:
        app = PuzzleApp(PuzzleLaunch(url=server.url, name="ann"))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: shown(app, PuzzleScreen) is not None and isinstance(app.focused, Board))
            screen = app.screen
            assert isinstance(screen, PuzzleScreen)
            wrong = puzzle.moves[-1]
            await pilot.press(key_of(puzzle, wrong.action))
            await until(pilot, lambda: screen.result is not None)
            verdict = text(screen, "puzzle-verdict")
            assert verdict.startswith("Wrong: house") and f"loses {wrong.loss} seed" in verdict
            assert "The answer was house" in verdict and "\nRefutation: " in verdict
            assert "Your puzzle rating: 1" in text(screen, "puzzle-prompt")
        rows = await server.arena.storage.fetch_rows("SELECT rating, failed FROM puzzle_players")
        assert len(rows) == 1 and rows[0][0] < 1500 and rows[0][1] == 1
    finally:
        await server.close()


async def test_north_s_swap_decision_is_answered_with_s(tmp_path: Path) -> None:
    """At North's swap decision the screen says `s` swaps; a sowing that is not the answer is told wrong from the
    chooser's seat, the swap named as the answer."""
    puzzle = swap_puzzle()
    app = PuzzleApp(PuzzleLaunch(stored=(puzzle,)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, PuzzleScreen) is not None and isinstance(app.focused, Board))
        screen = app.screen
        assert isinstance(screen, PuzzleScreen)
        assert "s swaps sides" in text(screen, "puzzle-prompt")
        wrong = puzzle.moves[1]
        await pilot.press(key_of(puzzle, wrong.action))
        await until(pilot, lambda: screen.result is not None)
        verdict = text(screen, "puzzle-verdict")
        assert verdict.startswith("Wrong: house") and "you end" in verdict and "The answer was the swap." in verdict
    second = PuzzleApp(PuzzleLaunch(stored=(puzzle,)))
    async with second.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(second, PuzzleScreen) is not None and isinstance(second.focused, Board))
        swapper = second.screen
        assert isinstance(swapper, PuzzleScreen)
        await pilot.press("s")
        await until(pilot, lambda: swapper.result is not None)
        assert text(swapper, "puzzle-verdict").startswith(f"Right: the swap keeps the value, {puzzle.value:+d} for you")

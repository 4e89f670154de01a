"""The puzzles page (/puzzles, /puzzle/ID): a puzzle is solved by clicking the answer's house, a wrong house is answered
with every move's proved value and the refutation, each house and control with an accessible name."""

from __future__ import annotations

import re
from pathlib import Path

from protocol import Position, Variant
from protocol.puzzle_messages import PuzzleInfo
from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, screenshot_path, still_screenshot, wait_fen
from tests.helpers.puzzles import make_puzzles, store_puzzles, swap_puzzle

pytestmark = SKIP


def house_name(puzzle: PuzzleInfo, action: str) -> str:
    """The accessible name of the house that plays `action`, as the player to move sees it: "house K, N seeds"."""
    variant = Variant.parse(puzzle.variant)
    position = Position.from_fen(variant, puzzle.position)
    bin_number = int(action)
    house = bin_number if bin_number <= variant.houses else bin_number - variant.houses - 1
    seeds = position.pits[bin_number - 1]
    return f"house {house}, {seeds} seed{'s' * (seeds != 1)}"


async def test_a_puzzle_is_solved_by_clicking_the_right_house(arena: RunningServer, pages: Pages,
                                                              tmp_path: Path) -> None:
    """/puzzles shows a proved puzzle with only its legal houses playable; clicking the answer's house says right,
    lists every move with its proved value and rates the player; Next puzzle brings another."""
    puzzles = make_puzzles(2)
    store_puzzles(tmp_path / "arena.sqlite3", puzzles)
    page = await pages.open("/puzzles")
    await page.get_by_role("status").filter(has_text="find the one move").wait_for(timeout=10_000)
    fen = await page.get_attribute("#board", "data-fen")
    puzzle = next(p for p in puzzles if p.position == fen)
    assert page.url.endswith(f"/puzzle/{puzzle.id}")
    playable = page.locator("#board button.pit:not([disabled])")
    assert await playable.count() == len(puzzle.moves)
    await page.get_by_role("button", name=house_name(puzzle, puzzle.answer), exact=True).click()
    verdict = page.get_by_role("alert").filter(has_text="Right")
    await verdict.wait_for(timeout=10_000)
    assert "keeps the value" in await verdict.inner_text()
    table = page.get_by_role("table")
    await table.wait_for()
    rows = page.locator("#values tbody tr")
    assert await rows.count() == len(puzzle.moves)
    answer_row = page.get_by_role("row", name=re.compile(r"\(the answer\)"))
    assert f"{puzzle.value:+d}" in await answer_row.inner_text()
    assert re.search(r"Your puzzle rating: 1[5-9]\d\d", await page.inner_text("#ratings"))
    await page.get_by_role("button", name="Next puzzle").click()
    other = next(p for p in puzzles if p.id != puzzle.id)
    await wait_fen(page, other.position)
    await pages.check()


async def test_a_wrong_house_is_answered_with_the_values_and_the_refutation(arena: RunningServer, pages: Pages,
                                                                            tmp_path: Path) -> None:
    """/puzzle/ID shows that puzzle; a wrong house is told wrong with the seeds it loses, the answer and the
    refutation, and the table gives every move's proved value."""
    [puzzle] = make_puzzles(1)
    store_puzzles(tmp_path / "arena.sqlite3", [puzzle])
    page = await pages.open(f"/puzzle/{puzzle.id}")
    await wait_fen(page, puzzle.position)
    wrong = puzzle.moves[-1]
    await page.get_by_role("button", name=house_name(puzzle, wrong.action), exact=True).click()
    verdict = page.get_by_role("alert").filter(has_text="Wrong")
    await verdict.wait_for(timeout=10_000)
    text = await verdict.inner_text()
    assert f"loses {wrong.loss} seed" in text and f"{wrong.value:+d} for South" in text
    assert "The answer was house" in text
    refutation = await page.inner_text("#refutation")
    assert refutation.startswith("Refutation: ") and ("South" in refutation or "North" in refutation)
    values = await page.inner_text("#values")
    for move in puzzle.moves:
        assert f"{move.value:+d}" in values
    assert await page.locator("#board button.pit:not([disabled])").count() == 0
    await still_screenshot(page, screenshot_path(tmp_path, "puzzle.png"))
    await pages.check()


async def test_north_s_swap_decision_is_answered_with_the_swap_button(arena: RunningServer, pages: Pages,
                                                                      tmp_path: Path) -> None:
    """At North's swap decision under the pie rule the page offers a named Swap sides button beside the houses;
    the swap, when it is the answer, is told right, with the chooser's own margin."""
    puzzle = swap_puzzle()
    store_puzzles(tmp_path / "arena.sqlite3", [puzzle])
    page = await pages.open(f"/puzzle/{puzzle.id}")
    await wait_fen(page, puzzle.position)
    await page.get_by_role("status").filter(has_text="swap sides or sow").wait_for(timeout=10_000)
    await page.get_by_role("button", name=re.compile(r"^Swap sides")).click()
    verdict = page.get_by_role("alert").filter(has_text="Right")
    await verdict.wait_for(timeout=10_000)
    assert f"the swap keeps the value, {puzzle.value:+d} for you" in await verdict.inner_text()
    assert await page.get_by_role("row", name=re.compile(r"the swap \(the answer\)")).count() == 1
    await pages.check()


async def test_a_server_without_puzzles_shows_no_empty_board(arena: RunningServer, pages: Pages) -> None:
    """On a server that has no puzzle yet, /puzzles shows no empty board and says in its status line why and what
    makes some (before: an empty board above a red error line)."""
    page = await pages.open("/puzzles")
    status = page.get_by_role("status").filter(has_text="No puzzle to show")
    await status.wait_for(timeout=10_000)
    assert "kalah puzzle build" in await status.inner_text()
    for part in ("#board", "#player-north", "#player-south"):
        assert not await page.locator(part).is_visible(), part
    assert await page.inner_text("#error") == ""
    await pages.check()

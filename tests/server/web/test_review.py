"""The replay page's review (/game/ID): marks with accessible names beside the moves, the value over the game, each
player's summary; clicking a mark shows the position before its move and the best move there."""

from __future__ import annotations

import re
from pathlib import Path

from protocol import Game, Variant
from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, screenshot_path, still_screenshot, wait_fen
from tests.helpers.stored_games import write_finished

pytestmark = SKIP

SMALL = Variant.parse("kalah(2,3)")
RECORD = "1 5 1 4 2 4 5"
"""Its losses: 0, 10 (North's 5, a blunder: 4 was best), 2, 0, 4, 2, 0."""


async def test_the_replay_marks_each_move_and_a_mark_jumps_to_its_position(arena: RunningServer, pages: Pages,
                                                                           tmp_path: Path) -> None:
    """A finished game's replay asks for its review once, puts a named mark beside each move that lost seeds, draws
    a bar per position and sums up each player; clicking the blunder's mark shows the position before it with
    the best house marked and the move's words."""
    await write_finished(arena.arena.storage, {"rv-1": (SMALL, RECORD)})
    game = Game.from_record(SMALL, RECORD)
    page = await pages.open("/game/rv-1")
    blunder = page.get_by_role("button", name=re.compile(r"^Move 2, bob played 5: blunder, 10 seeds lost"))
    await blunder.wait_for(timeout=30_000)
    marks = page.locator("#moves button.mark")
    assert await marks.count() == 4  # the four moves that lost seeds; perfect ones carry no mark
    assert [await marks.nth(i).inner_text() for i in range(4)] == ["??", "?", "??", "?"]
    assert await page.locator("#review-graph .bar").count() == len(game.positions)
    players = await page.inner_text("#review-players")
    assert "alice: 1 of 3 moves perfect, 6 seeds given away, worst: move 5 (4 seeds)." in players
    assert "bob: 2 of 4 moves perfect, 12 seeds given away, worst: move 2 (10 seeds)." in players
    assert "proved" in await page.inner_text("#review-state")
    await blunder.click()
    await wait_fen(page, game.positions[1].fen())
    note = await page.inner_text("#review-note")
    assert note.startswith("Move 2: bob played 5, blunder, 10 seeds lost; best was 4")
    assert await page.locator("#board .best").count() == 1
    assert await page.get_attribute("#board .best", "data-bin") == "4"
    sent = [m["type"] for m in await page.evaluate("window.__sent")]
    assert sent.count("review") == 1
    await still_screenshot(page, screenshot_path(tmp_path, "review.png"))
    await pages.check()

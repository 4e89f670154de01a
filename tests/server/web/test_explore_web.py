"""The opening explorer's page (/explore): a board clicked through, the table of the moves played beside it
following each position, the solver's values, and links to the games that reached the position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol import Game
from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, screenshot_path, still_screenshot, wait_fen
from tests.helpers.stored_games import write_finished
from tests.server.test_explore import BOTS, PEOPLE, SMALL

pytestmark = SKIP


async def rows(page: Any) -> dict[str, list[str]]:
    """The table's rows by move: their cells' text."""
    found: dict[str, list[str]] = await page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#explored tbody tr')]"
        ".map((tr) => [tr.dataset.action, [...tr.cells].map((td) => td.innerText.trim())]))")
    return found


async def test_the_explorer_is_clicked_through_three_moves_and_its_table_follows(
        arena: RunningServer, pages: Pages, tmp_path: Path) -> None:
    """From the start the table lists the moves played with their games, results, ratings and proved values; a move
    of the table, a house of the board and a move of the table again are played, and each time the board shows the
    position after it and the table that position's moves; the games that reached it are linked; back returns one
    move at a time."""
    storage = arena.arena.storage
    await write_finished(storage, PEOPLE, ("alice", "bob"), index=True, ratings=(1450.0, 1720.0))
    await write_finished(storage, BOTS, ("greedy", "random"), index=True, rated=False, bots=("greedy", "random"))
    game = Game.from_record(SMALL, "1 5")
    page = await pages.open("/explore?variant=kalah(2,3)")
    first = page.get_by_role("button", name="Play 1: 3 games")
    await first.wait_for(timeout=30_000)
    await page.get_by_role("button", name="Play 2: 3 games").wait_for()
    start = await rows(page)
    assert start["1"][:4] == ["1", "3", "67% · 0% · 33%", "1450"]
    await page.wait_for_function("() => /proved/.test(document.getElementById('solver').textContent)",
                                 timeout=30_000)
    assert "the solver plays 1" in await page.inner_text("#solver")
    await first.click()
    await wait_fen(page, game.positions[1].fen())
    await page.get_by_role("button", name="Play 5: 2 games").wait_for(timeout=30_000)
    assert (await rows(page))["4"][:3] == ["4", "1", "100% · 0% · 0%"]
    assert await page.get_by_role("link", name="a2").get_attribute("href") == "/game/a2"
    house = page.locator('#board button[data-bin="5"]')
    assert await house.get_attribute("aria-label") == "North house 2, 3 seeds"
    await house.click()
    await wait_fen(page, game.positions[2].fen())
    await page.get_by_role("button", name="Play 2: 1 game").wait_for(timeout=30_000)
    assert sorted(await rows(page)) == ["1", "2"]
    assert "moves=1+5" in page.url or "moves=1%205" in page.url
    await page.wait_for_function("() => /Value/.test(document.getElementById('solver').textContent)",
                                 timeout=30_000)
    await still_screenshot(page, screenshot_path(tmp_path, "explore.png"))
    third = Game.from_record(SMALL, "1 5 1")
    await page.get_by_role("button", name="Play 1: 1 game").click()
    await wait_fen(page, third.positions[3].fen())
    await page.get_by_role("button", name="Play 4: 1 game").wait_for(timeout=30_000)
    assert "moves=1+5+1" in page.url or "moves=1%205%201" in page.url
    await page.get_by_role("button", name="\u2039 back one move").click()
    await wait_fen(page, game.positions[2].fen())
    await page.get_by_role("button", name="\u2039 back one move").click()
    await wait_fen(page, game.positions[1].fen())
    await page.get_by_role("button", name="Play 5: 2 games").wait_for(timeout=30_000)
    await pages.check()


async def test_the_filters_narrow_the_table(arena: RunningServer, pages: Pages) -> None:
    """Hosted bots' moves only, then one player's games: the table keeps only theirs; the address keeps the filters."""
    storage = arena.arena.storage
    await write_finished(storage, PEOPLE, ("alice", "bob"), index=True, ratings=(1450.0, 1720.0))
    await write_finished(storage, BOTS, ("greedy", "random"), index=True, rated=False, bots=("greedy", "random"))
    page = await pages.open("/explore?variant=kalah(2,3)")
    await page.get_by_role("button", name="Play 1: 3 games").wait_for(timeout=30_000)
    await page.get_by_label("Moves by").select_option("bots")
    await page.get_by_role("button", name="Show").click()
    await page.get_by_role("button", name="Play 2: 1 game").wait_for(timeout=30_000)
    assert sorted(await rows(page)) == ["2"]
    assert "movers=bots" in page.url
    await page.get_by_label("Moves by").select_option("any")
    await page.get_by_label("Player").fill("alice")
    await page.get_by_label("rated games only").check()
    await page.get_by_role("button", name="Show").click()
    await page.get_by_role("button", name="Play 2: 2 games").wait_for(timeout=30_000)
    await pages.check()

"""The match page on a phone, in a real headless browser (tests/helpers/browser.py): at 360x640 and 390x844, touch and a
phone's browser, in either seat, everything needed to play is on one screen without scrolling (both rows of
houses, both stores, both clocks, whose turn it is, the last move), the move list and the rest below it.
"""

from __future__ import annotations

from typing import Any

import pytest

from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, my_turn, start_from_lobby

pytestmark = SKIP

NEEDED = {
    "North's clock": "#player-north .clock",
    "South's clock": "#player-south .clock",
    "whose turn": "#status",
    "the last move": "#note",
}


async def box(page: Any, selector: str) -> dict[str, float]:
    """The bounding box of the one element `selector` names (it is shown)."""
    found = await page.locator(selector).bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


@pytest.mark.parametrize("seat", ["south", "north"])
@pytest.mark.parametrize(("width", "height"), [(360, 640), (390, 844)])
async def test_a_phone_shows_all_it_needs_on_one_screen(arena: RunningServer, pages: Pages, seat: str,
                                                        width: int, height: int) -> None:
    """On a phone, in either seat, once the opponent has moved: every house and store, both clocks, the status line
    and the last move lie inside the first screen, nothing scrolls sideways, and the move list starts below."""
    page = await pages.open("/", width=width, height=height, touch=True, mobile=True)
    await start_from_lobby(page, "greedy", {"clock": "300+5"}, seat=seat)
    bins = await my_turn(page)
    if seat == "south":  # a move of the bot's to show as the last move
        await page.locator(f"#board .pit[data-bin='{bins[0]}']").tap()
        await page.wait_for_function("() => window.__sent.some((m) => m.type === 'move')")
        await page.wait_for_function("() => /^North/.test(document.getElementById('note').textContent)")
        bins = await my_turn(page)
    assert bins, "the game is still on"
    await page.evaluate("window.scrollTo(0, 0)")
    assert await page.evaluate("[scrollX, scrollY]") == [0, 0]
    assert await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    assert (await page.inner_text("#note")).strip(), "the last move is said"
    assert "Your turn" in await page.inner_text("#status")
    shown = dict(NEEDED)
    pits = await page.eval_on_selector_all("#board .pit", "nodes => nodes.map(n => n.dataset.bin)")
    assert len(pits) == 14
    shown.update({f"bin {b}": f"#board .pit[data-bin='{b}']" for b in pits})
    below = []
    for what, selector in shown.items():
        where = await box(page, selector)
        assert where["height"] > 0 and where["y"] >= 0 and where["y"] + where["height"] <= height, \
            f"{what} at {where['y']:.0f}-{where['y'] + where['height']:.0f} px, the screen is {height} px"
        assert where["x"] >= 0 and where["x"] + where["width"] <= width, what
        below.append(where["y"] + where["height"])
    for house in await page.locator("#board button.pit").all():
        size = await house.bounding_box()
        assert size and size["width"] >= 40 and size["height"] >= 40  # a finger's size
    moves = await box(page, "#moves-section")
    assert moves["y"] >= max(below), "the move list comes after the board"
    await pages.check()

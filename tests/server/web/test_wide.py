"""The web board at its widest variant, twelve houses, in a real headless browser (tests/helpers/browser.py): the number
keys reach every house (`1`-`9`, `0`, `-`, `=`, as in the terminal), the board grows with the window instead of
stopping at the width of a six-house board, and counts of three and four digits stay inside their houses.
"""

from __future__ import annotations

from typing import Any

from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, fens_of, my_turn, start_from_lobby, wait_fen
from tests.helpers.wire import Client, is_game_over

pytestmark = SKIP

WIDE = {"houses": "12", "seeds": "200", "clock": ""}

OUTSIDE = """() => [...document.querySelectorAll('#board .pit')].flatMap((pit) => {
  const box = pit.getBoundingClientRect();
  return [...pit.querySelectorAll('.count, .mark, .bin')].filter((part) => part.textContent).flatMap((part) => {
    const r = part.getBoundingClientRect();
    const inside = r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5
      && r.bottom <= box.bottom + 0.5;
    return inside ? [] : [`bin ${pit.dataset.bin} ${part.className} "${part.textContent}"`];
  });
})"""
"""Every count, mark and bin number drawn outside its own house (none when they fit)."""


async def outside(page: Any) -> list[str]:
    """The parts of houses and stores that do not fit inside them."""
    return list(await page.evaluate(OUTSIDE))


async def last_move(page: Any) -> int:
    """The bin of the last move the page sent."""
    return int(await page.evaluate("window.__sent.filter((m) => m.type === 'move').at(-1).bin"))


async def test_twelve_houses_keys_reach_every_house_and_the_board_grows(arena: RunningServer, pages: Pages) -> None:
    """At twelve houses and 200 seeds on a 1600 px window the board is wider than a six-house board's column,
    three-digit counts fit their houses, `=` sows house 12, `-` house 11 and `0` house 10 (named as their keys)."""
    page = await pages.open("/", width=1600, height=900)
    await start_from_lobby(page, "greedy", WIDE)
    keys = {b: await page.get_attribute(f"#board .pit[data-bin='{b}']", "aria-keyshortcuts") for b in (9, 10, 11, 12)}
    assert keys == {9: "9", 10: "0", 11: "-", 12: "="}
    assert "0, -, =" in await page.inner_text("#keys")
    board = await page.locator("#board").bounding_box()
    assert board and board["width"] >= 1100, f"the board is {board and board['width']:.0f} px of 1600"
    await my_turn(page)
    assert await outside(page) == []
    await page.keyboard.press("=")
    await page.wait_for_function("() => window.__sent.some((m) => m.type === 'move')")
    assert await last_move(page) == 12
    bins = await my_turn(page)
    key, house = ("0", 10) if 10 in bins else ("-", 11)
    assert house in bins
    await page.keyboard.press(key)
    await page.wait_for_function("() => window.__sent.filter((m) => m.type === 'move').length === 2")
    assert await last_move(page) == house
    await my_turn(page)
    assert await outside(page) == []
    await pages.check()


async def test_big_counts_fit_at_every_width(arena: RunningServer, pages: Pages) -> None:
    """A game of twelve houses and 200 seeds, replayed at 1600x900, 1280x860, 900x700 and on a phone at the
    position with the fullest house and at its end (stores past 1,000): every count, mark and bin number is inside
    its house or store."""
    host = await Client.open(arena.url, "host")
    await host.send(type="exhibition", variant="kalah(12,200)", south="greedy", north="greedy", match_id="big-1")
    await host.expect("event", timeout=60, where=lambda m: is_game_over(m) and m["match_id"] == "big-1")
    _, fens = await fens_of(host, "big-1")
    await host.close()
    houses = [max(n for i, n in enumerate(pits_of(fen)) if i not in (12, 25)) for fen in fens]
    fullest = houses.index(max(houses))
    assert max(houses) >= 210 and max(pits_of(fens[-1])) >= 1000
    for width, height in ((1600, 900), (1280, 860), (900, 700), (360, 640)):
        for ply in (fullest, len(fens) - 1):
            page = await pages.open(f"/game/big-1#ply={ply}", width=width, height=height)
            await wait_fen(page, fens[ply])
            assert await outside(page) == [], (width, height, ply)
            assert await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
            await page.close()
    await pages.check()


def pits_of(fen: str) -> list[int]:
    """The seeds of a position text, bin 1 first."""
    return [int(x) for x in fen.split()[0].split(",")]

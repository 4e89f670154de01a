"""Playing from the web pages in a real headless browser (Playwright with the system's Chromium) against a real
server: the lobby starts games, the match page plays them by clicks, keys and taps, and every position shown is
compared with the server's stored record. Skipped or failed as tests/test_web_browser.py says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.app import RunningServer
from tests.conftest import Serve
from tests.test_web_browser import (
    MISSING,
    REQUIRED,
    Pages,
    chromium,
    fens_of,
    screenshot_path,
    still_screenshot,
    wait_fen,
)
from tests.wire import OPERATOR, Client

pytestmark = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=f"browser tests: {MISSING}")

PLAYABLE = "#board button.pit:not([disabled])"
OVER = "() => document.getElementById('status').textContent.startsWith('Game over')"
READY_OR_OVER = f"""() => document.getElementById('status').textContent.startsWith('Game over')
    || document.querySelector("{PLAYABLE}") !== null"""


@pytest.fixture
async def pages(arena: RunningServer) -> AsyncIterator[Pages]:
    """Pages of the test's server in a headless Chromium; checked for script errors and CSP violations at the end."""
    async with chromium() as launched:
        opened = Pages(launched, arena)
        yield opened
        await opened.check()


async def start_from_lobby(page: Any, opponent: str = "greedy", variant: dict[str, str] | None = None,
                           seat: str = "south") -> str:
    """Start a game from the lobby's form (a bot game, or an open match when `opponent` is ""); its match id."""
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await page.select_option("#opponent", opponent)
    for field, value in (variant or {}).items():
        if field in ("pie", "transfer"):
            await page.set_checked(f"#{field}", value == "on")
        elif field == "capture":
            await page.select_option("#capture", value)
        else:
            await page.fill(f"#{field}", value)
    await page.select_option("#seat", seat)
    await page.click("#play")
    await page.wait_for_url("**/play/*")
    await page.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    return str(page.url.rsplit("/", 1)[1])


async def playable(page: Any) -> list[int]:
    """The bins whose house buttons react now."""
    bins = await page.eval_on_selector_all(PLAYABLE, "nodes => nodes.map(n => Number(n.dataset.bin))")
    return [int(b) for b in bins]


async def my_turn(page: Any, timeout: float = 30_000) -> list[int]:
    """Wait until this page may move (its playable bins) or the game is over (no bins)."""
    await page.wait_for_function(READY_OR_OVER, timeout=timeout)
    if await page.evaluate(OVER):
        return []
    return await playable(page)


async def sent_moves(page: Any) -> int:
    """How many moves the page has sent."""
    return int(await page.evaluate("window.__sent.filter(m => m.type === 'move').length"))


async def house_number(page: Any, bin_: int) -> int:
    """The number key of a bin for the player at the board (its house's number on its own side)."""
    label = await page.get_attribute(f"#board .pit[data-bin='{bin_}']", "aria-keyshortcuts")
    assert label is not None
    return int(label)


async def assert_shown_is_record(page: Any, host: Client, match_id: str) -> list[str]:
    """Every position the board showed, in order, is the server's record's, to its end; the record."""
    await host_wait_finished(host, match_id)
    record, fens = await fens_of(host, match_id)
    shown = await page.evaluate("window.__values('board', 'data-fen')")
    assert shown == fens[fens.index(shown[0]):], "every position once, in order, to the end"
    assert shown[-1] == fens[-1]
    return record


async def host_wait_finished(host: Client, match_id: str) -> None:
    """Wait until the server has stored the match as finished."""
    for _ in range(100):
        game = (await host.request("game_record", type="game", match_id=match_id))["game"]
        if game["status"] == "finished":
            return
        await host_sleep()
    raise AssertionError(f"{match_id} never finished")


async def host_sleep() -> None:
    """A short pause between two polls of the server."""
    import asyncio

    await asyncio.sleep(0.1)


async def test_a_game_against_greedy_played_by_keys(arena: RunningServer, pages: Pages) -> None:
    """From the lobby, one click starts a game against greedy; the number keys sow (only legal houses react),
    each move is drawn, confirmed by the server, and the page shows every position of the server's record."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"houses": "4", "seeds": "3", "clock": ""})
    assert await page.get_attribute("#board .pit[data-bin='1']", "aria-label") == "house 1, 3 seeds"
    assert await page.get_attribute("#board .pit[data-bin='6']", "aria-label") == "North house 1, 3 seeds"
    moves = 0
    while bins := await my_turn(page):
        empty = [b for b in range(1, 5) if b not in bins]
        if empty:  # a key of an empty house does nothing
            await page.keyboard.press(str(await house_number(page, empty[0])))
            assert await sent_moves(page) == moves
        await page.keyboard.press(str(await house_number(page, bins[-1])))
        moves += 1
    assert moves > 0
    host = await Client.open(arena.url, "host")
    record = await assert_shown_is_record(page, host, match_id)
    sent = [m for m in await page.evaluate("window.__sent") if m["type"] == "move"]
    assert len(sent) == moves and all(m["match_id"] == match_id for m in sent)
    acks = [m for m in await page.evaluate("window.__got") if m["type"] == "ack"]
    assert len(acks) == moves and not any(m.get("duplicate") for m in acks)
    assert len(record) >= moves
    assert await page.inner_text("#end-result")
    assert await page.get_by_role("link", name="Replay this game with the solver's values").count() == 1
    await page.get_by_role("button", name="Rematch (seats swapped)").click()  # a bot's rematch starts at once
    await page.wait_for_function("(old) => !location.pathname.endsWith(old)", arg=match_id)
    await page.wait_for_function("() => document.querySelector('#player-north .name').textContent.endsWith('(you)')")
    assert "bot:greedy" in await page.inner_text("#player-south")
    await host.close()


async def test_keyboard_alone_starts_and_plays(arena: RunningServer, pages: Pages) -> None:
    """Keyboard only: Tab reaches the lobby's Play button and Enter starts the game; Tab reaches only the houses
    that may be sown (the others are disabled), and Enter sows the focused one. Every control of both pages has
    an accessible name."""
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    assert await unnamed_controls(page) == []
    for _ in range(40):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.id") == "play":
            break
    await page.keyboard.press("Enter")
    await page.wait_for_url("**/play/*")
    bins = await my_turn(page)
    assert await unnamed_controls(page) == []
    focused = []
    for _ in range(30):
        await page.keyboard.press("Tab")
        active = await page.evaluate("document.activeElement.dataset.bin || null")
        if active is not None:
            focused.append(int(active))
        elif focused:
            break
    assert focused == bins  # the legal houses, in bin order, and no other
    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("Enter")
    await page.wait_for_function("() => window.__got.some(m => m.type === 'ack')")
    assert (await page.evaluate("window.__sent.filter(m => m.type === 'move')"))[0]["bin"] == bins[-1]


async def unnamed_controls(page: Any) -> list[str]:
    """The visible buttons, links, fields and menus of a page without an accessible name."""
    return list(await page.evaluate("""() => [...document.querySelectorAll('button, a, input, select, textarea')]
        .filter((n) => n.offsetParent !== null)
        .filter((n) => !((n.getAttribute('aria-label') || '').trim() || (n.labels && [...n.labels].some(
            (l) => l.textContent.trim())) || (n.textContent || '').trim()))
        .map((n) => n.outerHTML.slice(0, 80))"""))


async def test_two_seekers_are_paired(arena: RunningServer, pages: Pages) -> None:
    """Two people seek the same variant from the lobby: both go to the same new match, the first seeker South."""
    first = await pages.open("/")
    await first.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await first.select_option("#opponent", "")
    await first.fill("#clock", "")
    await first.get_by_role("button", name="Seek an opponent").click()
    await first.get_by_text("Seeking an opponent for kalah(6,4)").wait_for()
    second = await pages.open("/")
    await second.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await second.select_option("#opponent", "")
    await second.fill("#clock", "")
    await second.get_by_role("button", name="Seek an opponent").click()
    for page in (first, second):
        await page.wait_for_url("**/play/*")
        await page.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    assert first.url == second.url
    assert "(you)" in await first.inner_text("#player-south") and "(you)" in await second.inner_text("#player-north")
    assert await my_turn(first)


async def test_the_opening_transfer(arena: RunningServer, pages: Pages) -> None:
    """With the opening transfer, North's first action moves one seed: a click on the house to take it from, a
    second click takes the choice back, then from and to; the server's record has the transfer."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"transfer": "on", "clock": ""}, seat="north")
    bins = await my_turn(page)
    assert len(bins) == 12 and await page.get_by_role("button", name="No transfer").is_visible()
    await page.locator("#board .pit[data-bin='2']").click()
    assert "take 1" in await page.inner_text("#board .pit[data-bin='2']")
    await page.locator("#board .pit[data-bin='2']").click()  # taken back
    assert "take 1" not in await page.inner_text("#board .pit[data-bin='2']")
    await page.locator("#board .pit[data-bin='9']").click()
    await page.locator("#board .pit[data-bin='3']").click()
    await page.wait_for_function("() => window.__got.some(m => m.type === 'ack')")
    host = await Client.open(arena.url, "host")
    record, _ = await fens_of(host, match_id)
    assert record[0] == "t9-3"
    await host.close()


async def play_out(players: list[Any], pick: int = 0, tap: bool = False, shot: Path | None = None) -> int:
    """Play the game on these pages to its end, each page moving when its houses react (by clicks, or taps):
    the `pick`-th playable house (counting from the last when negative). Returns the number of moves made."""
    moves = 0
    idle = 0
    while not all([await page.evaluate(OVER) for page in players]):
        for page in players:
            bins = await playable(page)
            if not bins:
                continue
            house = page.locator(f"#board .pit[data-bin='{bins[pick % len(bins)]}']")
            if tap:
                await house.tap()
            else:
                await house.click()
            moves += 1
            idle = 0
            if shot is not None and moves == 9:
                await page.set_viewport_size({"width": 1100, "height": 560})
                await still_screenshot(page, shot)
            break
        else:  # no page may move: a move is being drawn or confirmed, or a bot thinks
            idle += 1
            assert idle < 1500, "no page could move for 30 s"
            await players[0].wait_for_timeout(20)
    return moves


async def test_two_people_create_share_join_and_play_a_game_by_clicks(arena: RunningServer, pages: Pages,
                                                                      tmp_path: Path) -> None:
    """One person opens a match from the lobby and gets a link; a second person opens the link, takes the open
    seat, and both play the whole game by clicking houses; both boards showed every position of the server's
    record. The screenshot of a game in progress is the README's picture (KALAH_WEB_SCREENSHOTS=docs)."""
    alice = await pages.open("/")
    match_id = await start_from_lobby(alice, "", {"clock": "600+5"})
    await alice.wait_for_selector("#share-link")
    link = await alice.input_value("#share-link")
    assert link == f"{pages.base}/play/{match_id}"
    assert "Waiting for a second player" in await alice.inner_text("#status")
    bob = await pages.open(link.removeprefix(pages.base))
    await bob.get_by_role("button", name="Take the open seat (North)").click()
    await alice.wait_for_function("() => document.getElementById('status').textContent.includes('Your turn')")
    assert "(you)" in await alice.inner_text("#player-south") and "(you)" in await bob.inner_text("#player-north")
    moves = await play_out([alice, bob], pick=-1, shot=screenshot_path(tmp_path, "play.png"))
    host = await Client.open(arena.url, "host")
    record = await assert_shown_is_record(alice, host, match_id)
    assert await assert_shown_is_record(bob, host, match_id) == record
    assert moves == len(record)
    for page in (alice, bob):
        assert (await page.inner_text("#end-result")).strip()
        await page.wait_for_function("() => document.getElementById('rating').textContent.includes('rating')")
        assert (await page.inner_text("#rating")).startswith("Your first rating: ")
    await host.close()


async def north_nearest(page: Any) -> bool:
    """Whether the board is turned for North's player: North's houses below South's, bin h+2 leftmost of them,
    North's row of names below the board, North's store on the right."""
    boxes = await page.evaluate("""() => Object.fromEntries(['#board .pit[data-bin="1"]', '#board .pit[data-bin="8"]',
        '#board .pit[data-bin="13"]', '.store.north', '.store.south', '#player-north', '#board']
        .map((q) => [q, document.querySelector(q).getBoundingClientRect().toJSON()]))""")
    bin1, bin8, bin13 = (boxes[f'#board .pit[data-bin="{b}"]'] for b in (1, 8, 13))
    turned = bin8["y"] > bin1["y"] and bin8["x"] < bin13["x"] and boxes["#player-north"]["y"] > boxes["#board"]["y"]
    assert turned == (boxes[".store.north"]["x"] > boxes[".store.south"]["x"])
    return bool(turned)


async def test_the_pie_swap(arena: RunningServer, pages: Pages) -> None:
    """With the pie rule and North's seat, the page offers "swap" on North's first turn only; after the swap the
    player is South, the bot moves as North, and the player's houses react again."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"pie": "on", "clock": ""}, seat="north")
    swap = page.get_by_role("button", name="Swap sides (pie rule)")
    await swap.wait_for()
    assert await north_nearest(page)  # North's player sees the board turned: its own houses at the bottom
    assert "swap sides" in (await page.inner_text("#status")).lower()
    await swap.click()
    await page.wait_for_function("() => document.querySelector('#player-south .name').textContent.endsWith('(you)')")
    bins = await my_turn(page)
    assert bins and all(1 <= b <= 6 for b in bins) and await swap.is_hidden()
    assert not await north_nearest(page)  # now South: the board as usual
    assert await page.get_attribute("#board .pit[data-bin='1']", "aria-label") == "house 1, " + \
        (await page.inner_text("#board .pit[data-bin='1'] .count")) + " seeds"
    host = await Client.open(arena.url, "host")
    record, _ = await fens_of(host, match_id)
    assert "swap" in record and len(record) > record.index("swap") + 1  # the bot moved after the swap
    await page.click("#resign")
    await page.click("#resign-yes")
    await page.wait_for_function(OVER)
    await host.close()


async def test_a_move_refused_when_another_tab_played_first(arena: RunningServer, pages: Pages) -> None:
    """Two tabs of one identity on one match (the second opened as /watch/ID turns into the play page): the
    first tab's move is played; the second tab, not yet told, sends another move for the same ply; the server
    refuses it (stale ply) and that tab undoes its move, says why in one line, and shows the server's position."""
    first = await pages.open("/")
    match_id = await start_from_lobby(first, "greedy", {"clock": ""})
    second = await pages.open(f"/watch/{match_id}", context=first.context)  # the watch page turns into play
    for tab in (first, second):
        await my_turn(tab)
    assert second.url.endswith(f"/play/{match_id}")
    await second.evaluate("window.__hold = true")
    bins = await playable(first)
    await first.locator(f"#board .pit[data-bin='{bins[0]}']").click()
    await first.wait_for_function("() => window.__got.some(m => m.type === 'ack')")
    other = [b for b in await playable(second) if b != bins[0]]
    await second.locator(f"#board .pit[data-bin='{other[0]}']").click()
    assert await second.evaluate("window.__sent.filter(m => m.type === 'move').length") == 1
    await second.evaluate("window.__release()")
    await second.wait_for_function("() => window.__got.some(m => m.type === 'error' && m.code === 'stale_ply')")
    refused = await second.inner_text("#refused")
    assert "not played" in refused.lower()
    await first.wait_for_function(READY_OR_OVER)
    await second.wait_for_function(READY_OR_OVER)
    host = await Client.open(arena.url, "host")
    record, fens = await fens_of(host, match_id)
    assert record[0] == str(bins[0])
    await wait_fen(second, fens[-1])
    await wait_fen(first, fens[-1])
    await host.close()


async def test_a_flag_falls_on_a_short_clock(arena: RunningServer, pages: Pages) -> None:
    """A 5-second clock that the player lets run out: the clock warns of low time, then shows the flag, and the
    game ends on time in the bot's favour."""
    page = await pages.open("/")
    await start_from_lobby(page, "greedy", {"clock": "5+0"}, seat="north")
    await page.evaluate("""() => {
        const clock = document.querySelector('#player-north .clock');
        window.__clock = [clock.textContent];
        new MutationObserver(() => window.__clock.push(clock.textContent))
          .observe(clock, { childList: true, characterData: true, subtree: true });
    }""")
    await page.wait_for_function(OVER, timeout=20_000)
    shown = await page.evaluate("window.__clock")
    assert any(text.endswith(" low") for text in shown), shown  # the warning while it ran
    assert "time" in (await page.inner_text("#status")).lower()
    assert (await page.inner_text("#end-result")).startswith("bot:greedy wins")
    assert "flag" in await page.inner_text("#player-north .clock")
    assert await playable(page) == []


async def test_reload_mid_game_and_go_on(arena: RunningServer, pages: Pages) -> None:
    """The lobby links back to an unfinished game; reloading the page mid-game comes back to the same seat (the
    same guest, from local storage) at the position the server holds; a dropped connection resumes from the last
    event; the game goes on to its end."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"clock": "300+5"})
    for _ in range(3):
        bins = await my_turn(page)
        await page.locator(f"#board .pit[data-bin='{bins[0]}']").click()
    await page.goto(pages.base + "/")  # away to the lobby, and back by its link to the unfinished game
    await page.get_by_role("link", name=f"back to game {match_id}").click()
    await page.wait_for_url(f"**/play/{match_id}")
    await my_turn(page)
    hello = (await page.evaluate("window.__sent"))[0]
    await page.reload()
    await page.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    again = (await page.evaluate("window.__sent"))[0]
    assert again["token"] and again["name"] == hello["name"] and match_id in page.url
    assert "token" not in page.url and again["token"] not in page.url
    bins = await my_turn(page)
    await page.locator(f"#board .pit[data-bin='{bins[0]}']").click()
    guests = [s for peer in arena.admission.peers.values() for s in peer.sessions if s.name == hello["name"]]
    assert len(guests) == 1 and guests[0].ws.transport is not None
    guests[0].ws.transport.abort()  # the network drops: the page reconnects, syncs from its last event
    await page.wait_for_function("() => window.__sent.filter(m => m.type === 'hello').length === 2")
    await play_out([page])
    sent = await page.evaluate("window.__sent")
    assert [m["type"] for m in sent if m["type"] in ("watch", "sync")][:2] == ["watch", "sync"]
    host = await Client.open(arena.url, "host")
    await assert_shown_is_record(page, host, match_id)
    await host.close()


async def test_a_phone_plays_a_game_by_taps(arena: RunningServer, pages: Pages) -> None:
    """On a 360x640 touch screen the board turns a quarter, nothing scrolls sideways, and a whole game is played
    by tapping houses."""
    page = await pages.open("/", width=360, height=640, touch=True)
    assert await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    match_id = await start_from_lobby(page, "greedy", {"clock": ""})
    assert await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    north, south = [await page.locator(f".store.{side}").bounding_box() for side in ("north", "south")]
    assert north and south and north["y"] + north["height"] <= south["y"]
    for house in await page.locator("#board button.pit").all():
        box = await house.bounding_box()
        assert box and box["width"] >= 40 and box["height"] >= 40  # a finger's size
    await play_out([page], tap=True)
    host = await Client.open(arena.url, "host")
    await assert_shown_is_record(page, host, match_id)
    await host.close()


async def test_resign_then_rematch_with_the_seats_swapped(arena: RunningServer, pages: Pages) -> None:
    """A second person joins an open match from the lobby's list; one resigns (after a confirmation); the other
    asks for a rematch, the first accepts it, and both play the new match with the seats swapped."""
    alice = await pages.open("/")
    match_id = await start_from_lobby(alice, "", {"clock": ""})
    bob = await pages.open("/")
    join = bob.locator(f"#live tr[data-match='{match_id}'] button")
    await join.click()
    await bob.wait_for_url(f"**/play/{match_id}")
    await alice.wait_for_function("() => document.getElementById('status').textContent.includes('Your turn')")
    await alice.get_by_role("button", name="Resign…").click()
    await alice.get_by_role("button", name="No, play on").click()
    assert not await alice.evaluate(OVER)
    await alice.get_by_role("button", name="Resign…").click()
    await alice.get_by_role("button", name="Yes, resign").click()
    for page in (alice, bob):
        await page.wait_for_function(OVER)
    assert "resign" in (await bob.inner_text("#end-result")).lower()
    assert (await bob.inner_text("#end-result")).startswith("You win")
    await bob.get_by_role("button", name="Rematch (seats swapped)").click()
    accept = alice.get_by_role("button", name="Accept the rematch")
    await accept.wait_for(timeout=10_000)
    await accept.click()
    for page in (alice, bob):
        await page.wait_for_function("(old) => !location.pathname.endsWith(old)", arg=match_id)
        await page.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    assert alice.url == bob.url
    await bob.wait_for_function("() => document.getElementById('status').textContent.includes('Your turn')")
    assert "(you)" in await alice.inner_text("#player-north") and "(you)" in await bob.inner_text("#player-south")


async def test_a_chosen_name_and_a_key_carried_to_another_browser(arena: RunningServer, pages: Pages) -> None:
    """A visitor chooses a display name once (a name the server would refuse is refused on the page, a taken one
    by the server, and the identity stays); the key shown on request, pasted into another browser, plays as the
    same name there. The key is never in an address."""
    taken = await Client.open(arena.url, "already-here")
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('my-name').textContent.startsWith('guest-')")
    guest = await page.inner_text("#my-name")
    await page.fill("#name-input", "bot:me")
    await page.get_by_role("button", name="Use this name").click()
    assert "cannot be used" in await page.inner_text("#identity-error")
    await page.fill("#name-input", "already-here")
    await page.get_by_role("button", name="Use this name").click()
    await page.wait_for_function("() => document.getElementById('identity-error').textContent.includes('taken')")
    await page.wait_for_function("(g) => document.getElementById('my-name').textContent === g", arg=guest)
    await page.fill("#name-input", "Ada")
    await page.get_by_role("button", name="Use this name").click()
    await page.wait_for_function("() => document.getElementById('my-name').textContent === 'Ada'")
    assert await page.locator("#name-form").is_hidden()  # once: a name stays with its key
    await page.click("#carry summary")
    await page.get_by_role("button", name="Show my key").click()
    key = await page.input_value("#key")
    other = await pages.open("/")
    await other.wait_for_function("() => document.getElementById('my-name').textContent.startsWith('guest-')")
    await other.click("#carry summary")
    await other.fill("#import-key", key)
    await other.get_by_role("button", name="Use this key").click()
    await other.wait_for_function("() => document.getElementById('my-name').textContent === 'Ada'")
    match_id = await start_from_lobby(other, "greedy", {"clock": ""})
    assert "Ada (you)" in await other.inner_text("#player-south")
    for tab in (page, other):
        assert key not in tab.url
    assert match_id and await taken.request("matches", type="list")
    await taken.close()


async def long_game(host: Client, plies: int) -> str:
    """The id of a stored bot game of at least `plies` plies."""
    for n in range(40):
        match_id = f"long-{n}"
        await host.request("snapshot", type="exhibition", variant="kalah(6,6)", south="random", north="random",
                           match_id=match_id)
        await host_wait_finished(host, match_id)
        record, _ = await fens_of(host, match_id)
        if len(record) >= plies:
            return match_id
    raise AssertionError(f"no game of {plies} plies in 40 tries")


async def test_a_long_move_list_fits_its_column(arena: RunningServer, pages: Pages) -> None:
    """At 1200x900 the move list of a game of 35 plies or more stays in its column on the watch and replay pages:
    no third column cut off, no sideways scrolling."""
    host = await Client.open(arena.url, "host")
    match_id = await long_game(host, 35)
    for path in (f"/watch/{match_id}", f"/game/{match_id}"):
        page = await pages.open(path, width=1200, height=900)
        await page.wait_for_function("() => document.getElementById('moves').children.length >= 35")
        assert await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), path
        fits = await page.evaluate("""() => {
            const list = document.getElementById('moves');
            const box = list.getBoundingClientRect();
            const column = list.parentElement.getBoundingClientRect();
            return list.scrollWidth <= list.clientWidth && box.right <= column.right + 1
              && [...list.children].every((li) => li.getBoundingClientRect().right <= box.right + 1);
        }""")
        assert fits, path
    await host.close()


async def test_an_unknown_match_shows_only_the_message_and_a_way_back(pages: Pages) -> None:
    """/watch/UNKNOWN and /game/UNKNOWN say there is no such match, with a link back to the lobby, and draw no
    board, no open seats, no controls and no record to copy."""
    for path, message in (("/watch/UNKNOWN", "No live match UNKNOWN."), ("/game/UNKNOWN", "No stored game UNKNOWN."),
                          ("/play/UNKNOWN", "No live match UNKNOWN.")):
        page = await pages.open(path)
        await page.get_by_text(message).wait_for()
        assert await page.get_by_role("link", name="Back to the lobby").is_visible()
        for hidden in ("#board", "#moves", ".player", "#status"):
            assert await page.locator(hidden).first.is_hidden(), (path, hidden)
        assert await page.get_by_role("button").count() == 0 or not await page.get_by_role("button").first.is_visible()
        assert "(open seat)" not in await page.inner_text("body")
        assert "Copy the record" not in await page.inner_text("body")


async def test_the_opponent_away_and_back_then_a_claim_the_server_accepts(serve: Serve) -> None:
    """When the opponent closes the page the row says "away", and not once they are back; when they stay away,
    "Claim the win" appears once the server's grace period (written into the page) has passed, and the server
    accepts the claim at once: the game ends by abandonment in the claimer's favour."""
    arena = await serve(grace_s=2.0)
    async with chromium() as launched:
        pages = Pages(launched, arena)
        alice = await pages.open("/")
        match_id = await start_from_lobby(alice, "", {"clock": ""})
        bob = await pages.open(f"/play/{match_id}")
        await bob.get_by_role("button", name="Take the open seat (North)").click()
        await alice.wait_for_function("() => document.getElementById('status').textContent.includes('Your turn')")
        context = bob.context
        await bob.close()
        away = "() => document.querySelector('#player-north .away').textContent === 'away'"
        await alice.wait_for_function(away)
        bob = await pages.open(f"/play/{match_id}", context=context)
        await alice.wait_for_function("() => document.querySelector('#player-north .away').textContent === ''")
        assert await alice.locator("#claim").is_hidden()
        await bob.close()
        await alice.wait_for_function(away)
        claim = alice.get_by_role("button", name="Claim the win (opponent away)")
        await claim.wait_for(timeout=15_000)
        await claim.click()
        await alice.wait_for_function(OVER)
        assert (await alice.inner_text("#end-result")).startswith("You win")
        assert "abandonment" in await alice.inner_text("#end-result")
        assert not [m for m in await alice.evaluate("window.__got") if m["type"] == "error"]
        await pages.check()


async def test_a_claim_against_an_opponent_who_does_not_move(serve: Serve) -> None:
    """In an untimed game, "Claim the win (opponent not moving)" appears once the opponent, connected, has been to
    move for the server's no-move limit, and the server accepts the claim."""
    arena = await serve(idle_s=2.0)
    async with chromium() as launched:
        pages = Pages(launched, arena)
        alice = await pages.open("/")
        match_id = await start_from_lobby(alice, "", {"clock": ""})
        bob = await pages.open(f"/play/{match_id}")
        await bob.get_by_role("button", name="Take the open seat (North)").click()
        bins = await my_turn(alice)
        last = max(b for b in bins if b != 3)  # not bin 3: 4 seeds from it end in the store (an extra turn)
        await alice.locator(f"#board .pit[data-bin='{last}']").click()
        await my_turn(bob)
        claim = alice.get_by_role("button", name="Claim the win (opponent not moving)")
        await claim.wait_for(timeout=15_000)
        assert await bob.locator("#claim").is_hidden()  # the side to move has nothing to claim
        await claim.click()
        for page in (alice, bob):
            await page.wait_for_function(OVER)
        assert (await alice.inner_text("#end-result")).startswith("You win")
        assert "abandonment" in await bob.inner_text("#end-result")
        await pages.check()


async def test_a_match_the_operator_aborts_ends_with_no_result(arena: RunningServer, pages: Pages) -> None:
    """When the server's operator aborts a live match, the player's page ends it saying there is no result (not
    a draw) and no rating change, and offers nothing more to play in it."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"clock": ""})
    await my_turn(page)
    operator = await Client.open(arena.url, "op")
    await operator.send(type="moderate", operator_token=OPERATOR, act="abort", target=match_id, reason="test")
    assert (await operator.expect("moderated"))["type"] == "moderated"
    await page.wait_for_function(OVER)
    assert await page.inner_text("#end-result") == "No result: aborted by the operator."
    assert "draw" not in (await page.inner_text("#status")).lower()
    assert await playable(page) == [] and await page.locator("#controls").is_hidden()
    await page.wait_for_function("() => document.getElementById('rating').textContent !== ''")
    assert "rating" in (await page.inner_text("#rating")).lower()
    await operator.close()

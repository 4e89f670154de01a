"""One person playing from the web pages against the server's hosted bots, in a real headless browser
(tests/helpers/browser.py) against a real server: the lobby starts games, the match page plays them by clicks, keys and
taps (also from a second tab, on a phone), and every position shown is compared with the server's
stored record; a chosen name and its key, long move lists, unknown matches and an operator's abort.
"""

from __future__ import annotations

from typing import Any

from server.assembly import RunningServer
from tests.helpers.browser import (
    OVER,
    READY_OR_OVER,
    SKIP,
    Pages,
    assert_shown_is_record,
    fens_of,
    host_wait_finished,
    my_turn,
    play_out,
    playable,
    start_from_lobby,
    wait_fen,
)
from tests.helpers.wire import OPERATOR, Client

pytestmark = SKIP


async def sent_moves(page: Any) -> int:
    """How many moves the page has sent."""
    return int(await page.evaluate("window.__sent.filter(m => m.type === 'move').length"))


async def house_number(page: Any, bin_: int) -> int:
    """The number key of a bin for the player at the board (its house's number on its own side)."""
    label = await page.get_attribute(f"#board .pit[data-bin='{bin_}']", "aria-keyshortcuts")
    assert label is not None
    return int(label)


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


async def test_a_time_control_the_server_refuses_is_said_in_one_line(pages: Pages) -> None:
    """A time the server's limits refuse (no time at all, an increment over 180 s, a limit per move over an hour)
    is said under the form in one line that names the fix, and nothing is sent; a refusal of the server's own that
    names its request only in its message (`create.variant: …`) is shown too, not dropped."""
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    for clock, line in (("0", "time: a base of more than 0 and at most 10800 seconds (300+5), or empty for no clock"),
                        ("300+181", "time: an increment of at most 180 seconds (300+5)"),
                        ("3601/move", "time: a limit per move of more than 0 and at most 3600 seconds (10/move)")):
        await page.fill("#clock", clock)
        await page.click("#play")
        assert await page.inner_text("#play-error") == line
        assert await page.inner_text("#variant-text") == line
    assert await page.evaluate("window.__sent.filter(m => m.type === 'create').length") == 0
    await page.evaluate("""() => window.__socket.send(JSON.stringify(
        { type: "create", variant: "kalah(6,4,clock=0)", seat: "south", opponent: "greedy" }))""")
    await page.wait_for_function("() => document.getElementById('play-error').textContent.startsWith('the game')")
    assert await page.inner_text("#play-error") == (
        "the game's settings: a time control needs a base time or a per-move limit")
    assert page.url.endswith("/")


async def test_a_fixed_time_leaves_no_stale_error_under_the_form(pages: Pages) -> None:
    """Once a refused time is fixed while another field is wrong, the line under the form names that field, and once
    every field is right it is gone (before: the time's error stayed until the next press of Play)."""
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await page.fill("#clock", "300+181")
    await page.click("#play")
    assert await page.inner_text("#play-error") == "time: an increment of at most 180 seconds (300+5)"
    await page.fill("#houses", "13")
    await page.fill("#clock", "300+5")
    assert await page.inner_text("#play-error") == "houses: a whole number from 1 to 12"
    await page.fill("#houses", "6")
    assert await page.inner_text("#play-error") == ""
    assert await page.evaluate("window.__sent.filter(m => m.type === 'create').length") == 0


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


async def test_the_opponents_move_is_announced(arena: RunningServer, pages: Pages) -> None:
    """The bot's move is said in words in a live region (a screen reader reads it), not only drawn."""
    page = await pages.open("/")
    await start_from_lobby(page, "greedy", {"clock": ""}, seat="north")
    await my_turn(page)
    record = await page.evaluate("window.__got.find(m => m.type === 'snapshot').record")
    announced = await page.evaluate("""() => [...document.querySelectorAll('[aria-live], [role=status], [role=alert]')]
        .filter((n) => n.getAttribute('aria-live') !== 'off').map((n) => n.textContent)""")
    assert record and any(text.startswith(f"South sowed bin {record[-1]}") for text in announced), announced


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

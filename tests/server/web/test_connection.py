"""The web pages without a connection: a lost one says so and sends nothing (no house reacts, every button says
nothing was sent), a reloaded page or a dropped connection comes back to its game at the position the server holds."""

from __future__ import annotations

import asyncio

from server.assembly import RunningServer
from server.edge.session import Session
from tests.helpers.browser import (
    OVER,
    SKIP,
    Pages,
    assert_shown_is_record,
    my_turn,
    play_out,
    playable,
    start_from_lobby,
)
from tests.helpers.wire import Client
from tests.server.web.test_play_bots import sent_moves

pytestmark = SKIP


async def test_the_lobby_says_when_it_cannot_start_a_game(pages: Pages) -> None:
    """With the connection lost, **Play the bot** says in one line that the server is not reached (nothing sent,
    the click is not silently lost); the line goes once the connection is back, and the button then starts the
    game."""
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await page.evaluate(DEAD_SERVER)
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'reconnecting'")
    await page.click("#play")
    assert await page.inner_text("#play-error") == (
        "No connection to the server: reconnecting… press it again once the top right says connected.")
    assert await page.evaluate("window.__sent.filter(m => m.type === 'create').length") == 0
    await page.evaluate("() => { window.__down = false; }")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'", timeout=20_000)
    assert await page.inner_text("#play-error") == ""
    await page.click("#play")
    await page.wait_for_url("**/play/*")


async def sessions_of(arena: RunningServer, name: str, count: int, timeout: float = 5.0) -> list[Session]:
    """The server's sessions of the identity `name` once there are `count` of them (a page left or reloaded closes its
    connection, which the server sees a moment later); fails after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = [s for peer in arena.admission.peers.values() for s in peer.sessions if s.name == name]
        if len(found) == count:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{len(found)} sessions of {name}, not {count}, after {timeout} s")
        await asyncio.sleep(0.05)


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
    guests = await sessions_of(arena, hello["name"], 1)  # the pages before the reload closed theirs
    assert guests[0].ws.transport is not None
    guests[0].ws.transport.abort()  # the network drops: the page reconnects, syncs from its last event
    await page.wait_for_function("() => window.__sent.filter(m => m.type === 'hello').length === 2")
    await play_out([page])
    sent = await page.evaluate("window.__sent")
    assert [m["type"] for m in sent if m["type"] in ("watch", "sync")][:2] == ["watch", "sync"]
    host = await Client.open(arena.url, "host")
    await assert_shown_is_record(page, host, match_id)
    await host.close()


DEAD_SERVER = """() => {
    // the connection drops, and while window.__down is set each new one closes as it opens, before its hello
    const Spy = window.WebSocket;
    window.__down = true;
    window.WebSocket = class extends Spy {
      constructor(...args) {
        super(...args);
        if (window.__down) this.addEventListener("open", () => this.close());
      }
    };
    window.__socket.close();
}"""


async def test_no_house_reacts_while_the_connection_is_lost(arena: RunningServer, pages: Pages) -> None:
    """The connection is lost on the player's turn (the server cannot be reached): no house looks playable or
    reacts, and the status line says the connection is lost instead of "Your turn"; once it is back the houses
    react again and a move is played."""
    page = await pages.open("/")
    match_id = await start_from_lobby(page, "greedy", {"clock": ""})
    await my_turn(page)
    await page.evaluate(DEAD_SERVER)
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'reconnecting'")
    await page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('Connection lost')")
    assert await playable(page) == []
    assert await page.inner_text("#status") == "Connection lost: reconnecting… You can move once it is back."
    await page.keyboard.press("1")
    await page.locator("#board .pit[data-bin='1']").click(force=True)
    assert await sent_moves(page) == 0
    await page.evaluate("() => { window.__down = false; }")
    bins = await my_turn(page)
    assert bins and (await page.inner_text("#status")).startswith("Your turn")
    await page.locator(f"#board .pit[data-bin='{bins[0]}']").click()
    await page.wait_for_function("() => window.__got.some(m => m.type === 'ack')")
    assert [m["bin"] for m in await page.evaluate("window.__sent") if m["type"] == "move"] == [bins[0]]
    assert match_id in page.url


async def test_resign_and_rematch_say_when_there_is_no_connection(arena: RunningServer, pages: Pages) -> None:
    """With the connection lost, **Yes, resign** and **Rematch** send nothing and say so in one line, so the game
    is not taken for resigned nor the rematch for asked; once the connection is back both work."""
    offline = ("Not sent: no connection to the server (reconnecting…). Press it again once the top right says "
               "connected.")
    page = await pages.open("/")
    await start_from_lobby(page, "greedy", {"clock": ""})
    await my_turn(page)
    await page.evaluate(DEAD_SERVER)
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'reconnecting'")
    await page.get_by_role("button", name="Resign…").click()
    await page.get_by_role("button", name="Yes, resign").click()
    assert await page.inner_text("#refused") == offline
    await page.evaluate("() => { window.__down = false; }")
    assert await my_turn(page)  # the game goes on, and the line has gone
    assert await page.inner_text("#refused") == ""
    await page.get_by_role("button", name="Resign…").click()
    await page.get_by_role("button", name="Yes, resign").click()
    await page.wait_for_function(OVER)
    await page.evaluate("() => { window.__down = true; window.__socket.close(); }")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'reconnecting'")
    await page.get_by_role("button", name="Rematch (seats swapped)").click()
    assert await page.inner_text("#rematch-state") == offline
    assert await page.is_enabled("#rematch")
    sent = await page.evaluate("window.__sent.map(m => m.type)")
    assert sent.count("resign") == 1 and sent.count("create") == 0  # the rematch was not asked for
    await page.evaluate("() => { window.__down = false; }")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'", timeout=20_000)
    assert await page.inner_text("#rematch-state") == ""
    await page.get_by_role("button", name="Rematch (seats swapped)").click()
    await page.wait_for_function("() => document.querySelector('#player-north .name').textContent.endsWith('(you)')")

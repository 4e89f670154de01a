"""Two people playing each other from the web pages, each in a browser context of their own (tests/helpers/browser.py),
against a real server: seeking, opening a match and sharing its link, joining from the lobby, resigning and a
rematch, and claiming the win from an opponent who left or does not move; both boards show every position of the
server's stored record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.messages import SEEK_VARIANT, FindOpponent
from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.browser import (
    OVER,
    SKIP,
    Pages,
    assert_shown_is_record,
    my_turn,
    play_out,
    screenshot_path,
    start_from_lobby,
)
from tests.helpers.wire import Client

pytestmark = SKIP


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


async def test_the_default_seek_meets_the_terminals_and_seeks_are_shown(arena: RunningServer, pages: Pages) -> None:
    """The form's default seek is the terminal lobby's `a` (kalah(6,4,clock=300+5), `SEEK_VARIANT`): a terminal
    seeker sees it listed and meets it; a terminal seek shows in the page's "Seeking an opponent" table, and its
    "play" button pairs the page with it (before: the page sought 300+5, the terminal untimed, and neither showed
    the other's seek)."""
    assert SEEK_VARIANT == "kalah(6,4,clock=300+5)"
    page = await pages.open("/")
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await page.select_option("#opponent", "")
    await page.get_by_role("button", name="Seek an opponent").click()
    await page.get_by_text(f"Seeking an opponent for {SEEK_VARIANT}").wait_for()
    terminal = await Client.open(arena.url, "tina")
    try:
        seeks = (await terminal.request("matches", type="list"))["seeks"]
        assert [s["variant"] for s in seeks] == [SEEK_VARIANT]
        await terminal.send(**FindOpponent().model_dump())
        snapshot = await terminal.expect("snapshot")
        await page.wait_for_url(f"**/play/{snapshot['match_id']}")
        assert snapshot["you"] == "north" and snapshot["variant"] == SEEK_VARIANT
    finally:
        await terminal.close()
    seeker = await Client.open(arena.url, "sam")
    try:
        await seeker.send(type="seek", variant="kalah(4,3,clock=60+1)")
        await seeker.expect("seeking")
        lobby = await pages.open("/")
        play = lobby.get_by_role("button", name="play sam (kalah(4,3,clock=60+1))")
        await play.click()
        snapshot = await seeker.expect("snapshot")
        await lobby.wait_for_url(f"**/play/{snapshot['match_id']}")
        assert snapshot["you"] == "south" and snapshot["variant"] == "kalah(4,3,clock=60+1)"
    finally:
        await seeker.close()


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


async def test_the_opponent_away_and_back_then_a_claim_the_server_accepts(serve: Serve, browser: Any) -> None:
    """When the opponent closes the page the row says "away", and not once they are back; when they stay away,
    "Claim the win" appears once the server's grace period (written into the page) has passed, and the server
    accepts the claim at once: the game ends by abandonment in the claimer's favour."""
    pages = Pages(browser, await serve(grace_s=2.0))
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


async def test_a_claim_against_an_opponent_who_does_not_move(serve: Serve, browser: Any) -> None:
    """In an untimed game, "Claim the win (opponent not moving)" appears once the opponent, connected, has been to
    move for the server's no-move limit, and the server accepts the claim."""
    pages = Pages(browser, await serve(idle_s=2.0))
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

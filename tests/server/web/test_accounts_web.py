"""Accounts in a real headless browser: register and play in one context, sign in from another and find the same
player, recovery codes, revocation seen by the other context within a second, and a cookie no script can read."""

from __future__ import annotations

from typing import Any

from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, play_out, start_from_lobby
from tests.helpers.wire import Client

pytestmark = SKIP
PASSWORD = "the browser's password"


async def ready(page: Any) -> None:
    """Wait until the page's connection said hello."""
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")


async def sign_in(pages: Pages, name: str, password: str = PASSWORD) -> Any:
    """A new browser context signed in to `name` on its account page."""
    page = await pages.open("/account")
    await ready(page)
    await page.get_by_role("form", name="sign in").get_by_label("Name").fill(name)
    await page.get_by_role("form", name="sign in").get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await page.wait_for_selector("#signed-in", state="visible")
    await page.wait_for_function("(n) => document.getElementById('me').textContent === `playing as ${n} (signed in)`",
                                 arg=name)
    return page


async def test_register_play_then_sign_in_elsewhere_as_the_same_player(arena: RunningServer, pages: Pages) -> None:
    """A guest registers on the account page (keeping its identity), plays a game, closes the browser; a new
    context signs in and is the same player, with that game and its rating; its session list shows both."""
    first = await pages.open("/")
    await ready(first)
    guest = (await first.inner_text("#me")).removeprefix("playing as ")
    await first.goto(pages.base + "/account")
    await ready(first)
    register = first.get_by_role("form", name="Register")
    assert await register.get_by_label("Name").input_value() == guest
    await register.get_by_label("Password (8 to 1,024 characters)").fill(PASSWORD)
    await first.get_by_role("button", name="Register").click()
    await first.wait_for_selector("#signed-in", state="visible")
    codes = await first.get_by_role("list", name="recovery codes").get_by_role("listitem").all_inner_texts()
    assert len(codes) == 8
    await first.goto(pages.base + "/")
    await first.wait_for_function("(n) => document.getElementById('me').textContent.endsWith('(signed in)')")
    match_id = await start_from_lobby(first, "random", {"houses": "2", "seeds": "1", "clock": ""})
    await play_out([first])
    await first.context.close()

    second = await sign_in(pages, guest)
    host = await Client.open(arena.url, "host")
    games = await host.request("game_list", type="games", player=guest)
    assert [g["match_id"] for g in games["games"]] == [match_id]
    standings = await host.request("standings_table", type="standings")
    assert guest in [row["name"] for row in standings["rows"]]
    rows = second.locator("#sessions tr")
    await rows.nth(1).wait_for()
    assert await rows.count() == 2 and "this one" in await rows.nth(0).inner_text()
    await host.close()


async def test_a_recovery_code_signs_in_once_in_the_browser(pages: Pages) -> None:
    """A recovery code shown at registration signs a new context in once; its second use is refused on the page."""
    first = await pages.open("/account")
    await ready(first)
    register = first.get_by_role("form", name="Register")
    await register.get_by_label("Name").fill("rosa")
    await register.get_by_label("Password (8 to 1,024 characters)").fill(PASSWORD)
    await first.get_by_role("button", name="Register").click()
    await first.wait_for_selector("#codes", state="visible")
    codes = await first.get_by_role("list", name="recovery codes").get_by_role("listitem").all_inner_texts()
    for attempt in range(2):
        page = await pages.open("/account")
        await ready(page)
        recover = page.get_by_role("form", name="Lost your password?")
        await recover.get_by_label("Name").fill("rosa")
        await recover.get_by_label("Recovery code").fill(codes[0])
        await recover.get_by_label("New password").fill(f"new password {attempt}")
        await page.get_by_role("button", name="Sign in with the code").click()
        if attempt == 0:
            await page.wait_for_selector("#signed-in", state="visible")
        else:
            await page.wait_for_function("() => document.getElementById('recover-error').textContent !== ''")
            assert "already used" in await page.inner_text("#recover-error")


async def test_a_session_revoked_in_one_context_is_gone_in_the_other_within_a_second(pages: Pages) -> None:
    """Two contexts signed in to one account: one revokes the other's session, whose page shows it is signed out
    within a second."""
    setup = await pages.open("/account")
    await ready(setup)
    register = setup.get_by_role("form", name="Register")
    await register.get_by_label("Name").fill("sam")
    await register.get_by_label("Password (8 to 1,024 characters)").fill(PASSWORD)
    await setup.get_by_role("button", name="Register").click()
    await setup.wait_for_selector("#signed-in", state="visible")
    one, other = await sign_in(pages, "sam"), await sign_in(pages, "sam")
    await one.reload()  # its list was read before the other signed in
    await ready(one)
    await one.locator("#sessions tr").nth(2).wait_for()
    other_id = await other.evaluate("fetch('/account/me').then(r => r.json()).then(me => me.session_id)")
    revoke = one.locator(f"button[data-session='{other_id}']")
    assert (await revoke.get_attribute("aria-label") or "").startswith("Revoke the session of a browser from")
    await revoke.click()
    await other.wait_for_selector("#signed-out", state="visible", timeout=1000)
    assert "ended" in await other.inner_text("#status")


async def test_the_session_cookie_is_http_only_and_same_site(pages: Pages) -> None:
    """The session cookie is HttpOnly and SameSite=Lax: page scripts never see it."""
    page = await pages.open("/account")
    await ready(page)
    register = page.get_by_role("form", name="Register")
    await register.get_by_label("Name").fill("tia")
    await register.get_by_label("Password (8 to 1,024 characters)").fill(PASSWORD)
    await page.get_by_role("button", name="Register").click()
    await page.wait_for_selector("#signed-in", state="visible")
    cookies = [c for c in await page.context.cookies() if c["name"] == "kalah_session"]
    assert len(cookies) == 1 and cookies[0]["httpOnly"] is True and cookies[0]["sameSite"] == "Lax"
    assert "kalah_session" not in await page.evaluate("document.cookie")
    assert cookies[0]["value"] not in str(await page.evaluate("JSON.stringify(localStorage)"))

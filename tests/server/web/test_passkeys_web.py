"""Passkeys in a real headless Chromium with a virtual authenticator (WebAuthn through a CDP session): add one on
the account page, sign in with it in a new context as the same player, a replayed or cloned assertion refused, and
the password throttle never in the way."""

from __future__ import annotations

from typing import Any

from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages
from tests.server.web.test_accounts_web import PASSWORD, ready

pytestmark = SKIP
AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                 "isUserVerified": True}


async def with_authenticator(pages: Pages) -> tuple[Any, Any, str]:
    """A new context's account page with a virtual platform authenticator: the page, its CDP session and the
    authenticator's id."""
    page = await pages.open("/account")
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("WebAuthn.enable")
    added = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})
    await ready(page)
    return page, cdp, added["authenticatorId"]


async def registered_with_passkey(pages: Pages, name: str) -> tuple[Any, dict[str, Any]]:
    """A context that registered `name` and added a passkey on its account page (shown in its list): its page and
    the passkey's credential as its authenticator holds it (private key and counter)."""
    page, cdp, authenticator = await with_authenticator(pages)
    register = page.get_by_role("form", name="Register")
    await register.get_by_label("Name").fill(name)
    await register.get_by_label("Password (8 to 1,024 characters)").fill(PASSWORD)
    await page.get_by_role("button", name="Register").click()
    await page.wait_for_selector("#signed-in", state="visible")
    await page.get_by_role("button", name="Add a passkey").click()
    await page.get_by_role("button", name="Remove passkey 1, added", exact=False).wait_for()
    assert "Passkey added" in await page.inner_text("#status")
    [credential] = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))["credentials"]
    return page, credential


async def holding(pages: Pages, credential: dict[str, Any]) -> Any:
    """A new context's account page whose authenticator holds `credential`."""
    page, cdp, authenticator = await with_authenticator(pages)
    await cdp.send("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": credential})
    return page


async def passkey_sign_in(pages: Pages, credential: dict[str, Any]) -> Any:
    """A new context whose authenticator holds `credential`, after it clicked "Sign in with a passkey"."""
    page = await holding(pages, credential)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    return page


def localhost(arena: RunningServer, browser: Any) -> Pages:
    """Pages of the server at `http://localhost:PORT`: passkeys need a name, not an address."""
    return Pages(browser, f"http://localhost:{arena.port}")


async def test_a_passkey_added_in_one_context_signs_in_another_as_the_same_player(arena: RunningServer,
                                                                                  browser: Any) -> None:
    """Register and add a passkey in one context; a new context whose authenticator holds that credential signs in
    with it, no name typed, as the same player; then a copy of it whose counter did not go up is refused."""
    pages = localhost(arena, browser)
    first, credential = await registered_with_passkey(pages, "kiri")
    assert credential["isResidentCredential"] is True and credential["rpId"] == "localhost"
    await first.context.close()
    second = await passkey_sign_in(pages, credential)
    await second.wait_for_selector("#signed-in", state="visible")
    await second.wait_for_function(
        "() => document.getElementById('me').textContent === 'playing as kiri (signed in)'")
    assert await second.inner_text("#account-name") == "kiri"
    last_used = second.locator("#passkeys tr td").nth(1)
    await last_used.wait_for()
    assert await last_used.inner_text() != "never"
    clone = await passkey_sign_in(pages, credential)  # the counter it holds is the one the first sign-in went past
    await clone.wait_for_function("() => document.getElementById('passkey-signin-error').textContent !== ''")
    assert "copy" in await clone.inner_text("#passkey-signin-error")
    assert await clone.is_hidden("#signed-in")
    await pages.check()


async def test_a_replayed_passkey_assertion_is_refused(arena: RunningServer, browser: Any) -> None:
    """The assertion a passkey sign-in posted, sent again with its (used) challenge, is refused; the passkey is then
    removed from the list, and no longer signs in."""
    pages = localhost(arena, browser)
    _, credential = await registered_with_passkey(pages, "lumo")
    page = await holding(pages, credential)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.headers["kalah-account"])
            if r.url.endswith("/account/passkey/sign-in") else None)
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await page.wait_for_selector("#signed-in", state="visible")
    assert len(sent) == 1
    replayed = await page.evaluate("""(header) => fetch('/account/passkey/sign-in', {method: 'POST',
        headers: {'Kalah-Account': header}}).then(r => r.json())""", sent[0])
    assert replayed["ok"] is False and replayed["code"] == "sign_in_failed" and "already used" in replayed["message"]
    await page.get_by_role("button", name="Remove passkey 1, added", exact=False).click()
    await page.wait_for_selector("#passkeys-none", state="visible")
    gone = await passkey_sign_in(pages, credential)
    await gone.wait_for_function("() => document.getElementById('passkey-signin-error').textContent !== ''")
    assert "no longer" in await gone.inner_text("#passkey-signin-error")
    await pages.check()


async def test_the_password_throttle_does_not_block_a_passkey_sign_in(arena: RunningServer, browser: Any) -> None:
    """Wrong passwords until the account must wait (the right one refused too); its passkey still signs in."""
    pages = localhost(arena, browser)
    _, credential = await registered_with_passkey(pages, "mako")
    page = await holding(pages, credential)
    form = page.get_by_role("form", name="sign in")
    await form.get_by_label("Name").fill("mako")
    for attempt in range(7):
        await page.evaluate("() => { document.getElementById('signin-error').textContent = ''; }")
        await form.get_by_label("Password").fill(PASSWORD if attempt == 6 else f"wrong password {attempt}")
        await page.get_by_role("button", name="Sign in", exact=True).click()
        await page.wait_for_function("() => document.getElementById('signin-error').textContent !== ''")
    assert "too many failed sign-ins" in await page.inner_text("#signin-error")
    await page.get_by_role("button", name="Sign in with a passkey").click()
    await page.wait_for_selector("#signed-in", state="visible")
    assert await page.inner_text("#account-name") == "mako"
    await pages.check()

"""Passkeys over HTTP for the browser's account page: `POST /account/passkey/...`.

They travel as the other account requests do (`server.front.account_http`: fields base64-JSON in the
`Kalah-Account` header, the `Origin` the server's own or an allowed one, JSON answers):

- `add-options` (signed in: the session cookie) and `sign-in-options` (anyone) begin a ceremony: `{ok, challenge_id,
  options}`, `options` being WebAuthn's `PublicKeyCredentialCreationOptions` / `...RequestOptions` as JSON (binary
  fields base64url);
- `add {challenge_id, credential}` (signed in) stores the new passkey: `{ok, passkey}`;
- `sign-in {challenge_id, credential}` signs in as the passkey's account: the answer and the cookie of a password's
  sign-in;
- `list` (signed in): `{ok, passkeys: [{passkey_id, created_at, used_at}]}`; `remove {passkey_id}` (signed in).

The relying party id is the host of the page's origin (the `Host` the server was reached at, or an origin the
operator allowed with `kalah serve --allowed-origin`, e.g. a proxy's public name); a server reached by an IP address
has none (browsers refuse one).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import asdict
from typing import Any

from protocol.errors import BadFieldError, BadSessionError
from server.core.accounts import Accounts, SignIn
from server.core.networks import prefix_of
from server.core.passkeys import Passkeys
from server.front.origins import canonical_origin

PREFIX = "/account/passkey/"
PATHS = tuple(PREFIX + name for name in ("add-options", "add", "sign-in-options", "sign-in", "list", "remove"))


def relying_party_id(origin: str) -> str:
    """The relying party id of a page at `origin`: its host; `BadFieldError` for an address (or no origin)."""
    canonical = canonical_origin(origin)
    host = urllib.parse.urlsplit(canonical).hostname if canonical else None
    try:
        ipaddress.ip_address(host or "")
    except ValueError:
        if host:
            return host
    raise BadFieldError("passkeys need the server reached by a name (such as localhost or arena.example.org), not "
                        "by an address: open the page at its name")


def _text(fields: dict[str, Any], key: str, longest: int = 200) -> str:
    """A text field of the request (at most `longest` characters); `BadFieldError` if absent."""
    value = fields.get(key)
    if not isinstance(value, str) or not value or len(value) > longest:
        raise BadFieldError(f"{key}: a text field is missing")
    return value


def _credential(fields: dict[str, Any]) -> dict[str, Any]:
    """The browser's credential (an object); `BadFieldError` if absent."""
    value = fields.get("credential")
    if not isinstance(value, dict):
        raise BadFieldError("credential: the browser's credential (an object) is missing")
    return value


class PasskeyHttp:
    """The account page's passkey requests."""

    def __init__(self, accounts: Accounts, passkeys: Passkeys) -> None:
        self.accounts = accounts
        self.passkeys = passkeys

    async def answer(self, path: str, fields: dict[str, Any], origin: str, address: str,
                     cookie: str | None) -> tuple[dict[str, Any], SignIn | None]:
        """The JSON answer to a passkey request from the page at `origin` (already checked as the server's own or
        an allowed one), and the new session of a sign-in."""
        network = prefix_of(address)
        if path == PREFIX + "sign-in-options":
            begun = await self.passkeys.begin_sign_in(relying_party_id(origin), origin, network)
            return {"ok": True, "challenge_id": begun.challenge_id, "options": begun.options}, None
        if path == PREFIX + "sign-in":
            made = await self.passkeys.sign_in(_text(fields, "challenge_id"), _credential(fields), origin, "browser",
                                               address, network)
            return {"ok": True, "player_id": made.player.player_id, "name": made.player.name,
                    "session_id": made.session_id, "recovery_codes": []}, made
        if cookie is None:
            raise BadSessionError("sign in first: passkeys are added to an account signed in on this page")
        player, session_id = await self.accounts.resume(cookie)
        if path == PREFIX + "add-options":
            begun = await self.passkeys.begin_adding(player, session_id, relying_party_id(origin), origin, network)
            return {"ok": True, "challenge_id": begun.challenge_id, "options": begun.options}, None
        if path == PREFIX + "add":
            added = await self.passkeys.add(player, session_id, _text(fields, "challenge_id"), _credential(fields),
                                            origin)
            return {"ok": True, "passkey": asdict(added)}, None
        if path == PREFIX + "remove":
            await self.passkeys.remove(player.player_id, _text(fields, "passkey_id", 2000))
            return {"ok": True}, None
        return {"ok": True, "passkeys": [asdict(p) for p in await self.passkeys.listed(player.player_id)]}, None

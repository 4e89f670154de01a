"""Accounts over HTTP for the browser: sign-in sets a session cookie no page script can read.

`POST /account/register`, `/account/login` and `/account/recover` take their fields (those of the websocket
requests of the same names, and for a guest's registration its `token`) as a JSON object in the `Kalah-Account`
header, base64-encoded: the websocket server's HTTP side reads no request body. The answer is JSON (`{ok: true,
player_id, name, session_id, recovery_codes}`, or a refusal `{ok: false, code, message, retry_ms}` with the
websocket's error codes) and, on success, `Set-Cookie: kalah_session=SECRET; HttpOnly; SameSite=Lax; Path=/`; over
https (this port's TLS, a trusted proxy's `X-Forwarded-Proto: https`, or a page whose origin is https) the cookie is
`__Host-kalah_session=SECRET; ...; Secure`, which no other site (a sibling subdomain, a plain-http page) can set, and
which is read before a plain one: a cookie planted on the browser never stands for the session of a sign-in, which
always makes a new secret. `POST /account/logout` ends the cookie's session and clears the cookie; `GET /account/me`
says who the cookie signs in (`{signed_in, player_id, name, session_id}`). A POST must come from the server's own
page (its `Origin`): no other site can sign a visitor in or out. Passkeys are added and used at
`POST /account/passkey/...` (`server.front.passkey_http`). The websocket handshake of a page that holds the cookie
carries it, and its `hello {account: true}` is the account's.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from pydantic import ValidationError
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.account_messages import Login, Recover, Register
from protocol.errors import BadFieldError, BadSessionError, KalahError, SignInThrottledError
from server.core.accounts import Accounts, SignIn
from server.core.networks import prefix_of
from server.core.passkeys import Passkeys
from server.front.origins import origin_allowed
from server.front.passkey_http import PATHS as PASSKEY_PATHS
from server.front.passkey_http import PasskeyHttp
from server.logs import event as log_event

COOKIE = "kalah_session"
SECURE_COOKIE = "__Host-" + COOKIE
"""The cookie's name over https: browsers take it only from an https answer, host-only, with `Path=/`."""
HEADER = "Kalah-Account"
PATHS = ("/account/register", "/account/login", "/account/recover", "/account/logout", "/account/me", *PASSKEY_PATHS)
MAX_AGE_S = 180 * 24 * 3600
"""How long a browser keeps the cookie (the session itself lasts until it is ended)."""


def is_account_path(request: Request) -> bool:
    """Whether a plain HTTP request is one of accounts' (a websocket handshake never is)."""
    return request.path.split("?", 1)[0] in PATHS and request.headers.get("Upgrade", "").lower() != "websocket"


def session_cookie(headers: Headers) -> str | None:
    """The session secret a request's `Cookie` headers carry, if any: the https cookie (`__Host-`) before a plain
    one, and of several of a name the first (a cookie that cannot be read is skipped, never the whole header)."""
    found: dict[str, str] = {}
    for line in headers.get_all("Cookie"):
        for pair in line.split(";"):
            name, sep, value = pair.strip().partition("=")
            if sep and value.strip() and name.strip() in (COOKIE, SECURE_COOKIE):
                found.setdefault(name.strip(), value.strip().strip('"'))
    return found.get(SECURE_COOKIE) or found.get(COOKIE)


def _json(status: HTTPStatus, body: dict[str, Any], *cookies: str) -> Response:
    """A JSON answer (never cached), with a `Set-Cookie` for each of `cookies`."""
    data = (json.dumps(body) + "\n").encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                       ("Cache-Control", "no-store"), ("Connection", "close"),
                       ("X-Content-Type-Options", "nosniff")])
    for cookie in cookies:
        headers["Set-Cookie"] = cookie  # one more header line each
    return Response(status.value, status.phrase, headers, data)


def _refusal(exc: KalahError) -> Response:
    """A refusal as JSON (`ok: false`, the code and message of the websocket's `error`), answered 200 as a websocket
    refusal is a message: the page shows it, and the browser logs no failed load."""
    return _json(HTTPStatus.OK, {"ok": False, "code": exc.code, "message": str(exc)[:1000], "retry_ms": exc.retry_ms})


def cookie_text(secret: str, secure: bool, max_age: int = MAX_AGE_S) -> str:
    """The `Set-Cookie` value of a session (an empty one with `max_age` 0 clears it): over https `__Host-` and
    `Secure`."""
    return (f"{SECURE_COOKIE if secure else COOKIE}={secret}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax"
            + ("; Secure" if secure else ""))


class AccountHttp:
    """The browser's sign-in, registration, recovery and sign-out over HTTP."""

    def __init__(self, accounts: Accounts, passkeys: Passkeys, allowed_origins: frozenset[str], tls: bool,
                 take_identity: Callable[[str], None]) -> None:
        self.accounts = accounts
        self.passkeys = PasskeyHttp(accounts, passkeys)
        """Adding passkeys and signing in with them (`/account/passkey/...`)."""
        self.take_identity = take_identity
        """Charge a new identity to an address's budget (a registration of a new name)."""
        self.allowed_origins = allowed_origins
        self.tls = tls
        """Whether this port serves https itself (the cookie is then always `Secure`)."""

    async def respond(self, request: Request, address: str, forwarded_https: bool = False) -> Response:
        """Answer one request to `/account/...` from the client at `address` (`forwarded_https`: a trusted proxy
        says it came over https)."""
        path = request.path.split("?", 1)[0]
        try:
            if path == "/account/me":
                return await self.me(request)
            if request.method != "POST":
                return _json(HTTPStatus.METHOD_NOT_ALLOWED,
                             {"code": BadFieldError.code, "message": f"{path} takes POST"})
            origins, hosts = request.headers.get_all("Origin"), request.headers.get_all("Host")
            if len(origins) != 1 or len(hosts) > 1 or not origin_allowed(origins[0], hosts[0] if hosts else None,
                                                                          self.allowed_origins):
                return _json(HTTPStatus.FORBIDDEN, {"code": BadFieldError.code,
                                                    "message": "accounts are signed in from this server's own page"})
            secure = self.tls or forwarded_https or origins[0].strip().lower().startswith("https://")
            if path == "/account/logout":
                return await self.logout(request, secure)
            if path in PASSKEY_PATHS:
                return await self.passkey(path, request, origins[0], address, secure)
            return await self.sign_in(path, self.fields(request), address, secure)
        except KalahError as exc:
            if not isinstance(exc, SignInThrottledError):
                log_event("sign_in_refused", code=exc.code, remote=address, via="http")
            return _refusal(exc)

    @staticmethod
    def fields(request: Request) -> dict[str, Any]:
        """The JSON object of the `Kalah-Account` header; `BadFieldError` if there is none or it is not one."""
        raw = request.headers.get(HEADER)
        if raw is None:
            raise BadFieldError(f"the {HEADER} header carries the request's fields (base64 of a JSON object)")
        try:
            data = json.loads(base64.b64decode(raw.strip() + "=" * (-len(raw.strip()) % 4), validate=True))
        except (binascii.Error, ValueError):
            raise BadFieldError(f"the {HEADER} header is not base64 of a JSON object") from None
        if not isinstance(data, dict):
            raise BadFieldError(f"the {HEADER} header is not base64 of a JSON object")
        return data

    async def sign_in(self, path: str, fields: dict[str, Any], address: str, secure: bool) -> Response:
        """Register, sign in or recover; the session's secret goes only into the cookie."""
        token = fields.pop("token", None)
        fields["client"] = "browser"
        network = prefix_of(address)
        made: SignIn
        try:
            if path == "/account/register":
                msg = Register.model_validate({**fields, "type": "register"})
                guest = None
                if isinstance(token, str):
                    guest = await self.accounts.identities.restore(token)
                else:
                    self.take_identity(address)
                made = await self.accounts.register(msg.name, msg.password, "browser", address, guest)
            elif path == "/account/login":
                login = Login.model_validate({**fields, "type": "login"})
                made = await self.accounts.login(login.name, login.password, "browser", address, network)
            else:
                recover = Recover.model_validate({**fields, "type": "recover"})
                made = await self.accounts.recover(recover.name, recover.code, recover.new_password, "browser",
                                                   address, network)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise BadFieldError(f"{where}: {first['msg']}") from None
        log_event("signed_in", player=made.player.player_id, session=made.session_id, remote=address, via="http",
                  path=path)
        return _json(HTTPStatus.OK, {"ok": True, "player_id": made.player.player_id, "name": made.player.name,
                                     "session_id": made.session_id, "recovery_codes": made.recovery_codes},
                     cookie_text(made.token, secure))

    async def passkey(self, path: str, request: Request, origin: str, address: str, secure: bool) -> Response:
        """A passkey request (`server.front.passkey_http`); a sign-in's session goes only into the cookie."""
        body, made = await self.passkeys.answer(path, self.fields(request), origin.strip(), address,
                                                session_cookie(request.headers))
        if made is None:
            return _json(HTTPStatus.OK, body)
        log_event("signed_in", player=made.player.player_id, session=made.session_id, remote=address, via="http",
                  path=path)
        return _json(HTTPStatus.OK, body, cookie_text(made.token, secure))

    async def me(self, request: Request) -> Response:
        """Who the cookie signs in: `{signed_in: true, player_id, name, session_id}`, or `{signed_in: false}` (no
        cookie, or its session ended)."""
        secret = session_cookie(request.headers)
        try:
            if secret is None:
                raise BadSessionError("no session cookie")
            player, session_id = await self.accounts.resume(secret)
        except BadSessionError:
            return _json(HTTPStatus.OK, {"signed_in": False})
        return _json(HTTPStatus.OK, {"signed_in": True, "player_id": player.player_id, "name": player.name,
                                     "session_id": session_id})

    async def logout(self, request: Request, secure: bool) -> Response:
        """End the cookie's session (its connections close) and clear the cookie."""
        secret = session_cookie(request.headers)
        if secret is not None:
            try:
                player, session_id = await self.accounts.resume(secret)
                await self.accounts.revoke(player.player_id, session_id)
            except KalahError:
                pass  # ended already: the cookie is cleared all the same
        cleared = [cookie_text("", False, max_age=0)] + ([cookie_text("", True, max_age=0)] if secure else [])
        return _json(HTTPStatus.OK, {"ok": True}, *cleared)

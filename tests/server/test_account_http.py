"""The browser's sign-in over HTTP: fields in a header, a cookie that is HttpOnly (Secure under https), and no
sign-in from another site's page."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.error
import urllib.request
from email.message import Message
from typing import Any

from tests.conftest import Serve
from tests.server.test_accounts import PASSWORD, start


def post(base: str, path: str, fields: dict[str, Any], origin: str) -> tuple[int, Message, dict[str, Any]]:
    """POST an account request as the page does; the status, headers and JSON answer."""
    header = base64.b64encode(json.dumps(fields).encode()).decode()
    request = urllib.request.Request(base + path, method="POST", headers={"Kalah-Account": header, "Origin": origin})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers, json.loads(refused.read())


async def test_a_sign_in_sets_an_http_only_cookie_secure_under_https(serve: Serve) -> None:
    """Registering from the server's own page answers with the account and a HttpOnly, SameSite=Lax cookie holding
    the session, never in the body; a page served over https gets a Secure one."""
    srv = await start(serve)
    base = f"http://{srv.host}:{srv.port}"
    status, headers, body = await asyncio.to_thread(post, base, "/account/register",
                                                    {"name": "uma", "password": PASSWORD}, base)
    cookie = headers["Set-Cookie"]
    assert status == 200 and body["ok"] is True and body["name"] == "uma" and len(body["recovery_codes"]) == 8
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    assert cookie.split(";")[0].split("=", 1)[1] not in json.dumps(body)
    status, headers, body = await asyncio.to_thread(post, base, "/account/login",
                                                    {"name": "uma", "password": PASSWORD},
                                                    f"https://{srv.host}:{srv.port}")
    assert status == 200 and "; Secure" in headers["Set-Cookie"]
    _, _, wrong = await asyncio.to_thread(post, base, "/account/login", {"name": "uma", "password": "not it at all"},
                                          base)
    _, _, unknown = await asyncio.to_thread(post, base, "/account/login",
                                            {"name": "nobody", "password": "not it at all"}, base)
    assert wrong == unknown and wrong["code"] == "sign_in_failed"


async def test_another_sites_page_cannot_sign_in(serve: Serve) -> None:
    """A POST from a page of another origin is refused (403) and sets no cookie."""
    srv = await start(serve)
    base = f"http://{srv.host}:{srv.port}"
    status, headers, body = await asyncio.to_thread(post, base, "/account/register",
                                                    {"name": "vic", "password": PASSWORD}, "https://evil.example")
    assert status == 403 and "Set-Cookie" not in headers and body["code"] == "bad_field"

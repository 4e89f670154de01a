"""Accounts over the wire: register, sign in and out, sessions, recovery codes, throttling, and what is stored."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from server.assembly import RunningServer
from server.core.passwords import PasswordCost
from tests.conftest import CHEAP, Serve
from tests.helpers.wire import Client, eventually

PASSWORD = "correct horse battery"


async def start(serve: Serve, **options: Any) -> RunningServer:
    """A server whose password hashes are cheap."""
    options.setdefault("password_cost", CHEAP)
    return await serve(**options)


async def register(url: str, name: str, password: str = PASSWORD) -> dict[str, object]:
    """Register `name` from a connection that has not said hello; the `signed_in` answer."""
    c = await Client.open(url, name=None)
    answer = await c.request("signed_in", type="register", name=name, password=password)
    await c.close()
    return answer


async def signed_in(url: str, session: str) -> Client:
    """A connection that said hello with a terminal's session."""
    c = await Client.open(url, name=None)
    await c.send(type="hello", name="x", session=session)
    c.welcome = await c.expect("welcome")
    return c


async def test_register_then_sign_in_elsewhere_is_the_same_player(serve: Serve) -> None:
    """A registered account signs in from another connection as the same player, with no guest token."""
    srv = await start(serve)
    made = await register(srv.url, "ann")
    assert len(made["recovery_codes"]) == 8 and made["session"]  # type: ignore[arg-type]
    c = await Client.open(srv.url, name=None)
    again = await c.request("signed_in", type="login", name="ANN", password=PASSWORD)
    assert again["player_id"] == made["player_id"] and again["recovery_codes"] == []
    player = await signed_in(srv.url, str(again["session"]))
    assert player.welcome["player_id"] == made["player_id"] and player.welcome["name"] == "ann"
    assert player.welcome["account"] is True and player.welcome["token"] is None


async def test_a_guest_becomes_an_account_keeping_its_identity(serve: Serve) -> None:
    """A guest registers its own name: same player id; its guest token no longer says hello."""
    srv = await start(serve)
    guest = await Client.open(srv.url, name="bea")
    made = await guest.request("signed_in", type="register", name="bea", password=PASSWORD)
    assert made["player_id"] == guest.welcome["player_id"]
    old = await Client.open(srv.url, name=None)
    await old.send(type="hello", name="bea", token=guest.welcome["token"])
    assert await old.error() == "bad_token"
    again = await signed_in(srv.url, str(made["session"]))
    assert again.welcome["player_id"] == guest.welcome["player_id"]


async def test_an_account_name_is_never_a_guests(serve: Serve) -> None:
    """A guest hello with an account's name is refused."""
    srv = await start(serve)
    await register(srv.url, "cid")
    c = await Client.open(srv.url, name=None)
    await c.send(type="hello", name="CID")
    assert await c.error() == "name_taken"


async def test_wrong_password_and_unknown_name_get_the_same_answer(serve: Serve) -> None:
    """A wrong password and a name that is no account are refused with the very same error message."""
    srv = await start(serve)
    await register(srv.url, "dan")
    c = await Client.open(srv.url, name=None)
    await c.send(type="login", name="dan", password="wrong password")
    wrong = await c.expect("error")
    await c.send(type="login", name="nobody", password="wrong password")
    unknown = await c.expect("error")
    assert wrong == unknown and wrong["code"] == "sign_in_failed"


async def test_failed_sign_ins_are_throttled_but_a_recovery_code_still_works(serve: Serve) -> None:
    """Past the free failures an account must wait (even with the right password); its recovery code signs in."""
    srv = await start(serve)
    made = await register(srv.url, "eve")
    c = await Client.open(srv.url, name=None)
    for _ in range(6):
        await c.send(type="login", name="eve", password="not the password")
        assert await c.error() == "sign_in_failed"
    await c.send(type="login", name="eve", password=PASSWORD)
    throttled = await c.expect("error")
    assert throttled["code"] == "sign_in_throttled" and throttled["retry_ms"] >= 1000
    code = made["recovery_codes"][0]  # type: ignore[index]
    back = await c.request("signed_in", type="recover", name="eve", code=code, new_password="a new password")
    assert back["player_id"] == made["player_id"]


async def test_a_recovery_code_signs_in_once(serve: Serve) -> None:
    """A recovery code used once is refused the second time; the new password it set works."""
    srv = await start(serve)
    made = await register(srv.url, "fay")
    code = made["recovery_codes"][3]  # type: ignore[index]
    c = await Client.open(srv.url, name=None)
    await c.request("signed_in", type="recover", name="fay", code=code, new_password="second password")
    await c.send(type="recover", name="fay", code=code, new_password="third password")
    assert await c.error() == "sign_in_failed"
    await c.request("signed_in", type="login", name="fay", password="second password")


async def test_revoked_and_signed_out_sessions_close_their_connections(serve: Serve) -> None:
    """Revoking a session closes its connection and its secret no longer says hello; a listing shows the rest."""
    srv = await start(serve)
    first = await register(srv.url, "gus")
    c = await Client.open(srv.url, name=None)
    second = await c.request("signed_in", type="login", name="gus", password=PASSWORD)
    a = await signed_in(srv.url, str(first["session"]))
    b = await signed_in(srv.url, str(second["session"]))
    listing = await a.request("session_list", type="sessions")
    assert {s["session_id"] for s in listing["sessions"]} == {first["session_id"], second["session_id"]}
    assert [s["current"] for s in listing["sessions"] if s["session_id"] == first["session_id"]] == [True]
    await a.request("signed_out", type="revoke", session_id=second["session_id"])
    assert (await b.expect("error"))["code"] == "bad_session"
    await eventually(lambda: b.ws.close_code is not None, what="the revoked connection closed")
    again = await Client.open(srv.url, name=None)
    await again.send(type="hello", name="x", session=second["session"])
    assert await again.error() == "bad_session"
    await a.send(type="logout")
    await a.expect("signed_out")
    await eventually(lambda: a.ws.close_code is not None, what="the signed-out connection closed")


async def test_a_new_password_ends_the_other_sessions(serve: Serve) -> None:
    """Changing the password ends every other session; the old password no longer signs in."""
    srv = await start(serve)
    first = await register(srv.url, "hal")
    c = await Client.open(srv.url, name=None)
    second = await c.request("signed_in", type="login", name="hal", password=PASSWORD)
    a = await signed_in(srv.url, str(first["session"]))
    b = await signed_in(srv.url, str(second["session"]))
    done = await a.request("signed_out", type="change_password", old_password=PASSWORD, new_password="brand new one")
    assert done["ended"] == 1
    assert await b.error() == "bad_session"
    await c.send(type="login", name="hal", password=PASSWORD)
    assert await c.error() == "sign_in_failed"
    await c.request("signed_in", type="login", name="hal", password="brand new one")


async def test_sessions_need_an_account(serve: Serve) -> None:
    """A guest asking for sessions is told to sign in."""
    srv = await start(serve)
    guest = await Client.open(srv.url, name="ida")
    await guest.send(type="sessions")
    assert await guest.error() == "not_signed_in"


async def test_the_database_holds_no_password_or_session_secret(serve: Serve, tmp_path: Path) -> None:
    """After register, sign-in and recovery, no password, session secret or recovery code is in the files."""
    srv = await start(serve)
    made = await register(srv.url, "jon")
    c = await Client.open(srv.url, name=None)
    other = await c.request("signed_in", type="login", name="jon", password=PASSWORD)
    code = made["recovery_codes"][0]  # type: ignore[index]
    await c.request("signed_in", type="recover", name="jon", code=code, new_password="recovered password")
    await srv.close()
    data = b"".join(p.read_bytes() for p in tmp_path.glob("arena.sqlite3*"))
    assert b"jon" in data  # the file is readable as it is: the name is there
    secrets = [PASSWORD, "recovered password", str(made["session"]), str(other["session"]), *made["recovery_codes"]]  # type: ignore[misc]
    assert [s for s in secrets if s.encode() in data] == []


async def test_a_password_is_hashed_again_when_the_parameters_change(serve: Serve, tmp_path: Path) -> None:
    """A sign-in after the argon2id parameters changed stores the password's hash with the new ones."""
    srv = await start(serve)
    await register(srv.url, "kim")
    await srv.close()

    def stored() -> str:
        """The stored hash of kim's password."""
        with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3", isolation_level=None)) as db:
            return str(db.execute("SELECT secret FROM credentials WHERE kind = 'password'").fetchone()[0])

    assert "m=8,t=1,p=1" in stored()
    srv = await start(serve, password_cost=PasswordCost(time_cost=2, memory_kib=16, parallelism=1))
    c = await Client.open(srv.url, name=None)
    await c.request("signed_in", type="login", name="kim", password=PASSWORD)
    await srv.close()
    assert "m=16,t=2,p=1" in stored()


async def test_register_refuses_a_short_password(serve: Serve) -> None:
    """A password under 8 characters is refused as a bad field, and the message does not echo it."""
    srv = await start(serve)
    c = await Client.open(srv.url, name=None)
    await c.send(type="register", name="lea", password="short1")
    error = await c.expect("error")
    assert error["code"] == "bad_field" and "short1" not in error["message"]
    await asyncio.sleep(0)

"""Attacks on what the server stores: nothing a client sends is stored in a form that cannot be read back,
and one unreadable row never stops the server from starting."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from cli.main import main
from protocol import TimeControl, Variant, VariantError
from protocol.variant import MAX_CLOCK_MS
from server.core.clocks import Clocks
from tests.conftest import Serve
from tests.helpers.wire import OPERATOR, Client, live_match

SPELLINGS = ["Random ", "random\t", "alphabeta:\u0663", "Alphabeta:9", "alphabeta:09", "RANDOM", "perfect\n",
             "alphabeta:9 ", "greedy\u200b", "\uff52\uff41\uff4e\uff44\uff4f\uff4d"]


async def test_odd_bot_spellings_are_refused_before_anything_is_stored(serve: Serve, tmp_path: Path) -> None:
    """Every near-miss spelling of a bot is `unknown_bot` in create and exhibition; stored games stay readable,
    and the server restarts on its database."""
    db = tmp_path / "arena.sqlite3"
    server = await serve(db)
    c = await Client.open(server.url, "alice")
    for spelling in SPELLINGS:
        await c.send(type="create", opponent=spelling)
        assert await c.error() in ("unknown_bot", "bad_field"), spelling
        await c.send(type="exhibition", south=spelling, north="random")
        assert await c.error() in ("unknown_bot", "bad_field"), spelling
    await c.request("snapshot", type="create", opponent="alphabeta:9")
    assert (await c.request("game_list", type="games", status="live"))["games"][0]["north"] == "bot:alphabeta:9"
    await c.close()
    await server.close()
    again = await serve(db)
    assert len(again.arena.rooms) == 1 and again.arena.quarantined == 0


def test_time_controls_are_bounded() -> None:
    """A day-long base or increment is refused; the longest allowed controls parse."""
    for text in ("kalah(12,24,clock=86400+86400)", "kalah(6,4,clock=10801+0)", "kalah(6,4,clock=60+181)",
                 "kalah(6,4,clock=3601/move)"):
        with pytest.raises(VariantError):
            Variant.parse(text)
    assert Variant.parse("kalah(12,24,clock=10800+180)").time_control == TimeControl(10_800_000, 180_000)


def test_a_clock_never_passes_its_cap() -> None:
    """Increments stop adding once a clock holds `MAX_CLOCK_MS`, which fits the wire's 32-bit fields."""
    clocks = Clocks(TimeControl(10_800_000, 180_000))
    clocks.start(0, 0.0)
    for step in range(200):
        left = clocks.after_action(step % 2, step * 0.001)
        clocks.apply(left, 1 - step % 2, step * 0.001)
    assert max(clocks.left_ms) == MAX_CLOCK_MS < 2**31


async def test_an_overlong_clock_is_refused_on_the_wire(serve: Serve) -> None:
    """`create` with a day-long time control is refused as a bad variant; nothing is created."""
    server = await serve()
    c = await Client.open(server.url, "alice")
    await c.send(type="create", variant="kalah(12,24,clock=86400+86400)")
    assert await c.error() in ("bad_variant", "bad_field")
    assert not server.arena.rooms
    await c.close()


async def test_a_bad_field_names_its_request_and_match(serve: Serve) -> None:
    """A known request with a field the wire refuses is answered naming that request (and its match), so a client
    can tell which of its requests was refused; it named none."""
    server = await serve()
    c = await Client.open(server.url, "alice")
    await c.send(type="create", variant="kalah(6,4,clock=0)")
    refusal = await c.expect("error")
    assert (refusal["code"], refusal["request"], refusal["match_id"]) == ("bad_field", "create", None)
    assert refusal["message"].startswith("create.variant: ")
    await c.send(type="move", match_id="m-some", ply=0, action="x" * 5000)
    refusal = await c.expect("error")
    assert (refusal["code"], refusal["request"], refusal["match_id"]) == ("bad_field", "move", "m-some")
    await c.send(type="create", match_id=["not", "a", "string"], variant="kalah(6,4)", spare=1)
    refusal = await c.expect("error")
    assert (refusal["code"], refusal["request"], refusal["match_id"]) == ("bad_field", "create", None)
    await c.send(type="no such request", variant=1)
    refusal = await c.expect("error")
    assert (refusal["code"], refusal["request"]) == ("unknown_type", None)
    assert not server.arena.rooms
    await c.close()


async def test_an_unreadable_match_is_quarantined_and_the_rest_resume(serve: Serve, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A row corrupted by hand is set aside at start-up (logged, in /health, listed by `kalah quarantine`);
    every other match resumes, and stored-game reads keep working."""
    db = tmp_path / "arena.sqlite3"
    server = await serve(db)
    alice, bob, good = await live_match(server.url, names=("alice", "bob"))
    carol, dave, bad = await live_match(server.url, names=("carol", "dave"))
    for client, mid in ((alice, good), (carol, bad)):
        await client.request("ack", type="move", match_id=mid, ply=0, bin=1)
    for client in (alice, bob, carol, dave):
        await client.close()
    await server.close()
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE actions SET action = 'zz' WHERE match_id = ?", (bad,))
    again = await serve(db)
    assert good in again.arena.rooms and bad not in again.arena.rooms
    health = await asyncio.to_thread(_health, again.url)
    assert health["quarantined"] == 1
    reader = await Client.open(again.url, None)
    await reader.send(type="games", status="live")
    assert [g["match_id"] for g in (await reader.expect("game_list"))["games"]] == [good]
    await reader.close()
    await again.close()
    capsys.readouterr()
    assert main(["quarantine", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert bad in listed and "zz" in listed and good not in listed
    third = await serve(db)  # a quarantined match is never loaded again, and counted
    assert third.arena.quarantined == 1 and good in third.arena.rooms


def _health(url: str) -> dict[str, object]:
    """The `/health` answer of the server at websocket `url`."""
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=5) as response:
        answer: dict[str, object] = json.loads(response.read())
    return answer


async def test_names_are_unique_and_bot_names_reserved(serve: Serve) -> None:
    """A second identity cannot take a name in another case or width, nor any `bot:` name; a token restores."""
    server = await serve()
    alice = await Client.open(server.url, "alice")
    for name in ("Alice", "ALICE", "bot:perfect", "BOT:random"):
        other = await Client.open(server.url, None)
        await other.send(type="hello", name=name)
        assert await other.error() in ("name_taken", "reserved_name"), name
        await other.close()
    back = await Client.open(server.url, "alice", token=alice.welcome["token"])
    assert back.welcome["player_id"] == alice.welcome["player_id"]
    await asyncio.gather(alice.close(), back.close())


async def test_two_hellos_racing_for_one_name_get_one_identity(serve: Serve) -> None:
    """Concurrent hellos under one new name: one welcome, the others `name_taken`."""
    server = await serve()
    clients = [await Client.open(server.url, None) for _ in range(5)]
    for client in clients:
        await client.send(type="hello", name="zoe")
    replies = [await client.next() for client in clients]
    assert sorted(r["type"] if r["type"] == "welcome" else r["code"] for r in replies) == ["name_taken"] * 4 + [
        "welcome"]
    for client in clients:
        await client.close()


async def test_rated_exhibitions_need_the_operator_token(serve: Serve) -> None:
    """A client cannot steer ratings: a rated exhibition without (or with a wrong) operator token is refused."""
    server = await serve()
    c = await Client.open(server.url, "mallory")
    await c.send(type="exhibition", south="greedy", north="random", rated=True)
    assert await c.error() == "not_operator"
    await c.send(type="exhibition", south="greedy", north="random", rated=True, operator_token="guess")
    assert await c.error() == "not_operator"
    unrated = await c.request("snapshot", type="exhibition", south="greedy", north="random")
    assert not server.arena.rooms[unrated["match_id"]].match.rated
    await c.request("snapshot", type="exhibition", south="greedy", north="random", rated=True,
                    operator_token=OPERATOR)
    await c.close()


async def test_exhibitions_racing_for_one_match_id(serve: Serve) -> None:
    """Two exhibitions with the same id at once: one snapshot and one `match_exists`, never `internal_error`."""
    server = await serve()
    a, b = await Client.open(server.url, "a"), await Client.open(server.url, "b")
    for client in (a, b):
        await client.send(type="exhibition", south="greedy", north="random", match_id="same")
    answers = sorted([(await a.next())["type"], (await b.next())["type"]])
    assert answers == ["error", "snapshot"]
    errors = [m for m in a.seen + b.seen if m["type"] == "error"]
    assert [e["code"] for e in errors] == ["match_exists"]
    await asyncio.gather(a.close(), b.close())

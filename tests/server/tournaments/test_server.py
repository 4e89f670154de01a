"""Events on a real server over real sockets: a Swiss of seven with a bye each round, an arena of six hosted
bots, round-robin results, a restart mid-round, a round written before a crash, and the typed refusals."""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from protocol import Position
from protocol.actions import Action
from protocol.event_settings import EventSettings
from server.storage import Op, Storage, open_storage
from server.storage.tournaments import op_entrant, op_pairings, op_tournament, op_tournament_status
from server.tournaments.tournament import EntrantKind, Tournament
from tests.conftest import Serve
from tests.helpers.cluster_play import start_node, stop_nodes
from tests.helpers.wire import Client, FakeClock, FirstLegal, Json, eventually

QUICK = "kalah(1,1,clock=60+1)"
"""One house, one seed: South's only sowing ends the game drawn 1-1, unless a side resigns first."""


Opener = Callable[..., Awaitable[Client]]


@pytest.fixture
async def connect() -> AsyncIterator[Opener]:
    """Open clients (as `Client.open`); every one is closed at the end of the test, even on failure."""
    opened: list[Client] = []

    async def open_client(*args: Any, **kwargs: Any) -> Client:
        client = await Client.open(*args, **kwargs)
        opened.append(client)
        return client

    try:
        yield open_client
    finally:
        for client in opened:
            await client.close()


async def _players(connect: Opener, url: str, names: list[str]) -> dict[str, Client]:
    """A connected client for each name."""
    return {name: await connect(url, name) for name in names}


async def end_game(clients: dict[str, Client], pairing: Json, result: str) -> None:
    """Make a game of the event end with `result` (`1-0`, `0-1` or `1/2-1/2`): the loser resigns, or south's
    only sowing draws it."""
    mid = pairing["match_id"]
    if result == "1-0":
        await clients[pairing["north"]].send(type="resign", match_id=mid)
    elif result == "0-1":
        await clients[pairing["south"]].send(type="resign", match_id=mid)
    else:
        await clients[pairing["south"]].send(type="move", match_id=mid, ply=0, bin=1)


async def _state(watcher: Client, where: Any, timeout: float = 10.0) -> Json:
    """The next `event_state` the watcher gets that satisfies `where`."""
    return await watcher.expect("event_state", timeout, where)


def _round(state: Json, rnd: int) -> list[Json]:
    """The pairings of round `rnd` in an event state."""
    return [p for p in state["pairings"] if p["round"] == rnd]


def _pairs(pairings: list[Json]) -> set[tuple[str, str | None]]:
    """(south, north) of each pairing."""
    return {(p["south"], p["north"]) for p in pairings}


async def test_swiss_of_seven_matches_the_worked_pairings_with_a_bye_each_round(serve: Serve, connect: Opener) -> None:
    """Seven people enter a three-round Swiss; with the results of the worked example
    (tests/server/tournaments/test_swiss.py) the server pairs the same rounds, a bye each round, tells its
    followers each change, and ends with the standings and tiebreaks worked by hand
    (tests/server/tournaments/test_standings.py)."""
    running = await serve()
    names = [f"p{i}" for i in range(1, 8)]
    clients = await _players(connect, running.url, names)
    settings = {"name": "Seven", "kind": "swiss", "rounds": 3, "variant": QUICK, "min_entrants": 7, "max_entrants": 8}
    created = await clients["p1"].request("event_state", type="event_create", settings=settings)
    eid = created["event_id"]
    assert created["status"] == "open" and created["standings"] == []
    for name in names:
        joined = await clients[name].request("event_state", type="event_join", event_id=eid)
    assert joined["status"] == "running" and joined["round"] == 1
    watcher = clients["p1"]
    state = await _state(watcher, lambda m: m["round"] == 1)
    assert _pairs(_round(state, 1)) == {("p1", "p4"), ("p5", "p2"), ("p3", "p6"), ("p7", None)}
    script = {1: {("p1", "p4"): "1-0", ("p5", "p2"): "0-1", ("p3", "p6"): "1-0"},
              2: {("p7", "p1"): "0-1", ("p2", "p3"): "1/2-1/2", ("p4", "p5"): "1-0"},
              3: {("p1", "p2"): "1/2-1/2", ("p3", "p4"): "1-0", ("p6", "p7"): "0-1"}}
    expected = {2: {("p7", "p1"), ("p2", "p3"), ("p4", "p5"), ("p6", None)},
                3: {("p1", "p2"), ("p3", "p4"), ("p6", "p7"), ("p5", None)}}
    for rnd in (1, 2, 3):
        for p in _round(state, rnd):
            if p["north"] is not None:
                await end_game(clients, p, script[rnd][(p["south"], p["north"])])
        if rnd < 3:
            state = await _state(watcher, lambda m, r=rnd: m["round"] == r + 1)
            assert _pairs(_round(state, rnd + 1)) == expected[rnd + 1]
    final = await _state(watcher, lambda m: m["status"] == "finished")
    table = [(r["name"], r["score"], r["buchholz"], r["sonneborn_berger"]) for r in final["standings"]]
    assert table == [("p1", 2.5, 5.0, 4.0), ("p3", 2.5, 4.0, 3.0), ("p2", 2.0, 6.0, 3.5), ("p7", 2.0, 3.5, 1.0),
                     ("p4", 1.0, 6.0, 1.0), ("p6", 1.0, 4.5, 0.0), ("p5", 1.0, 3.0, 0.0)]
    assert final["crosstable"][0]["cells"] == ["5s1", "4n1", "3s="]
    seqs = [m["seq"] for m in watcher.received("event_state")]
    assert seqs == sorted(seqs)
    reader = await connect(running.url, "reader")
    later = await reader.request("event_state", type="event", event_id=eid)
    assert later["status"] == "finished" and len(later["pairings"]) == 12
    listed = await reader.request("event_list", type="events")
    assert [(e["event_id"], e["status"]) for e in listed["events"]] == [(eid, "finished")]
    await reader.send(type="event_join", event_id=eid)
    assert await reader.error() == "event_started"  # an event that has ended takes no one


class SlowFirst(FirstLegal):
    """Stand-in bots `slow:N`: the first legal action after a short think, so an arena's games overlap."""

    @classmethod
    def make(cls, name: str) -> FirstLegal:
        """Any `slow:N`."""
        if not name.startswith("slow:"):
            raise ValueError(f"no bot {name}")
        return cls()

    def decide(self, position: Position, budget_s: float) -> Action:
        """Think 20 ms, then the first legal action."""
        time.sleep(0.02)
        return position.legal_actions()[0]


async def paired(storage: Storage, event_id: str, games: int) -> bool:
    """Whether at least `games` games of the event are paired (stored)."""
    rows = await storage.fetch_rows("SELECT count(*) FROM event_pairings WHERE event_id = ?", event_id)
    return int(rows[0][0]) >= games


async def test_arena_of_six_hosted_bots_pairs_only_finished_players_one_game_at_a_time(
        serve: Serve, connect: Opener) -> None:
    """Six hosted bots in a ten-second arena: it starts at once, each bot's games follow one another (a new game
    only after the last one ended), no bot meets the opponent of its previous game, and the arena ends with
    its last game; the standings count every game once for each side."""
    clock = FakeClock(time.time())
    running = await serve(bot_factory=SlowFirst.make, wall_clock=clock)
    creator = await connect(running.url, "host")
    settings = {"name": "Bots", "kind": "arena", "duration_s": 10, "variant": "kalah(3,2,clock=60+1)"}
    bots = [f"slow:{i}" for i in range(1, 7)]
    created = await creator.request("event_state", type="event_create", settings=settings, bots=bots)
    assert created["status"] == "running"
    eid = created["event_id"]
    await eventually(lambda: paired(running.arena.storage, eid, 12), 30.0, "twelve games paired")
    clock.advance(10)
    assert running.tournaments is not None
    await running.tournaments.check_clocks()
    final = await creator.expect("event_state", 40.0, lambda m: m["status"] == "finished")
    rows = await running.arena.storage.fetch_rows(
        "SELECT south, north, match_id, score FROM event_pairings WHERE event_id = ? ORDER BY rnd, tbl", eid)
    assert len(rows) >= 12 and all(r[3] is not None for r in rows)
    games = {g.match_id: g for g in await running.arena.storage.list_games(200, 0, "finished")}
    spans: dict[str, list[tuple[datetime, datetime, str]]] = {}
    for south, north, match_id, _ in rows:
        g = games[match_id]
        assert g.finished_at is not None
        for me, other in ((south, north), (north, south)):
            spans.setdefault(me, []).append((g.created_at, g.finished_at, other))
    assert sorted(spans) == sorted(f"bot:{b}" for b in bots)
    for played in spans.values():
        played.sort()
        for (_, ended, before), (began, _, after) in itertools.pairwise(played):
            assert began >= ended  # never two games at once
            assert before != after  # no immediate rematch while others are active
    standings = final["standings"]
    assert sum(r["wins"] + r["draws"] + r["losses"] for r in standings) == 2 * len(rows)
    assert sum(r["wins"] for r in standings) == sum(r["losses"] for r in standings)
    assert all(r["points"] >= 2 * r["wins"] + r["draws"] for r in standings)  # a streak only adds


async def test_restart_mid_round_keeps_the_round_once_and_play_goes_on(serve: Serve, connect: Opener) -> None:
    """A Swiss of four is stopped with round 1 under way and started again: the round is stored once, its
    matches come back to their players, and once they end round 2 is paired and played to the end."""
    running = await serve()
    names = ["ann", "ben", "cat", "dan"]
    clients = await _players(connect, running.url, names)
    settings = {"name": "Four", "kind": "swiss", "rounds": 2, "variant": QUICK, "min_entrants": 4}
    eid = (await clients["ann"].request("event_state", type="event_create", settings=settings))["event_id"]
    for name in names:
        state = await clients[name].request("event_state", type="event_join", event_id=eid)
    first = _round(state, 1)
    assert len(first) == 2 and state["status"] == "running"
    tokens = {name: c.welcome["token"] for name, c in clients.items()}
    for c in clients.values():
        await c.close()
    await running.close()

    running = await serve()
    rows = await running.arena.storage.fetch_rows("SELECT rnd, tbl, match_id FROM event_pairings WHERE event_id = ?",
                                                  eid)
    assert sorted(r[2] for r in rows) == sorted(p["match_id"] for p in first)
    clients = {name: await connect(running.url, name, tokens[name]) for name in names}
    for p in first:
        assert p["match_id"] in clients[p["south"]].welcome["seats"]
    watcher = clients["ann"]
    again = await watcher.request("event_state", type="event", event_id=eid, follow=True)
    assert again["status"] == "running" and _round(again, 1) == first
    for p in first:
        await end_game(clients, p, "1-0")
    second = await _state(watcher, lambda m: m["round"] == 2)
    for p in _round(second, 2):
        await end_game(clients, p, "1/2-1/2")
    final = await _state(watcher, lambda m: m["status"] == "finished")
    assert [r["score"] for r in final["standings"]] == [1.5, 1.5, 0.5, 0.5]


async def test_a_round_stored_before_a_crash_gets_its_matches_at_start_up(serve: Serve, connect: Opener,
                                                                          tmp_path: Path) -> None:
    """What a server leaves when it dies between storing a round and creating its matches: the next start
    creates each match under the pairing's id, the hosted bots play them and the event goes on to its end."""
    db = tmp_path / "arena.sqlite3"
    storage = await open_storage(db)
    try:
        ev = Tournament("ecrash", EventSettings.checked(name="Crash", kind="round_robin", variant=QUICK, cycles=1,
                                                   min_entrants=3), "host", time.time())
        await storage.write([op_tournament(ev)])
        for name in ("bot:slow:1", "bot:slow:2", "bot:slow:3"):
            ev.join(name, EntrantKind.BOT)
            await storage.write([op_entrant(ev.event_id, ev.entrants[name])])
        first = ev.start(time.time())
        await storage.write([op_tournament_status(ev), *op_pairings(ev.event_id, first)])
    finally:
        await storage.close()
    running = await serve(db, bot_factory=SlowFirst.make)
    watcher = await connect(running.url, "watcher")
    state = await watcher.request("event_state", type="event", event_id="ecrash", follow=True)
    if state["status"] != "finished":
        state = await _state(watcher, lambda m: m["status"] == "finished")
    assert len([p for p in state["pairings"] if p["north"]]) == 3
    assert all(p["result"] == "1/2-1/2" for p in state["pairings"] if p["north"])
    stored = await running.arena.storage.stored_match("ecrash-r1-t1")
    assert stored is not None and stored.status == "finished"


@pytest.mark.parametrize(("settings", "then", "code"), [
    ({"name": "Full", "kind": "swiss", "rounds": 1, "max_entrants": 2, "min_entrants": 2,
      "start_at": time.time() + 3600},
     ["a", "b", "c"], "event_full"),
    ({"name": "People", "kind": "swiss", "rounds": 1, "entry": "engines"}, ["a"], "not_eligible"),
    ({"name": "Started", "kind": "swiss", "rounds": 1, "min_entrants": 2}, ["a", "b", "c"], "event_started"),
])
async def test_entry_refusals_are_typed_errors(serve: Serve, connect: Opener,
                                               settings: Json, then: list[str], code: str) -> None:
    """A full event, an entry rule that refuses, a started Swiss: each refusal is its typed error code."""
    running = await serve()
    clients = await _players(connect, running.url, ["host", *then])
    eid = (await clients["host"].request("event_state", type="event_create", settings=settings))["event_id"]
    for name in then[:-1]:
        await clients[name].request("event_state", type="event_join", event_id=eid)
    await clients[then[-1]].send(type="event_join", event_id=eid)
    assert await clients[then[-1]].error() == code


async def test_bad_requests_are_refused_with_one_line(serve: Serve, connect: Opener) -> None:
    """An unknown event, settings that do not fit, a bot only its creator may enter: typed one-line errors."""
    running = await serve(bot_factory=FirstLegal.make)
    alice, bob = (await _players(connect, running.url, ["alice", "bob"])).values()
    await alice.send(type="event", event_id="nope")
    assert await alice.error() == "unknown_event"
    await alice.send(type="event_create", settings={"name": "x", "kind": "arena"})
    assert await alice.error() == "bad_field"
    await alice.send(type="event_create", settings={"name": "x", "kind": "arena", "duration_s": 60},
                     bots=["nosuchbot"])
    assert await alice.error() == "unknown_bot"
    arena = {"name": "x", "kind": "arena", "duration_s": 60, "min_entrants": 3}
    eid = (await alice.request("event_state", type="event_create", settings=arena))["event_id"]
    await bob.send(type="event_join", event_id=eid, bot="first")
    assert await bob.error() == "not_eligible"
    for _ in range(2):
        await alice.request("event_state", type="event_create",
                            settings={"name": "y", "kind": "swiss", "rounds": 2, "min_entrants": 3})
    await alice.send(type="event_create", settings={"name": "z", "kind": "swiss", "rounds": 2})
    assert await alice.error() == "too_many"


async def test_start_times_that_never_come_are_refused(serve: Serve, connect: Opener) -> None:
    """`start_at` of 1e300, `Infinity` (a JSON literal or text) is `bad_field`; a finite time more than
    `event_start_ahead_s` ahead is `bad_event` naming the bound; a time within it opens the event."""
    running = await serve(event_start_ahead_s=86400)
    alice = await connect(running.url, "alice")
    swiss = {"name": "Later", "kind": "swiss", "rounds": 2}
    for never in (1e300, float("inf"), "Infinity", 2.0**32 + 1):
        await alice.send(type="event_create", settings={**swiss, "start_at": never})
        assert await alice.error() == "bad_field"
    await alice.send(type="event_create", settings={**swiss, "start_at": time.time() + 2 * 86400})
    refusal = await alice.expect("error")
    assert refusal["code"] == "bad_event" and "more than 1 day ahead" in refusal["message"]
    made = await alice.request("event_state", type="event_create", settings={**swiss, "start_at": time.time() + 3600})
    assert made["status"] == "open"
    listed = await alice.request("event_list", type="events")
    assert [e["event_id"] for e in listed["events"]] == [made["event_id"]]


async def test_kill_9_as_a_round_ends_then_restart_pairs_the_next_round_once(
        tmp_path: Path, connect: Opener) -> None:
    """A server process killed with SIGKILL right as the last games of round 1 end (their ends, the results and
    round 2 may or may not be stored): after a restart round 1 is there once, round 2 is paired exactly once
    (read back, or paired from the stored match ends), and the Swiss plays to its end."""
    db = tmp_path / "arena.sqlite3"
    proc, url = await start_node(str(db), None, "events")
    names = ["ann", "ben", "cat", "dan"]
    try:
        clients = await _players(connect, url, names)
        settings = {"name": "Crash", "kind": "swiss", "rounds": 2, "variant": QUICK, "min_entrants": 4}
        eid = (await clients["ann"].request("event_state", type="event_create", settings=settings))["event_id"]
        for name in names:
            state = await clients[name].request("event_state", type="event_join", event_id=eid)
        first = _round(state, 1)
        for p in first:
            await end_game(clients, p, "1-0")
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    proc, url = await start_node(str(db), None, "events")
    try:
        tokens = {name: c.welcome["token"] for name, c in clients.items()}
        clients = {name: await connect(url, name, tokens[name]) for name in names}
        watcher = clients["ann"]
        state = await watcher.request("event_state", type="event", event_id=eid, follow=True)
        assert [(p["south"], p["north"], p["match_id"]) for p in _round(state, 1)] == \
            [(p["south"], p["north"], p["match_id"]) for p in first]
        for p in _round(state, 1):  # a game whose end was not stored before the kill is played again to its end
            if p["result"] == "*":
                await end_game(clients, p, "1-0")
        if state["round"] < 2:
            state = await _state(watcher, lambda m: m["round"] == 2)
        second = _round(state, 2)
        assert len(second) == 2 and {p["match_id"] for p in second} == {f"{eid}-r2-t1", f"{eid}-r2-t2"}
        for p in second:
            await end_game(clients, p, "1/2-1/2")
        if state["status"] != "finished":
            state = await _state(watcher, lambda m: m["status"] == "finished")
        assert [r["score"] for r in state["standings"]] == [1.5, 1.5, 0.5, 0.5]
        assert len(state["pairings"]) == 4
    finally:
        await stop_nodes([(proc, url)])


async def test_start_times_start_or_cancel_events_and_leaving_is_kept(serve: Serve, connect: Opener) -> None:
    """An event with a start time starts then (hosted bots, an arena) or is cancelled with too few entrants
    (a Swiss); leaving before the start takes an entrant off the list, leaving an arena pauses it."""
    clock = FakeClock(time.time())
    running = await serve(bot_factory=SlowFirst.make, wall_clock=clock)
    assert running.tournaments is not None
    host, ann = (await _players(connect, running.url, ["host", "ann"])).values()
    soon = clock() + 1.0
    swiss = {"name": "Early", "kind": "swiss", "rounds": 2, "min_entrants": 3, "start_at": soon}
    sid = (await host.request("event_state", type="event_create", settings=swiss))["event_id"]
    joined = await ann.request("event_state", type="event_join", event_id=sid)
    assert [r["name"] for r in joined["standings"]] == ["ann"]  # the entrants, all at 0 before the start
    left = await ann.request("event_state", type="event_leave", event_id=sid)
    assert left["status"] == "open" and left["standings"] == []
    again = await ann.request("event_state", type="event_join", event_id=sid)
    assert again["status"] == "open" and [r["name"] for r in again["standings"]] == ["ann"]
    clock.advance(1.0)
    await running.tournaments.check_clocks()
    cancelled = await host.expect("event_state", 10.0, lambda m: m["event_id"] == sid and m["status"] != "open")
    assert cancelled["status"] == "cancelled" and cancelled["pairings"] == []
    arena = {"name": "Timed", "kind": "arena", "duration_s": 30, "variant": "kalah(3,2,clock=60+1)", "start_at": soon}
    await host.send(type="event_create", settings=arena, bots=["slow:1", "slow:2", "slow:3"])
    # the reply by its name: a follower's state of the cancelled Swiss may still come before it
    aid = (await host.expect("event_state", 5.0, lambda m: m["settings"]["name"] == "Timed"))["event_id"]
    started = await host.expect("event_state", 10.0, lambda m: m["event_id"] == aid and m["status"] == "running")
    assert started["pairings"]
    await host.send(type="event_leave", event_id=aid, bot="slow:3")
    paused = await host.expect("event_state", 10.0, lambda m: m["event_id"] == aid and any(
        r["name"] == "bot:slow:3" and not r["active"] for r in m["standings"]))
    assert paused["status"] == "running"


async def test_a_throttled_state_shows_no_change_still_being_stored(serve: Serve, connect: Opener) -> None:
    """A follower's throttled state that comes due while the next change is being stored is the state as it
    was published, without that change; the change comes in its own state once stored (one state per change,
    where a cancelled Swiss used to be sent as cancelled twice)."""
    running = await serve()
    host, ann = (await _players(connect, running.url, ["host", "ann"])).values()
    settings = {"name": "Held", "kind": "swiss", "rounds": 2, "min_entrants": 3}
    eid = (await host.request("event_state", type="event_create", settings=settings))["event_id"]
    await ann.request("event_state", type="event_join", event_id=eid)  # host is sent seq 2 at once
    await ann.request("event_state", type="event_leave", event_id=eid)  # seq 3 waits for the next second
    driver = running.tournaments
    assert driver is not None and eid in driver.followers.push_due

    def stored_with_push_due(e: Tournament) -> list[Op]:
        """The entrant's row; the throttled push comes due now, after the change and before its write."""
        driver.followers.push_due[eid].cancel()
        driver.followers._push(eid)
        return [op_entrant(eid, e.entrants["bob"])]

    async with driver.locks[eid]:
        await driver.apply(eid, lambda e: e.join("bob", EntrantKind.PERSON), stored_with_push_due)
    states = await host.until_received("event_state", 4, lambda m: m["event_id"] == eid)
    assert [(m["seq"], [r["name"] for r in m["standings"]]) for m in states] == [
        (1, []), (2, ["ann"]), (3, []), (4, ["bob"])]

"""Attacks on events (tournaments) from outside, each against a real server: followers, entries, places, reads."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

from protocol.errors import TooManyError
from server.assembly import RunningServer
from server.core.match import EndChange
from server.core.rooms import Room
from server.core.tournament_driver import Waiting
from tests.conftest import Serve
from tests.helpers.cluster_play import start_node, stop_nodes
from tests.helpers.wire import HONEST, OPERATOR, Client, FakeClock, attacker, eventually
from tests.server.storage.test_backup import kalah
from tests.server.tournaments.test_server import SlowFirst

SWISS = {"kind": "swiss", "rounds": 2, "min_entrants": 8}


async def test_a_closed_connection_follows_no_event(serve: Serve) -> None:
    """Connections that follow an event and close are forgotten at once, not at the event's next change: after
    many connect, follow, close rounds from many addresses the event has no follower left."""
    server = await serve()
    host = await Client.open(server.url, "host")
    eid = (await host.request("event_state", type="event_create", settings={"name": "Kept", **SWISS}))["event_id"]
    followers = server.tournaments.followers
    for i in range(40):
        passer = await Client.open(server.url, None, source=attacker(i))
        await passer.request("event_state", type="event", event_id=eid, follow=True)
        await passer.close()
    await eventually(lambda: server.admission.connections == 1, what="the passers to disconnect")
    assert len(followers.of[eid]) == 1  # the host alone
    assert list(followers.followed) == list(followers.of[eid])
    await host.close()
    await eventually(lambda: not followers.of[eid] and not followers.followed, what="the host to be forgotten")


async def test_joining_counts_against_the_follow_cap(serve: Serve) -> None:
    """A connection follows at most 8 events, those it created or joined included: past them a join (or a
    creation) is `too_many` before anything is stored, and unfollowing one makes room."""
    server = await serve()
    hosts = [await Client.open(server.url, f"host{i}", source=attacker(i)) for i in range(3)]
    events = []
    for i in range(9):
        made = await hosts[i % 3].request("event_state", type="event_create",
                                          settings={"name": f"E{i}", **SWISS})
        events.append(made["event_id"])
    joiner = await Client.open(server.url, "joiner", source=attacker(9))
    for eid in events[:4]:
        await joiner.request("event_state", type="event_join", event_id=eid)
    for eid in events[4:8]:
        await joiner.request("event_state", type="event", event_id=eid, follow=True)
    await joiner.send(type="event_join", event_id=events[8])
    assert await joiner.error() == "too_many"
    state = await joiner.request("event_state", type="event", event_id=events[8])
    assert state["standings"] == []  # the refused join stored nothing
    await joiner.request("event_state", type="event", event_id=events[4], follow=False)
    joined = await joiner.request("event_state", type="event_join", event_id=events[8])
    assert [r["name"] for r in joined["standings"]] == ["joiner"]
    for client in (*hosts, joiner):
        await client.close()


async def test_an_engines_entry_check_reads_within_its_read_budget(serve: Serve) -> None:
    """The sanity check of an engine's `event_join` reads its stored games: they are charged to its address's
    read budget like a `games` request, so joins repeated from many addresses of one network are `rate_limited`
    once the network's budget is spent (and a `games` read after them is too)."""
    server = await serve(read_rows_rate=10, read_rows_burst=40,
                         network_read_rows_rate=20)
    host = await Client.open(server.url, "host")
    settings = {"name": "Sane", "kind": "swiss", "rounds": 1, "entry": "engines", "sanity_games": 1}
    eid = (await host.request("event_state", type="event_create", settings=settings))["event_id"]
    engine = await Client.open(server.url, None, source=attacker(0))
    token = (await engine.request("welcome", type="hello", name="bad", engine=True))["token"]
    for _ in range(30):  # 30 finished games against random: 30 rows each time the check reads them
        snap = await engine.request("snapshot", type="create", opponent="random", seat="north")
        await engine.send(type="resign", match_id=snap["match_id"])
        await engine.expect("event", where=lambda m: m.get("kind") == "game_over")
    await engine.close()
    codes = []
    for i in range(1, 6):
        again = await Client.open(server.url, None, source=attacker(i))
        await again.request("welcome", type="hello", name="engine:bad", token=token)
        await again.send(type="event_join", event_id=eid)
        codes.append(await again.error())
        await again.close()
    assert codes[0] == "not_eligible" and "rate_limited" in codes
    reader = await Client.open(server.url, None, source=attacker(9))
    assert (await reader.request("error", type="games", limit=10))["code"] == "rate_limited"
    for client in (host, reader):
        await client.close()


async def test_many_networks_cannot_take_every_event_place(serve: Serve) -> None:
    """Identities of 17 networks create events as fast as they may: each address holds at most 6 places and each
    network 12, so they fill the 200 only with many networks; then an honest organiser still opens one (the
    newest event nobody joined of the most crowded network gives way) and it leads the event list."""
    server = await serve()
    for network in range(1, 18):
        for i in range(6):
            client = await Client.open(server.url, f"filler{network}x{i}", source=attacker(i % 2, network))
            for _ in range(3):
                await client.send(type="event_create", settings={"name": "Spam", **SWISS, "min_entrants": 64,
                                                                 "max_entrants": 64})
                answer = await client.next()
                if answer["type"] == "error":
                    assert answer["code"] == "too_many", answer
                    break
            await client.close()
    live = server.tournaments.tournaments
    held = Counter(e.creator.split("x")[0] for e in live.values())
    assert len(live) == 200 and max(held.values()) == 12  # the last networks made room among the first ones
    organiser = await Client.open(server.url, "organiser", source=HONEST)
    mine = await organiser.request("event_state", type="event_create", settings={"name": "Club night", **SWISS})
    assert mine["status"] == "open"
    assert len(server.tournaments.tournaments) == 200
    listed = await organiser.request("event_list", type="events", status="open", limit=20)
    assert listed["events"][0]["event_id"] == mine["event_id"]
    assert len({e["creator"].split("x")[0] for e in listed["events"][1:18]}) == 17
    await organiser.close()


async def test_an_open_event_nobody_joins_expires(serve: Serve) -> None:
    """An open event without a start time that nobody joined is cancelled an hour after its creation (its
    creator is told), one that someone joined a day after; the places are free again."""
    clock = FakeClock(time.time())
    server = await serve(wall_clock=clock)
    host = await Client.open(server.url, "host")
    guest = await Client.open(server.url, "guest", source=attacker(0))
    idle = (await host.request("event_state", type="event_create", settings={"name": "Idle", **SWISS}))["event_id"]
    busy = (await host.request("event_state", type="event_create", settings={"name": "Busy", **SWISS}))["event_id"]
    await guest.request("event_state", type="event_join", event_id=busy)
    clock.advance(3601)
    await server.tournaments.check_clocks()
    gone = await host.expect("event_state", 5.0, lambda m: m["event_id"] == idle and m["status"] == "cancelled")
    assert gone["standings"] == []
    assert set(server.tournaments.tournaments) == {busy}
    clock.advance(86400 - 3600)
    await server.tournaments.check_clocks()
    await host.expect("event_state", 5.0, lambda m: m["event_id"] == busy and m["status"] == "cancelled")
    assert not server.tournaments.tournaments
    for client in (host, guest):
        await client.close()


async def test_the_creator_cancels_an_open_event_and_no_one_else_does(serve: Serve) -> None:
    """`event_cancel` by its creator cancels an open event and frees its place; anyone else is `not_eligible`;
    an unknown event is `unknown_event`."""
    server = await serve()
    host = await Client.open(server.url, "host")
    other = await Client.open(server.url, "other", source=attacker(0))
    eid = (await host.request("event_state", type="event_create", settings={"name": "Mine", **SWISS}))["event_id"]
    await other.send(type="event_cancel", event_id=eid)
    assert await other.error() == "not_eligible"
    await other.send(type="event_cancel", event_id="nosuchevent")
    assert await other.error() == "unknown_event"
    cancelled = await host.request("event_state", type="event_cancel", event_id=eid)
    assert cancelled["status"] == "cancelled" and not server.tournaments.tournaments
    for client in (host, other):
        await client.close()


async def test_kalah_admin_cancels_and_hides_events(tmp_path: Path) -> None:
    """`kalah admin cancel_event` cancels any open event; `hide_event` cancels one and leaves it out of every list
    (`event` does not find it) until `show_event`; each act is audited; a missing target is one line."""
    secret = tmp_path / "operator-token"
    secret.write_text(OPERATOR + "\n")
    proc, url = await start_node(str(tmp_path / "arena.sqlite3"), None, "events", "--operator-token-file", str(secret))
    try:
        host = await Client.open(url, "host", source=attacker(0))
        first, second = [(await host.request("event_state", type="event_create",
                                             settings={"name": name, **SWISS}))["event_id"] for name in ("A", "B")]
        token = ["--server", url, "--operator-token-file", str(secret)]
        status, out = await kalah("admin", "cancel_event", first, "--reason", "spam", *token)
        assert status == 0 and f"cancelled event {first}" in out, out
        status, out = await kalah("admin", "hide_event", second, "--reason", "abusive name", *token)
        assert status == 0 and "hidden" in out, out
        listed = await host.request("event_list", type="events")
        assert [e["event_id"] for e in listed["events"]] == [first]
        await host.send(type="event", event_id=second)
        assert await host.error() == "unknown_event"
        status, out = await kalah("admin", "audit", *token)
        assert status == 0 and "cancel_event" in out and "hide_event" in out and "abusive name" in out
        status, out = await kalah("admin", "show_event", second, "--reason", "renamed", *token)
        assert status == 0, out
        listed = await host.request("event_list", type="events")
        assert {e["event_id"]: e["status"] for e in listed["events"]} == {first: "cancelled", second: "cancelled"}
        status, out = await kalah("admin", "hide_event", *token)
        assert status != 0 and "event" in out and out.count("\n") == 1
        await host.close()
    finally:
        await stop_nodes([(proc, url)])


def bot_games(server: RunningServer) -> Counter[str]:
    """Live games between two hosted bots, by the event whose game each is."""
    return Counter(room.match.match_id.rsplit("-r", 1)[0] for room in server.arena.rooms.values()
                   if room.match.status == "live" and all(s is not None and s.bot for s in room.match.seats))


async def test_event_bot_games_count_as_exhibitions(serve: Serve) -> None:
    """Arenas of 16 hosted bots each, made by identities of three networks, play at most the exhibitions' caps of
    bot games at once (4 for a creator, 6 in all here): the games past them wait for a place and are played when
    one is free, first deferred first (the games paired later wait behind them), each taking the place a game's
    end frees at that moment, so a client's own exhibition past the cap in all is `too_many`."""
    server = await serve(bot_factory=SlowFirst.make, exhibitions_in_all=6)
    driver, quotas = server.tournaments, server.arena.quotas
    left_free: list[int] = []

    def place_left_free(room: Room, end: EndChange) -> None:
        """After the driver's hook: a place the end freed is taken at once by a deferred game that can use it."""
        def takes(waiting: Waiting) -> bool:
            try:
                quotas.check_exhibition(waiting.holder, waiting.address)
            except TooManyError:
                return False
            return True
        if any(m not in driver.reserved and takes(w) for m, w in driver.deferred.items()):
            left_free.append(room.match.ply)

    server.arena.match_end_hooks.append(place_left_free)
    bots = [f"slow:{n}" for n in range(1, 17)]
    arena = {"kind": "arena", "duration_s": 600, "variant": "kalah(3,2,clock=60+1)"}
    hosts = [await Client.open(server.url, f"host{n}", source=attacker(0, n)) for n in (1, 2, 3)]
    events = [(await host.request("event_state", type="event_create", settings={"name": f"Bots{i}", **arena},
                                  bots=bots))["event_id"] for i, host in enumerate(hosts)]
    most: Counter[str] = Counter()
    deadline = asyncio.get_running_loop().time() + 3.0
    while asyncio.get_running_loop().time() < deadline:
        now = bot_games(server)
        assert sum(now.values()) <= 6 and max(now.values(), default=0) <= 4, now
        most |= now
        await asyncio.sleep(0.01)
    assert set(most) == set(events)
    finished = sum(p.finished for eid in events for p in server.tournaments.tournaments[eid].pairings)
    assert finished > 6  # waiting games were started as places came free
    first_wave = [p for eid in events for p in server.tournaments.tournaments[eid].pairings if p.round == 1]
    started = [p for p in first_wave if p.finished or p.match_id in server.arena.rooms]
    assert len(first_wave) == 24 and len(started) == 24  # in turn: none starved by the games paired after them
    assert left_free == []  # no moment when a client's own exhibition could take a place owed to a waiting game
    await hosts[0].send(type="exhibition", south="slow:1", north="slow:2")
    assert await hosts[0].error() == "too_many"
    for host in hosts:
        await host.close()


async def test_after_a_restart_an_organiser_still_gets_a_place(serve: Serve) -> None:
    """Events that fill every place before a restart are read back with no known network: each creator's then
    counts as one when the places are contested, so an organiser holding none still opens an event (the newest
    idle event of a creator holding the most gives way), and a filler coming back takes no place of the
    organiser's."""
    caps: dict[str, Any] = {"events_in_all": 6, "events_per_network": 6}
    server = await serve(**caps)
    fillers = [await Client.open(server.url, f"filler{i}", source=attacker(i)) for i in range(2)]
    for filler in fillers:
        for n in range(3):
            await filler.request("event_state", type="event_create", settings={"name": f"Far{n}", **SWISS})
        await filler.close()
    await server.close()
    server = await serve(**caps)
    assert len(server.tournaments.tournaments) == 6
    organiser = await Client.open(server.url, "organiser", source=HONEST)
    mine = await organiser.request("event_state", type="event_create", settings={"name": "Club night", **SWISS})
    assert mine["status"] == "open" and len(server.tournaments.tournaments) == 6
    back = await Client.open(server.url, "filler0", token=fillers[0].welcome["token"], source=attacker(0))
    for n in range(3):
        await back.send(type="event_create", settings={"name": f"More{n}", **SWISS})
        await back.next()
    assert mine["event_id"] in server.tournaments.tournaments and len(server.tournaments.tournaments) == 6
    for client in (organiser, back):
        await client.close()

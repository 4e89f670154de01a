"""Attacks on events (tournaments) from outside, each against a real server: followers, entries, places, reads."""

from __future__ import annotations

from tests.conftest import Serve
from tests.helpers.wire import Client, attacker, eventually

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

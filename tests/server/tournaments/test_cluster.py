"""Events on real PostgreSQL (and Redis, in a cluster): the node pairing a Swiss killed with SIGKILL mid-round
(the survivor takes the event over, the round finishes, the next one is paired once), two nodes pairing the
same round at once (one round is stored), a result whose write fails (written again), and a change meeting an end
the node had not heard of."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import cast

from server.assembly import RunningServer
from server.cluster.tournaments import ClusterTournaments
from server.core.tournament_driver import TournamentDriver
from tests.conftest import Serve
from tests.helpers.cluster_play import start_nodes, stop_nodes
from tests.helpers.pg import query
from tests.helpers.wire import Client, Json
from tests.server.faults.test_clock import health
from tests.server.tournaments.test_server import end_game

QUICK = "kalah(1,1,clock=60+1)"
"""One house, one seed: a game lasts until a side resigns (or South's one sowing draws it)."""
NAMES = ["ann", "ben", "cat", "dan"]
SWISS = {"name": "Nodes", "kind": "swiss", "rounds": 2, "variant": QUICK, "min_entrants": 4}


def _round(state: Json, rnd: int) -> list[Json]:
    """The pairings of round `rnd` in an event state."""
    return [p for p in state["pairings"] if p["round"] == rnd]


def _of(match_id: str) -> Callable[[Json], bool]:
    """Whether a message is about `match_id`."""
    return lambda m: m.get("match_id") == match_id


def _result(state: Json, match_id: str) -> str:
    """The result shown for one game of an event state."""
    return str(next(p["result"] for p in state["pairings"] if p["match_id"] == match_id))



async def _stored_pairings(pg_url: str, eid: str) -> list[tuple[int, int, str, str | None, str, float | None]]:
    """Every stored pairing of an event, in round and table order."""
    rows = await query(pg_url, "SELECT rnd, tbl, south, north, match_id, score FROM event_pairings"
                               " WHERE event_id = $1 ORDER BY rnd, tbl", eid)
    return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]


async def test_the_pairing_node_killed_mid_round_is_taken_over_and_the_next_round_paired_once(
        pg_url: str, bus_url: str) -> None:
    """A Swiss created on node A (which pairs it) is entered by four players on node B, each shown its game there;
    A is killed with SIGKILL after one game of round 1 is recorded and while the other is under way. B takes the
    event over: the game ends there and is recorded, round 2 is paired exactly once, a follower on B gets every
    change, and the event finishes with the right standings; every game is stored finished, no pairing is stored
    twice, and B's `/health` counts the event it took over."""
    procs = await start_nodes(pg_url, bus_url, ["evA", "evB"])
    (owner, owner_url), (_, survivor_url) = procs
    clients: list[Client] = []
    try:
        host = await Client.open(owner_url, "host")
        clients.append(host)
        players = {name: await Client.open(survivor_url, name) for name in NAMES}
        watcher = await Client.open(survivor_url, "watcher")
        clients += [*players.values(), watcher]
        eid = (await host.request("event_state", type="event_create", settings=SWISS))["event_id"]
        await watcher.request("event_state", type="event", event_id=eid, follow=True)
        for name in NAMES:
            await players[name].request("event_state", type="event_join", event_id=eid)
        state = await watcher.expect("event_state", 10, lambda m: m["round"] == 1)
        first = _round(state, 1)
        assert len(first) == 2 and all(p["result"] == "*" for p in first)
        for p in first:  # A paired them: B shows each player on B its game
            for name in (p["south"], p["north"]):
                await players[name].expect("snapshot", 10, _of(p["match_id"]))
        await end_game(players, first[0], "1-0")
        await watcher.expect("event_state", 10, lambda m: _result(m, first[0]["match_id"]) == "1-0")
        os.kill(owner.pid, signal.SIGKILL)
        await owner.wait()
        await end_game(players, first[1], "0-1")
        state = await watcher.expect("event_state", 30, lambda m: m["round"] == 2)
        assert [_result(state, p["match_id"]) for p in first] == ["1-0", "0-1"]
        second = _round(state, 2)
        assert {p["match_id"] for p in second} == {f"{eid}-r2-t1", f"{eid}-r2-t2"}
        for p in second:
            await end_game(players, p, "1/2-1/2")
        final = await watcher.expect("event_state", 10, lambda m: m["status"] == "finished")
        seen = health(survivor_url)["cluster"]  # what the operator sees: one event taken over, none left to run
        assert (seen["events_taken_over"], seen["events_owned"], seen["nodes"]) == (1, 0, ["evB"])
    finally:
        for client in clients:
            await client.close()
        await stop_nodes(procs)
    assert sorted(r["score"] for r in final["standings"]) == [0.5, 0.5, 1.5, 1.5]
    rounds = [state["round"] for state in watcher.received("event_state")]
    assert rounds == sorted(rounds) and rounds[-1] == 2
    stored = await _stored_pairings(pg_url, eid)
    assert [(r[0], r[1]) for r in stored] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert all(r[5] is not None for r in stored)
    ids = [r[4] for r in stored]
    statuses = {r[0]: r[1] for r in await query(pg_url, "SELECT id, status FROM matches WHERE id = ANY($1)", ids)}
    assert statuses == {mid: "finished" for mid in ids}
    assert await query(pg_url, "SELECT event_id FROM event_owners") == []


def _driver(node: RunningServer) -> TournamentDriver:
    """A node's event driver."""
    assert node.tournaments is not None
    return node.tournaments


async def test_two_nodes_pairing_the_same_round_at_once_store_it_once(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Node B is made to believe it owns node A's Swiss too (as a node does between losing its lease and noticing):
    when the last game of round 1 ends both record it and pair round 2 at once from the same stored version. One
    round 2 is stored, with its matches created once, and both nodes hold the same event."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    players = {name: await Client.open((a if i % 2 else b).url, name) for i, name in enumerate(NAMES)}
    try:
        eid = (await players["ann"].request("event_state", type="event_create", settings=SWISS))["event_id"]
        for name in NAMES:
            state = await players[name].request("event_state", type="event_join", event_id=eid)
        watcher = players["ann"]
        state = await watcher.expect("event_state", 10, lambda m: m["round"] == 1)
        first = _round(state, 1)
        await end_game(players, first[0], "1-0")
        await watcher.expect("event_state", 10, lambda m: _result(m, first[0]["match_id"]) == "1-0")
        cast(ClusterTournaments, _driver(b).owners).owned.add(eid)
        await end_game(players, first[1], "1-0")
        state = await watcher.expect("event_state", 10, lambda m: m["round"] == 2)
        second = _round(state, 2)
        for p in second:
            await end_game(players, p, "1-0")
        await watcher.expect("event_state", 10, lambda m: m["status"] == "finished")
    finally:
        for client in players.values():
            await client.close()
    stored = await _stored_pairings(pg_url, eid)
    assert [(r[0], r[1]) for r in stored] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [r[4] for r in stored[2:]] == [p["match_id"] for p in second]
    made = await query(pg_url, "SELECT id FROM matches WHERE id LIKE $1 ORDER BY id", f"{eid}-r2-%")
    assert [r[0] for r in made] == [p["match_id"] for p in second]
    events = await query(pg_url, "SELECT status, version FROM events WHERE id = $1", eid)
    assert events[0][0] == "finished"


FAIL_TWICE = [
    "CREATE SEQUENCE result_writes",
    "CREATE FUNCTION fail_twice() RETURNS trigger AS $$ BEGIN IF nextval('result_writes') <= 2 THEN"
    " RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
    "CREATE TRIGGER fail_results BEFORE UPDATE ON event_pairings FOR EACH ROW EXECUTE FUNCTION fail_twice()",
]
"""A trigger that fails the first two writes of a game's result (the batch, then the write alone)."""


async def test_a_result_whose_write_fails_is_recorded_at_the_next_try(serve: Serve, pg_url: str) -> None:
    """PostgreSQL refuses the write of an event game's result (a trigger fails it, as a database outage would):
    the game's end is stored, and the result is written again a second later, so the event still finishes."""
    node = await serve(pg_url)
    players = {name: await Client.open(node.url, name) for name in NAMES[:2]}
    try:
        settings = SWISS | {"rounds": 1, "min_entrants": 2}
        eid = (await players["ann"].request("event_state", type="event_create", settings=settings))["event_id"]
        for name in players:
            await players[name].request("event_state", type="event_join", event_id=eid)
        state = await players["ann"].expect("event_state", 10, lambda m: m["round"] == 1)
        for statement in FAIL_TWICE:
            await query(pg_url, statement)
        await end_game(players, _round(state, 1)[0], "1-0")
        final = await players["ann"].expect("event_state", 10, lambda m: m["status"] == "finished")
    finally:
        for client in players.values():
            await client.close()
    assert [p["result"] for p in final["pairings"]] == ["1-0"]
    assert (await query(pg_url, "SELECT last_value FROM result_writes"))[0][0] == 3


async def test_a_join_on_a_node_not_owning_the_event_enters_it(serve: Serve, pg_url: str, bus_url: str) -> None:
    """Players on node A join an open Swiss and a running arena that node B created and runs: each join is
    entered (no `event_started`), and B, the owner, holds the arena's newcomer."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    on_b = {name: await Client.open(b.url, name) for name in ("ann", "ben")}
    on_a = {name: await Client.open(a.url, name) for name in ("cat", "dan")}
    try:
        sid = (await on_b["ann"].request("event_state", type="event_create", settings=SWISS))["event_id"]
        joined = await on_a["dan"].request("event_state", type="event_join", event_id=sid)
        assert joined["status"] == "open" and [r["name"] for r in joined["standings"]] == ["dan"]
        arena = {"name": "Far", "kind": "arena", "duration_s": 30, "min_entrants": 2, "variant": QUICK}
        aid = (await on_b["ben"].request("event_state", type="event_create", settings=arena))["event_id"]
        await on_b["ben"].request("event_state", type="event_join", event_id=aid)
        await on_b["ann"].send(type="event_join", event_id=aid)  # ann follows the Swiss too: its state may come first
        # the second entrant starts the arena; if B was fenced meanwhile (a beat late on a loaded machine), the join
        # is answered open and B starts the arena once its next beat reaches the database (`adopt`)
        running = await on_b["ann"].expect("event_state", 10, lambda m: m["event_id"] == aid and m["status"] != "open")
        assert running["status"] == "running" and {r["name"] for r in running["standings"]} == {"ann", "ben"}
        late = await on_a["cat"].request("event_state", type="event_join", event_id=aid)
        assert late["status"] == "running" and "cat" in {r["name"] for r in late["standings"]}
        seen = await on_b["ann"].expect("event_state", 5, lambda m: m["event_id"] == aid and len(m["standings"]) == 3)
        assert "cat" in {r["name"] for r in seen["standings"]}  # B's followers see the entrant A stored
        assert "cat" in _driver(b).tournaments[aid].entrants
        assert _driver(b).owners.owns(aid) and not _driver(a).owners.owns(aid)
    finally:
        for client in [*on_b.values(), *on_a.values()]:
            await client.close()


async def test_a_change_on_a_node_whose_copy_missed_the_end_ends_the_event_there(
        serve: Serve, pg_url: str, bus_url: str) -> None:
    """Node B's open Swiss is cancelled in the database before node A has heard of it (the owner's notice still on
    its way): a join on A meets the stored change, is refused `event_started`, and A's follower is told the event
    was cancelled (A used to drop its copy silently, so its followers never heard the end)."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    owner = await Client.open(b.url, "ann")
    follower, joiner = await Client.open(a.url, "cat"), await Client.open(a.url, "dan")
    try:
        eid = (await owner.request("event_state", type="event_create", settings=SWISS))["event_id"]
        await follower.request("event_state", type="event", event_id=eid, follow=True)
        version = (await query(pg_url, "SELECT version FROM events WHERE id = $1", eid))[0][0]
        assert _driver(a).tournaments[eid].version == version
        await query(pg_url, "INSERT INTO guards (key) VALUES ($1)", f"e:{eid}:{version}")  # the owner stores a change
        await query(pg_url, "UPDATE events SET status = 'cancelled', version = $2 WHERE id = $1", eid, version + 1)
        await joiner.send(type="event_join", event_id=eid)
        assert await joiner.error() == "event_started"
        told = await follower.expect("event_state", 5, lambda m: m["event_id"] == eid)
        assert told["status"] == "cancelled"
        assert eid not in _driver(a).tournaments
    finally:
        for client in (owner, follower, joiner):
            await client.close()

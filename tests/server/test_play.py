"""Whole matches over real sockets: spectators, pie swap, clocks, reconnection, resends, bots, lobby.

The `server` fixture runs on a fake clock: clock and grace-period tests move it on instead of waiting.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from protocol import Action, Game, Sow, Swap, Variant, parse_action
from server.assembly import RunningServer
from server.edge.session import Session
from server.storage import fetch_game, list_games
from tests.conftest import Serve
from tests.helpers.wire import (
    Client,
    FakeClock,
    FirstLegal,
    Json,
    action_msg,
    assert_continuous,
    eventually,
    is_game_over,
    live_match,
)

GRACE_S = 1.0


@pytest.fixture
async def server(serve: Serve, clock: FakeClock) -> RunningServer:
    """A server with a fresh database on the test's fake clock, a short grace period and the `first` bot."""
    return await serve(grace_s=GRACE_S, bot_factory=FirstLegal.make, clock=clock)


def at_ply(ply: int, kind: str = "action") -> Callable[[Json], bool]:
    """A filter for the ack or action event of `ply`."""
    return lambda m: m.get("ply") == ply and (kind == "ack" or m.get("kind") == kind)


async def play_out(south: Client, north: Client, match_id: str, variant: str, rng: random.Random,
                   script: list[Action] | None = None, watcher: Client | None = None, already: int = 0) -> Game:
    """Play random legal actions (after `script`, whose first `already` were sent before) to the end."""
    game = Game(Variant.parse(variant))
    seat = {"south": south, "north": north}
    todo = list(script or [])
    while not game.over:
        pos = game.position
        mover = seat[pos.to_move.name.lower()]
        action = todo.pop(0) if todo else rng.choice(pos.legal_actions())
        ply = game.ply
        await mover.send(**action_msg(action, match_id, ply))
        ack = await mover.expect("ack", where=at_ply(ply, "ack"))
        assert ack["duplicate"] == (ply < already)
        game.play(action)
        for client in {south, north} | ({watcher} if watcher else set()):
            if ply < already:
                event = next(e for e in client.events(match_id) if e["kind"] == "action" and e["ply"] == ply)
            else:
                event = await client.expect("event", where=at_ply(ply))
            assert event["seq"] == ack["seq"] and event["position"] == game.position.fen()
        if isinstance(action, Swap):
            seat = {"south": north, "north": south}
    return game


async def test_two_clients_play_whole_match_while_spectator_sees_every_event(server: RunningServer,
                                                                            tmp_path: Path) -> None:
    """A whole match between two clients; the spectator gets every event in order; it is stored."""
    variant = "kalah(4,3)"
    alice, bob, mid = await live_match(server.url, variant)
    watcher = await Client.open(server.url, "watcher")
    await watcher.send(type="watch", match_id=mid)
    snap = await watcher.expect("snapshot")
    assert snap["status"] == "live" and snap["you"] is None and snap["spectators"] == 1
    presence = await alice.expect("presence", where=lambda m: m["spectators"] == 1)
    assert presence["south_connected"] and presence["north_connected"]
    game = await play_out(alice, bob, mid, variant, random.Random(7), watcher=watcher)
    for client in (alice, bob, watcher):
        over = await client.expect("event", where=is_game_over)
        assert over["result"] == game.result and over["reason"] == game.position.end
    seqs = [e["seq"] for e in watcher.events(mid)]
    assert seqs == list(range(snap["seq"] + 1, snap["seq"] + 1 + len(seqs)))
    assert [e["action"] for e in watcher.events(mid) if e["kind"] == "action"] == game.record().split()
    stored = fetch_game(tmp_path / "arena.sqlite3", mid)
    assert stored is not None and stored.record == game.record() and stored.result == game.result
    assert (stored.south, stored.north, stored.status) == ("alice", "bob", "finished")
    assert [g.match_id for g in list_games(tmp_path / "arena.sqlite3")] == [mid]


async def test_pie_swap_exchanges_the_players_sides(server: RunningServer) -> None:
    """North swaps: the seats exchange sides, the opener moves next as North, play goes on."""
    variant = "kalah(4,3,pie=on)"
    alice, bob, mid = await live_match(server.url, variant)
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    await bob.send(type="swap", match_id=mid, ply=1)
    await bob.expect("ack")
    await bob.send(type="sync", match_id=mid)
    snap = await bob.expect("snapshot")
    assert (snap["south"], snap["north"], snap["you"]) == ("bob", "alice", "south")
    await bob.send(type="move", match_id=mid, ply=2, bin=2)
    assert await bob.error() == "out_of_turn"
    game = await play_out(alice, bob, mid, variant, random.Random(3), script=[Sow(1), Swap()], already=2)
    assert "swap" in game.record()
    over = await alice.expect("event", where=is_game_over)
    if game.result:
        names = {"south": "bob", "north": "alice"}
        assert over["player"] == names[over["winner"]]


async def test_clock_running_out_loses(server: RunningServer, clock: FakeClock) -> None:
    """A player who lets the per-move clock run out loses on time; both players are told."""
    alice, bob, mid = await live_match(server.url, "kalah(6,4,clock=1/move)")
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    await alice.expect("ack")
    clock.advance(0.5)
    await server.arena.check_clocks()
    snap = await bob.request("snapshot", type="sync", match_id=mid)
    assert snap["status"] == "live" and snap["clocks"]["running"] == "north"
    assert (snap["clocks"]["south_ms"], snap["clocks"]["north_ms"]) == (1000, 500)
    clock.advance(0.5)
    await server.arena.check_clocks()
    for client in (alice, bob):
        over = await client.expect("event", where=is_game_over)
        assert (over["reason"], over["winner"], over["player"]) == ("time", "south", "alice")
        assert over["clocks"]["north_ms"] == 0
    await bob.send(type="move", match_id=mid, ply=1, bin=9)
    assert await bob.error() == "game_over"


async def test_server_flags_a_clock_by_itself(arena: RunningServer) -> None:
    """On the real clock, with nobody asking, the server ends a match whose running clock runs out."""
    alice, bob, _ = await live_match(arena.url, "kalah(6,4,clock=0.05/move)")
    for client in (alice, bob):
        over = await client.expect("event", where=is_game_over)
        assert (over["reason"], over["winner"], over["player"]) == ("time", "north", "bob")


async def test_reconnect_with_sequence_number(server: RunningServer) -> None:
    """A player who drops and returns with its token gets its seat and exactly the missed events."""
    alice, bob, mid = await live_match(server.url)
    token = bob.welcome["token"]
    await bob.close()
    await alice.expect("presence", where=lambda m: not m["north_connected"])
    await alice.send(type="move", match_id=mid, ply=0, bin=1)
    ack = await alice.expect("ack")
    bob = await Client.open(server.url, "bob", token=token)
    assert bob.welcome["seats"] == [mid]
    await alice.expect("presence", where=lambda m: m["north_connected"])
    caught = await bob.request("catch_up", type="sync", match_id=mid, since=ack["seq"] - 1)
    assert caught["seq"] == ack["seq"]
    assert [(e["seq"], e["kind"], e["action"]) for e in caught["events"]] == [(ack["seq"], "action", "1")]
    caught = await bob.request("catch_up", type="sync", match_id=mid, since=ack["seq"])
    assert (caught["seq"], caught["events"]) == (ack["seq"], [])
    await bob.send(type="sync", match_id=mid, since=999)
    snap = await bob.expect("snapshot")
    assert snap["record"] == ["1"] and snap["you"] == "north" and snap["seq"] == ack["seq"]
    await bob.send(type="move", match_id=mid, ply=1, bin=9)
    assert (await bob.expect("ack"))["ply"] == 1


async def test_joiner_gets_its_snapshot_first_and_a_watcher_an_answer(server: RunningServer) -> None:
    """The player who joins gets its snapshot (which holds its join) as its first message of the match, while
    the creator gets the `joined` event; a watch with nothing new since is answered by an empty catch-up."""
    alice = await Client.open(server.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(6,4,clock=60+0)", seat="south"))["match_id"]
    bob = await Client.open(server.url, "bob")
    await bob.send(type="join", match_id=mid)
    snap = await bob.expect("snapshot")
    assert [m["type"] for m in bob.seen if m.get("match_id") == mid] == ["snapshot"]
    joined = await alice.expect("event")
    assert (joined["kind"], joined["side"], joined["player"]) == ("joined", "north", "bob")
    assert joined["clocks"] == {"south_ms": 60_000, "north_ms": 60_000, "running": "south"}
    assert (snap["seq"], snap["you"], snap["status"]) == (joined["seq"], "north", "live")
    carol = await Client.open(server.url, "carol")
    caught = await carol.request("catch_up", type="watch", match_id=mid, since=joined["seq"])
    assert (caught["seq"], caught["events"]) == (joined["seq"], [])


async def test_players_and_a_spectator_see_every_event_once_in_order_from_their_first_message(
        server: RunningServer) -> None:
    """Creator, joiner and a spectator who watched while the match was open: from each one's first message of
    the match (a snapshot or a catch-up), every event numbers one more than the last, to the game's end."""
    alice = await Client.open(server.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south"))["match_id"]
    carol = await Client.open(server.url, "carol")
    await carol.request("snapshot", type="watch", match_id=mid)
    bob = await Client.open(server.url, "bob")
    await bob.request("snapshot", type="join", match_id=mid)
    await play_out(alice, bob, mid, "kalah(4,3)", random.Random(3), watcher=carol)
    ends = [await client.expect("event", where=is_game_over) for client in (alice, bob, carol)]
    for client, end in zip((alice, bob, carol), ends, strict=True):
        assert assert_continuous(client, mid)[-1] == end["seq"] == ends[0]["seq"]
    assert assert_continuous(bob, mid)[0] == 3  # its join (seq 2) is in its snapshot, its first message


async def test_resent_action_is_acknowledged_not_replayed(server: RunningServer) -> None:
    """The same action at the same ply twice: acknowledged twice, applied once."""
    alice, bob, mid = await live_match(server.url)
    for _ in range(2):
        await alice.send(type="move", match_id=mid, ply=0, bin=1)
    first = await alice.expect("ack")
    second = await alice.expect("ack")
    assert (first["seq"], first["duplicate"]) == (second["seq"], False) and second["duplicate"]
    await bob.send(type="move", match_id=mid, ply=1, bin=9)
    await bob.expect("event", where=lambda m: m["kind"] == "action" and m["ply"] == 1)
    assert [e["ply"] for e in bob.events(mid) if e["kind"] == "action"] == [0, 1]


async def test_a_resignation_before_the_first_move_is_unrated(server: RunningServer) -> None:
    """Resigning at ply 0 ends the game as a resignation (its winner named, as on the wire before) but moves no
    rating and stores the match unrated, as lichess aborts such a game; after one move a resignation is rated."""
    alice, bob, mid = await live_match(server.url)
    await bob.send(type="resign", match_id=mid)
    over = await alice.expect("event", where=is_game_over)
    assert (over["reason"], over["winner"]) == ("resign", "south")
    carol, dave, rated = await live_match(server.url, names=("carol", "dave"))
    await carol.request("ack", type="move", match_id=rated, ply=0, bin=1)
    await dave.send(type="resign", match_id=rated)
    assert (await carol.expect("event", where=is_game_over))["reason"] == "resign"
    await eventually(lambda: server.arena.rooms[rated].match.status == "finished")
    assert not server.arena.rooms[mid].match.rated
    games = {g.match_id: g for g in await server.arena.storage.list_games(10)}
    assert games[mid].winner == "alice"
    ratings = await server.arena.storage.fetch_rows("SELECT player_id FROM ratings")
    assert len(ratings) == 2  # carol's and dave's only
    rows = await server.arena.storage.fetch_rows("SELECT id, rated FROM matches")
    assert dict((r[0], bool(r[1])) for r in rows) == {mid: False, rated: True}
    for client in (alice, bob, carol, dave):
        await client.close()


async def test_claim_after_grace_period_and_resign(server: RunningServer, clock: FakeClock) -> None:
    """A claim is refused within the grace period, then wins by abandonment (also against a creator
    who left before the match began); resigning loses."""
    alice, bob, mid = await live_match(server.url)
    await alice.send(type="claim", match_id=mid)
    assert await alice.error() == "claim_refused"  # bob is connected
    await bob.close()
    await alice.expect("presence", where=lambda m: not m["north_connected"])
    clock.advance(GRACE_S / 2)
    await alice.send(type="claim", match_id=mid)
    assert await alice.error() == "claim_refused"  # bob may still come back
    clock.advance(GRACE_S / 2)
    await alice.send(type="claim", match_id=mid)
    over = await alice.expect("event", where=is_game_over)
    assert (over["reason"], over["winner"]) == ("abandonment", "south")
    carol = await Client.open(server.url, "carol")
    absent = (await carol.request("snapshot", type="create", variant="kalah(3,3)"))["match_id"]
    await carol.close()
    dave = await Client.open(server.url, "dave")
    await dave.request("snapshot", type="join", match_id=absent)
    await dave.expect("presence", where=lambda m: not (m["south_connected"] and m["north_connected"]))
    await dave.send(type="claim", match_id=absent)
    assert await dave.error() == "claim_refused"
    clock.advance(GRACE_S)
    await dave.send(type="claim", match_id=absent)
    assert (await dave.expect("event", where=is_game_over))["reason"] == "abandonment"
    erin, frank, mid2 = await live_match(server.url, names=("erin", "frank"))
    await frank.send(type="resign", match_id=mid2)
    over = await erin.expect("event", where=is_game_over)
    assert (over["reason"], over["winner"], over["player"]) == ("resign", "south", "erin")


async def test_hosted_bot_plays_its_turns(server: RunningServer) -> None:
    """A match against a hosted bot: the bot answers every turn until the game ends."""
    alice = await Client.open(server.url, "alice")
    await alice.send(type="create", variant="kalah(3,2)", seat="south", opponent="first")
    snap = await alice.expect("snapshot")
    assert snap["status"] == "live" and snap["north"] == "bot:first"
    mid, rng = snap["match_id"], random.Random(1)
    game = Game(Variant.parse("kalah(3,2)"))
    while not game.over:
        if game.position.to_move.name == "SOUTH":
            ply = game.ply
            await alice.send(**action_msg(rng.choice(game.position.legal_actions()), mid, ply))
        event = await alice.expect("event", where=lambda m: m["kind"] == "action" and m["ply"] == game.ply)
        game.play(parse_action(event["action"]))
        assert event["position"] == game.position.fen()
    await alice.expect("event", where=is_game_over)


async def listed_only_live(client: Client) -> bool:
    """Whether the listing `client` gets now shows only the live kalah(5,3) match."""
    listing = (await client.request("matches", type="list"))["matches"]
    return [m["variant"] for m in listing] == ["kalah(5,3)"]


async def test_the_listing_shows_who_seeks_what(server: RunningServer) -> None:
    """A seek waiting shows in everyone's listing (name and variant) until it is paired or its connection closes
    (before: a seeker waited with no sign to anyone else)."""
    alice = await Client.open(server.url, "alice")
    bob = await Client.open(server.url, "bob")
    await alice.send(type="seek", variant="kalah(5,3)")
    await alice.expect("seeking")
    assert (await bob.request("matches", type="list"))["seeks"] == [{"variant": "kalah(5,3)", "name": "alice"}]
    await bob.send(type="seek", variant="kalah(5,3)")
    await bob.expect("snapshot")
    assert (await bob.request("matches", type="list"))["seeks"] == []
    await bob.send(type="seek", variant="kalah(4,4)")
    await bob.expect("seeking")
    await bob.close()
    await eventually(lambda: _no_seeks(alice), what="the closed connection's seek leaving the listing")


async def _no_seeks(client: Client) -> bool:
    """Whether the listing `client` gets now shows no seek."""
    return not (await client.request("matches", type="list"))["seeks"]


async def test_lobby_seek_list_and_leave(server: RunningServer) -> None:
    """Seeking pairs; the listing shows matches (not those of absent creators); leaving cancels an open one."""
    alice = await Client.open(server.url, "alice")
    bob = await Client.open(server.url, "bob")
    await alice.send(type="seek", variant="kalah(5,3)")
    assert (await alice.expect("seeking"))["variant"] == "kalah(5,3)"
    await bob.send(type="seek", variant="kalah(5,3)")
    snaps: list[dict[str, Any]] = [await c.expect("snapshot") for c in (alice, bob)]
    assert [s["you"] for s in snaps] == ["south", "north"] and snaps[0]["match_id"] == snaps[1]["match_id"]
    await alice.send(type="create", variant="kalah(6,6)")
    open_id = (await alice.expect("snapshot"))["match_id"]
    await bob.send(type="list")
    listing = (await bob.expect("matches"))["matches"]
    assert [(m["status"], m["variant"]) for m in listing] == [("open", "kalah(6,6)"), ("live", "kalah(5,3)")]
    await alice.send(type="leave", match_id=open_id)
    await alice.request("matches", type="list")  # served after the leave: the match is cancelled by now
    await bob.send(type="list")
    assert [m["status"] for m in (await bob.expect("matches"))["matches"]] == ["live"]
    await bob.send(type="join", match_id=open_id)
    assert await bob.error() == "unknown_match"
    carol = await Client.open(server.url, "carol")
    await carol.request("snapshot", type="create", variant="kalah(2,2)")
    listing = (await bob.request("matches", type="list"))["matches"]
    assert [(m["status"], m["variant"]) for m in listing] == [("open", "kalah(2,2)"), ("live", "kalah(5,3)")]
    await carol.close()
    await eventually(lambda: listed_only_live(bob), what="the absent creator's match leaving the listing")


async def stalled_watcher(server: RunningServer, name: str, match_id: str, token: str | None = None) -> Client:
    """A spectator of `match_id` that stops reading (as `name`, with its `token` if it has one): tiny kernel buffers
    both ways, so its backlog piles up."""
    sock = socket.create_connection((server.host, server.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    stalled = Client(await connect(server.url, sock=sock, max_queue=1))
    await stalled.send(type="hello", name=name, token=token)
    await stalled.expect("welcome")
    await stalled.send(type="watch", match_id=match_id)
    await stalled.expect("snapshot")
    for session in server.arena.rooms[match_id].followers:
        if session.name == name and isinstance(session, Session):  # a websocket's follower
            session.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return stalled


async def test_spectator_that_stops_reading_is_dropped(serve: Serve) -> None:
    """A spectator that reads nothing never holds the match up; once its backlog is too big it is dropped."""
    variant = "kalah(12,24)"
    server = await serve(rate=1000, burst=1000, send_buffer=2048)
    alice, bob, mid = await live_match(server.url, variant)
    stalled = await stalled_watcher(server, "stalled", mid)
    try:
        room = server.arena.rooms[mid]
        assert room.spectators == 1
        await play_out(alice, bob, mid, variant, random.Random(5))
        assert room.spectators == 0
    finally:
        stalled.ws.transport.abort()
        await stalled.ws.wait_closed()


async def test_a_spectator_without_a_seat_is_dropped_sooner_than_a_player(serve: Serve) -> None:
    """Past the smaller unsent-bytes limit of a connection without a seat, a spectator that stopped reading is
    dropped; one whose identity is seated in an unfinished match, with the same backlog, is kept (the bigger
    limit is a player's)."""
    variant = "kalah(12,24)"
    server = await serve(rate=1000, burst=1000, seatless_send_buffer=2048)
    alice, bob, mid = await live_match(server.url, variant)
    carol, dave, _ = await live_match(server.url, names=("carol", "dave"))  # carol holds a seat elsewhere
    lurker = await stalled_watcher(server, "lurker", mid)
    seated = await stalled_watcher(server, "carol", mid, carol.welcome["token"])
    try:
        await play_out(alice, bob, mid, variant, random.Random(5))
        followers = {session.name: session for session in server.arena.rooms[mid].followers
                     if isinstance(session, Session)}  # websockets' followers
        assert "lurker" not in followers
        assert followers["carol"].ws.transport.get_write_buffer_size() > 2048  # kept with more unsent
    finally:
        for stalled in (lurker, seated):
            stalled.ws.transport.abort()
            await stalled.ws.wait_closed()
        for client in (alice, bob, carol, dave):
            await client.close()

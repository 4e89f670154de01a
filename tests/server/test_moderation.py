"""Moderation through real servers: bans of addresses and players, aborted matches, renamed and closed identities,
who is online, the audit, `kalah admin`, and a ban shared by the three nodes of a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from functools import partial
from pathlib import Path
from typing import Any

import asyncpg
import redis.asyncio as redis
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.cluster.bus import sessions_key
from server.front.outside_engines.gateway import engine_id
from server.storage import StoredGame, fetch_game
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, KgpClients, gateway, port_of
from tests.helpers.cluster_play import start_node, start_nodes, stop_nodes
from tests.helpers.wire import OPERATOR, Client, Json, eventually, is_game_over, live_match
from tests.server.storage.test_backup import kalah
from tests.server.test_metrics import scrape


async def moderate(client: Client, **fields: object) -> Json:
    """Send a moderation request with the operator token; the answer (`moderated` or `error`)."""
    await client.send(type="moderate", operator_token=OPERATOR, **fields)
    while True:
        msg = await client.next()
        if msg["type"] in ("moderated", "error"):
            return msg


async def closed_as_banned(client: Client) -> bool:
    """Whether the server told `client` it is banned and closed its connection (1008)."""
    try:
        while True:
            msg = await client.next(timeout=10)
            if msg["type"] == "error" and msg["code"] == "banned":
                break
        await asyncio.wait_for(client.ws.wait_closed(), 10)
    except ConnectionClosed:
        pass
    return client.ws.close_code == 1008


async def refused_as_banned(url: str, source: str) -> bool:
    """Whether a new connection from `source` is told `banned` and closed before it can say anything."""
    client = await Client.open(url, None, source=source)
    return await closed_as_banned(client)


async def test_an_address_ban_closes_its_connections_refuses_new_ones_and_is_audited(serve: Serve) -> None:
    """Banning 127.0.0.2 closes its connections (hello said or not) with `banned`, refuses new ones, leaves other
    addresses alone, is counted as a refusal in /metrics, is listed with who and why, and once lifted lets the
    address in again."""
    server = await serve()
    operator = await Client.open(server.url, "op")
    player = await Client.open(server.url, "mallory", source="127.0.0.2")
    anonymous = await Client.open(server.url, None, source="127.0.0.2")
    bystander = await Client.open(server.url, "alice", source="127.0.0.3")
    done = await moderate(operator, act="ban", kind="address", target="127.0.0.2", reason="flooding", actor="root")
    assert done["type"] == "moderated" and done["done"] == "banned address 127.0.0.2"
    assert await closed_as_banned(player) and await closed_as_banned(anonymous)
    assert await refused_as_banned(server.url, "127.0.0.2")
    assert (await scrape(server))[("kalah_refusals_total", (("code", "banned"),))] == 1
    assert (await bystander.request("matches", type="list"))["type"] == "matches"
    bans = await moderate(operator, act="bans")
    assert [(r["kind"], r["target"], r["reason"], r["actor"]) for r in bans["rows"]] == [
        ("address", "127.0.0.2", "flooding", "root@127.0.0.1")]
    assert (await moderate(operator, act="unban", kind="address", target="127.0.0.2", reason="appeal"))["type"] \
        == "moderated"
    back = await Client.open(server.url, "mallory2", source="127.0.0.2")
    assert back.welcome["name"] == "mallory2"
    audit = await moderate(operator, act="audit")
    assert [(r["kind"], r["reason"]) for r in audit["rows"]] == [("unban_address", "appeal"),
                                                                 ("ban_address", "flooding")]
    for client in (operator, bystander, back):
        await client.close()


async def test_a_player_ban_refuses_its_token_and_closes_its_connections(serve: Serve) -> None:
    """A player banned by name has its open connections closed and its token refused with `banned`; another
    identity from the same address still says hello."""
    server = await serve()
    operator = await Client.open(server.url, "op")
    troll = await Client.open(server.url, "troll", source="127.0.0.4")
    done = await moderate(operator, act="ban", target="troll", reason="abuse in chat")
    assert done["done"] == f"banned player {troll.welcome['player_id']}"
    assert await closed_as_banned(troll)
    again = await Client.open(server.url, None, source="127.0.0.4")
    await again.send(type="hello", name="troll", token=troll.welcome["token"])
    assert await closed_as_banned(again)
    other = await Client.open(server.url, "newcomer", source="127.0.0.4")
    assert other.welcome["name"] == "newcomer"
    for client in (operator, other):
        await client.close()


async def test_moderation_needs_the_operator_token_and_a_reason(serve: Serve) -> None:
    """Without the operator token every act is refused (`not_operator`); an act that changes something without a
    reason is refused (`bad_field`); an unknown player or a bad address too."""
    server = await serve()
    client = await Client.open(server.url, "someone")
    await client.send(type="moderate", operator_token="guess", act="online")
    assert await client.error() == "not_operator"
    assert (await moderate(client, act="ban", target="someone"))["code"] == "bad_field"
    assert (await moderate(client, act="ban", target="nobody", reason="x"))["code"] == "bad_field"
    assert (await moderate(client, act="ban", kind="address", target="not-an-ip", reason="x"))["code"] == "bad_field"
    await client.close()


async def test_abort_ends_a_live_match_unrated_with_reason_aborted(serve: Serve, tmp_path: Path) -> None:
    """Aborting a live rated match tells both players `game_over` (aborted, no winner), stores it finished with
    reason `aborted` and unrated, and moves no rating."""
    server = await serve()
    south, north, match_id = await live_match(server.url)
    await south.request("ack", type="move", match_id=match_id, ply=0, bin=1)
    operator = await Client.open(server.url, "op")
    done = await moderate(operator, act="abort", target=match_id, reason="players colluding")
    assert done["type"] == "moderated"
    for player in (south, north):
        over = await player.expect("event", where=is_game_over)
        assert (over["reason"], over["winner"]) == ("aborted", None)
    stored = fetch_game(tmp_path / "arena.sqlite3", match_id)
    assert stored is not None and (stored.status, stored.reason, stored.winner) == ("finished", "aborted", None)
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3")) as db:
        assert db.execute("SELECT rated FROM matches WHERE id = ?", (match_id,)).fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM ratings").fetchone() == (0,)
    assert (await moderate(operator, act="abort", target=match_id, reason="again"))["code"] == "game_over"
    for client in (south, north, operator):
        await client.close()


async def test_an_abort_the_database_refuses_leaves_the_match_rated(serve: Serve, tmp_path: Path,
                                                                     monkeypatch: Any) -> None:
    """An abort whose write fails is refused `unavailable` and changes nothing: the match stays live and rated in
    memory as in the database, so when it then ends by resignation both players' ratings move."""
    server = await serve()
    south, north, match_id = await live_match(server.url)
    operator = await Client.open(server.url, "op")
    storage = server.arena.storage
    store = storage.write

    async def refuse(ops: Any) -> None:
        """The database refusing every write."""
        raise OSError("disk I/O error")

    monkeypatch.setattr(storage, "write", refuse)
    assert (await moderate(operator, act="abort", target=match_id, reason="x"))["code"] == "unavailable"
    monkeypatch.setattr(storage, "write", store)
    assert server.arena.rooms[match_id].match.rated
    await south.request("ack", type="move", match_id=match_id, ply=0, bin=1)  # a resignation at ply 0 is unrated
    await south.send(type="resign", match_id=match_id)
    assert (await south.expect("event", where=is_game_over))["reason"] == "resign"
    with contextlib.closing(sqlite3.connect(tmp_path / "arena.sqlite3")) as db:
        assert db.execute("SELECT rated, reason FROM matches WHERE id = ?", (match_id,)).fetchone() == (1, "resign")
        assert db.execute("SELECT count(*) FROM ratings").fetchone() == (2,)
    for client in (south, north, operator):
        await client.close()


async def test_rename_close_and_online(serve: Serve) -> None:
    """`online` lists connected identities with their addresses; a rename shows in the next welcome and is refused
    for a name another holds; a closed identity's token is refused."""
    server = await serve()
    operator = await Client.open(server.url, "op")
    alice = await Client.open(server.url, "alice", source="127.0.0.6")
    await Client.open(server.url, "bob")
    online = await moderate(operator, act="online")
    assert {(r["name"], r["address"]) for r in online["rows"]} >= {("alice", "127.0.0.6"), ("bob", "127.0.0.1")}
    assert (await moderate(operator, act="rename", target="alice", name="bob", reason="x"))["code"] == "name_taken"
    renamed = await moderate(operator, act="rename", target=alice.welcome["player_id"], name="alicia",
                             reason="offensive name")
    assert renamed["type"] == "moderated"
    await alice.close()
    back = await Client.open(server.url, "ignored", token=alice.welcome["token"])
    assert back.welcome["name"] == "alicia"
    assert (await moderate(operator, act="close", target="alicia", reason="asked to"))["type"] == "moderated"
    assert await closed_as_banned(back)
    again = await Client.open(server.url, None)
    await again.send(type="hello", name="alicia", token=alice.welcome["token"])
    assert await closed_as_banned(again)
    await operator.close()


async def test_kalah_admin_bans_lists_and_audits(tmp_path: Path) -> None:
    """`kalah admin` against a real `kalah serve`: a ban, the online list and the audit, and one-line refusals."""
    secret, wrong = tmp_path / "operator-token", tmp_path / "wrong-token"
    secret.write_text(OPERATOR + "\n")
    wrong.write_text("wrong\n")
    proc, url = await start_node(str(tmp_path / "arena.sqlite3"), None, "admin", "--operator-token-file", str(secret))
    try:
        guest = await Client.open(url, "guest", source="127.0.0.7")
        token = ["--server", url, "--operator-token-file", str(secret)]
        status, out = await kalah("admin", "online", *token)
        assert status == 0 and "guest" in out and "127.0.0.7" in out
        status, out = await kalah("admin", "ban", "127.0.0.7", "--address", "--reason", "spam", "--as", "ops", *token)
        assert status == 0 and "banned address 127.0.0.7" in out
        assert await closed_as_banned(guest)
        status, out = await kalah("admin", "audit", *token)
        assert status == 0 and "ban_address" in out and "ops@127.0.0.1" in out and "spam" in out
        mallory = await Client.open(url, "mallory")
        pid = str(mallory.welcome["player_id"])
        status, out = await kalah("admin", "ban", "mallory", "--reason", "abuse", *token)
        assert status == 0, out
        status, out = await kalah("admin", "bans", *token)  # a banned player's name, not only the id (before: none)
        lines = out.splitlines()
        assert status == 0 and lines[1].split()[:3] == ["kind", "target", "name"]
        assert [line.split()[:3] for line in lines[2:]] == [["address", "127.0.0.7", "-"], ["player", pid, "mallory"]]
        status, out = await kalah("admin", "ban", "127.0.0.8", "--address", *token)
        assert status == 1 and "bad_field" in out and "reason" in out and out.count("\n") == 1
        status, out = await kalah("admin", "online", "--server", url, "--operator-token-file", str(wrong))
        assert status == 1 and "not_operator" in out and out.count("\n") == 1
    finally:
        await stop_nodes([(proc, url)])


async def test_an_address_banned_on_one_node_is_refused_on_every_node_of_a_cluster(pg_url: str, bus_url: str) -> None:
    """Three `kalah serve` nodes on one PostgreSQL and one Redis: an address banned through one node has its live
    connections on every node closed and new ones refused on every node; another address plays on, and its match
    is aborted through a third node."""
    nodes = await start_nodes(pg_url, bus_url, [f"mod{i}" for i in range(3)], "--operator-token", OPERATOR)
    try:
        urls = [url for _, url in nodes]
        banned = [await Client.open(url, f"spammer{i}", source="127.0.0.9") for i, url in enumerate(urls)]
        status, out = await kalah("admin", "ban", "127.0.0.9", "--address", "--reason", "spam", "--server", urls[0],
                                  "--operator-token", OPERATOR)
        assert status == 0, out
        for client in banned:
            assert await closed_as_banned(client)
        for url in urls:
            assert await refused_as_banned(url, "127.0.0.9")
        south, north, match_id = await live_match(urls[1], names=("fair1", "fair2"))
        assert (await south.request("ack", type="move", match_id=match_id, ply=0, bin=1))["ply"] == 0
        status, out = await kalah("admin", "abort", match_id, "--reason", "test", "--server", urls[2],
                                  "--operator-token", OPERATOR)
        assert status == 0, out
        for client in (south, north):
            over = await client.expect("event", where=is_game_over, timeout=10)
            assert (over["reason"], over["winner"]) == ("aborted", None)
            await client.close()
    finally:
        await stop_nodes(nodes)


async def test_a_banned_address_is_refused_by_the_kgp_gateway_too(serve: Serve) -> None:
    """An outside engine connecting to the KGP port from a banned address is told so in KGP and let go."""
    server = await serve(kgp_port=0)
    assert server.kgp is not None
    operator = await Client.open(server.url, "op")
    assert (await moderate(operator, act="ban", kind="address", target="127.0.0.12", reason="cheating engine"))[
        "type"] == "moderated"
    reader, writer = await asyncio.open_connection(server.host, server.kgp.port, local_addr=("127.0.0.12", 0))
    try:
        said = (await asyncio.wait_for(reader.read(), 10)).decode()
    finally:
        writer.close()
    assert said == 'error "your address is banned by the server\'s operator"\r\ngoodbye\r\n'
    await operator.close()


async def welcome_name(url: str, token: str, wanted: str) -> str:
    """The name a hello with `token` is welcomed with, asked again (up to 15 s) until it is `wanted`."""
    for _ in range(150):
        client = await Client.open(url, "ignored", token=token)
        name = str(client.welcome["name"])
        await client.close()
        if name == wanted:
            break
        await asyncio.sleep(0.1)
    return name


async def rename_out_of_order(pg_url: str, low: Client, high: Client) -> Transaction:
    """Rename `low`'s player in a transaction left open (for the caller to commit), after it has taken an audit
    number, and `high`'s in one that takes the next number and commits first."""
    early = await asyncpg.connect(pg_url)
    late = await asyncpg.connect(pg_url)
    rename = "UPDATE players SET name = $1, name_key = $1 WHERE id = $2"
    audit = ("INSERT INTO audit (at, actor, action, target, reason) VALUES ($1, 'root', 'rename', $2, 'x')"
             " RETURNING id")
    slow = early.transaction()
    await slow.start()
    first = await early.fetchval(audit, time.time(), low.welcome["player_id"])
    await early.execute(rename, low.welcome["name"] + "-renamed", low.welcome["player_id"])
    async with late.transaction():
        second = await late.fetchval(audit, time.time(), high.welcome["player_id"])
        await late.execute(rename, high.welcome["name"] + "-renamed", high.welcome["player_id"])
    await late.close()
    assert second > first
    return Transaction(early, slow)


class Transaction:
    """An open transaction on its own connection."""

    def __init__(self, conn: asyncpg.Connection, transaction: Any) -> None:
        self.conn = conn
        self.transaction = transaction

    async def commit(self) -> None:
        """Commit it and close the connection."""
        await self.transaction.commit()
        await self.conn.close()

    async def close(self) -> None:
        """Close the connection (a transaction still open is rolled back)."""
        await self.conn.close()


async def test_a_rename_committed_after_a_later_numbered_act_still_reaches_every_node(pg_url: str,
                                                                                     bus_url: str) -> None:
    """On PostgreSQL an act's audit number is taken when it is written: a rename numbered n that commits after
    act n+1 still reaches a node that polled n+1 before, and one that started meanwhile and met the player by
    its old name (the next welcome on each says the new name)."""
    nodes = [await start_node(pg_url, bus_url, "late0", "--operator-token", OPERATOR)]
    open_rename = None
    try:
        alice = await Client.open(nodes[0][1], "alice")
        bob = await Client.open(nodes[0][1], "bob")
        open_rename = await rename_out_of_order(pg_url, alice, bob)
        assert await welcome_name(nodes[0][1], bob.welcome["token"], "bob-renamed") == "bob-renamed"  # n+1 polled
        nodes.append(await start_node(pg_url, bus_url, "late1", "--operator-token", OPERATOR))
        assert await welcome_name(nodes[1][1], alice.welcome["token"], "alice") == "alice"  # held by the new node
        await open_rename.commit()
        for _, url in nodes:
            assert await welcome_name(url, alice.welcome["token"], "alice-renamed") == "alice-renamed"
        for client in (alice, bob):
            await client.close()
    finally:
        if open_rename is not None:
            await open_rename.close()
        await stop_nodes(nodes)


def finished_game(db: Path, match_id: str) -> StoredGame | None:
    """The stored game once it has ended."""
    game = fetch_game(db, match_id)
    return game if game is not None and game.status == "finished" else None


async def kgp_agent(agents: KgpClients, port: int, source: str, name: str, token: str) -> KgpClient:
    """An outside engine connected over KGP from `source` with `token` (closed with `agents`), in its first game
    against a hosted bot."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0), limit=1 << 20)
    agent = KgpClient(reader, writer)
    agents.clients.append(agent)
    await agent.hello(name, token=token)
    await agent.until_game()
    return agent


async def told_banned(agent: KgpClient) -> bool:
    """Whether the gateway told a connected agent it is banned (`error`), said goodbye and closed."""
    lines = await agent.closed(timeout=10)
    said = [(line.name, line.args) for line in lines if line.name in ("error", "goodbye")]
    return bool(said) and said[-1][0] == "goodbye" and any("banned" in str(args) for _, args in said)


async def test_a_ban_closes_kgp_agents_already_connected(serve: Serve, tmp_path: Path) -> None:
    """Engines connected over KGP and in a game are told `error` (banned) and `goodbye` and let go when their
    address or their identity is banned, and lose their games by forfeit; the banned identity's token is let go
    again on a new connection, while another engine plays on."""
    running = await gateway(serve)
    port = port_of(running)
    operator = await Client.open(running.url, "op")
    agents = KgpClients()
    try:
        by_address = await kgp_agent(agents, port, "127.0.0.14", "flooder", "flooder-secret")
        by_identity = await kgp_agent(agents, port, "127.0.0.15", "cheater", "cheater-secret")
        fair = await kgp_agent(agents, port, "127.0.0.16", "fair", "fair-secret")
        assert (await moderate(operator, act="ban", kind="address", target="127.0.0.14", reason="flood"))["type"] \
            == "moderated"
        assert await told_banned(by_address)
        assert (await moderate(operator, act="ban", target=engine_id("cheater-secret"), reason="engine cheats"))[
            "type"] == "moderated"
        assert await told_banned(by_identity)
        again = await agents.open(port)
        await again.expect("kgp")
        await again.command('set auth:token "cheater-secret"')
        await again.command("mode freeplay")
        assert await told_banned(again)
        assert await fair.play() is not None
        for agent in (by_address, by_identity):
            game = await eventually(partial(finished_game, tmp_path / "arena.sqlite3", agent.games[0]),
                                    what="the banned engine's forfeit")
            assert game is not None and (game.reason, game.winner) == ("forfeit", "bot:first")
    finally:
        await agents.close()
        await operator.close()


async def online_rows(client: Client) -> set[tuple[str, str, str]]:
    """The online listing asked through `client`'s node: (name, addresses, node) of each row."""
    answer = await moderate(client, act="online")
    return {(r["name"], r["address"], r["node"]) for r in answer["rows"]}


async def test_online_lists_who_is_connected_to_every_node_of_a_cluster(pg_url: str, bus_url: str) -> None:
    """Two `kalah serve` nodes: the online listing asked through either node names every connected identity on
    both, with its addresses on each node and the node; a player who leaves a node leaves its row; `kalah admin
    online` prints the node."""
    nodes = await start_nodes(pg_url, bus_url, [f"who{i}" for i in range(2)], "--operator-token", OPERATOR)
    try:
        urls = [url for _, url in nodes]
        operators = [await Client.open(url, None) for url in urls]
        alice = await Client.open(urls[0], "alice", source="127.0.0.21")
        bob_there = await Client.open(urls[1], "bob", source="127.0.0.22")
        bob_here = await Client.open(urls[0], "ignored", token=bob_there.welcome["token"], source="127.0.0.23")
        both = {("alice", "127.0.0.21", "who0"), ("bob", "127.0.0.23", "who0"), ("bob", "127.0.0.22", "who1")}
        for operator in operators:
            assert await eventually(partial(lists, operator, both), timeout=15, what="every node's connections")
        status, out = await kalah("admin", "online", "--server", urls[1], "--operator-token", OPERATOR)
        assert status == 0 and "node" in out and "who0" in out and "127.0.0.21" in out, out
        async with redis.from_url(bus_url) as bus:  # a node that dies stops renewing its list: it expires
            assert 0 < await bus.ttl(sessions_key("who1")) <= 60
        await bob_there.close()
        left = {("alice", "127.0.0.21", "who0"), ("bob", "127.0.0.23", "who0")}
        assert await eventually(partial(lists, operators[0], left), timeout=15, what="bob's row gone")
        for client in (*operators, alice, bob_here):
            await client.close()
    finally:
        await stop_nodes(nodes)


async def lists(client: Client, wanted: set[tuple[str, str, str]]) -> bool:
    """Whether the online listing asked through `client`'s node is exactly `wanted`."""
    return await online_rows(client) == wanted


async def kgp_over_ws(url: str, source: str) -> ClientConnection:
    """An outside engine at `/kgp` of a node, from `source`, that asked for a game (freeplay)."""
    ws = await connect(url + "/kgp", local_addr=(source, 0))
    await ws.send('1 set info:name "flooder"\r\n')
    await ws.send("3 mode freeplay\r\n")
    return ws


async def kgp_told_banned(ws: ClientConnection) -> bool:
    """Whether the node told the engine it is banned (`error`), said goodbye and closed."""
    lines: list[str] = []
    with contextlib.suppress(ConnectionClosed):
        while True:
            frame = await asyncio.wait_for(ws.recv(), 10)
            lines += str(frame).splitlines()
    return lines[-1:] == ["goodbye"] and any(" error " in line and "banned" in line for line in lines)


async def test_an_address_ban_closes_kgp_engines_on_every_node(pg_url: str, bus_url: str) -> None:
    """Two nodes with KGP: an address banned through one node has its engines connected to either node told
    `error` (banned) and `goodbye`, and let go."""
    nodes = await start_nodes(pg_url, bus_url, ["kgp0", "kgp1"], "--operator-token", OPERATOR, "--kgp-port", "0")
    try:
        urls = [url for _, url in nodes]
        engines = [await kgp_over_ws(url, "127.0.0.31") for url in urls]
        status, out = await kalah("admin", "ban", "127.0.0.31", "--address", "--reason", "engine flood",
                                  "--server", urls[0], "--operator-token", OPERATOR)
        assert status == 0, out
        for ws in engines:
            assert await kgp_told_banned(ws)
    finally:
        await stop_nodes(nodes)

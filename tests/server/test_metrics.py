"""`GET /metrics`: the server's figures in the Prometheus text format, read with prometheus_client's own parser."""

from __future__ import annotations

import asyncio
import gc
import random
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from protocol import Game, Variant
from server.assembly import RunningServer
from server.front.metrics import Metrics
from tests.conftest import Serve
from tests.helpers.cluster_play import ROOT
from tests.helpers.wire import OPERATOR, Client, FirstLegal, Json, eventually, is_game_over, live_match
from tests.server.cluster.test_nodes import across

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def fetch(server: RunningServer, token: str | None = OPERATOR) -> tuple[int, str]:
    """GET /metrics (with `token` as a bearer token); the status and the body."""
    request = urllib.request.Request(f"http://{server.host}:{server.port}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


async def scrape(server: RunningServer) -> Samples:
    """Every sample of the server's /metrics, parsed by prometheus_client: (name, sorted labels) -> value."""
    status, text = await asyncio.to_thread(fetch, server)
    assert status == 200, text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def play_actions(south: Client, north: Client, match_id: str, count: int, seed: int) -> Game:
    """Play `count` random legal actions (fewer if the game ends), each acknowledged."""
    game = Game(Variant.parse("kalah(6,4)"))
    rng = random.Random(seed)
    seats = {"SOUTH": south, "NORTH": north}
    for _ in range(count):
        if game.over:
            break
        action = rng.choice(game.position.legal_actions())
        move: Json = {"type": "move", "match_id": match_id, "ply": game.ply, "bin": int(action.token())}
        assert (await seats[game.position.to_move.name].request("ack", **move))["ply"] == game.ply
        game.play(action)
    return game


async def test_metrics_after_real_play_parse_and_count_what_happened(serve: Serve) -> None:
    """After real play (actions, a resignation, a bot's game, a refused request) /metrics parses as Prometheus text
    and its connections, matches, actions, latency histograms, bot moves and refusals count exactly that; the
    sample Grafana dashboard asks only for metrics the server has."""
    server = await serve(bot_factory=FirstLegal.make)
    south, north, match_id = await live_match(server.url)
    game = await play_actions(south, north, match_id, 10, seed=1)
    await south.send(type="resign", match_id=match_id)
    await north.expect("event", where=is_game_over)
    carol = await Client.open(server.url, "carol")
    bot_match = (await carol.request("snapshot", type="create", variant="kalah(4,3)", seat="south",
                                     opponent="first"))["match_id"]
    await carol.send(type="move", match_id=bot_match, ply=0, bin=1)
    await carol.expect("event", where=lambda e: e.get("kind") == "action" and e["ply"] == 1)
    await carol.send(type="sync", match_id="m00000000000")
    assert await carol.error() == "unknown_match"

    samples = await scrape(server)
    actions = game.ply + 2  # carol's and the bot's
    assert samples[("kalah_connections", ())] == 3
    assert samples[("kalah_identities_online", ())] == 3
    assert samples[("kalah_actions_total", ())] == actions
    assert samples[("kalah_matches", (("state", "finished"), ("variant", "kalah(6,4)")))] == 1
    assert samples[("kalah_matches", (("state", "live"), ("variant", "kalah(4,3)")))] == 1
    assert samples[("kalah_event_follower_seconds_count", (("path", "local"),))] == actions
    assert samples[("kalah_commit_seconds_count", ())] >= 1
    assert samples[("kalah_bot_move_seconds_count", (("bot", "first"),))] == 1
    assert samples[("kalah_refusals_total", (("code", "unknown_match"),))] == 1
    assert samples[("kalah_quarantined_matches", ())] == 0
    assert samples[("kalah_analyses", (("state", "running"),))] == 0
    assert samples[("kalah_analyses_paced_total", ())] == 0 and samples[("kalah_analysis_share", ())] == 0
    dashboard = (ROOT / "docs" / "grafana-dashboard.json").read_text()
    shown = set(re.findall(r"kalah_[a-z_]+", dashboard)) - {"kalah_arena"}
    assert {name for name in shown if not name.startswith("kalah_cluster_")} <= {name for name, _ in samples}
    for client in (south, north, carol):
        await client.close()


def test_every_generations_collection_series_is_there_before_any_collection_is_timed() -> None:
    """A fresh registry shows the collections' histogram of generations 0, 1 and 2 at zero (a dashboard's series
    exist before the first collection long enough to time; a scrape must not depend on one having happened)."""
    counts = {sample.labels["generation"]: sample.value for family in Metrics().timings()
              for sample in family.samples if sample.name == "kalah_gc_pause_seconds_count"}
    assert counts == {"0": 0, "1": 0, "2": 0}


async def test_metrics_need_the_operator_token_and_are_off_without_one(serve: Serve, tmp_path: Path) -> None:
    """Without the bearer token /metrics answers 401; a server started without an operator token answers 404;
    two servers in one process count apart (a registry each)."""
    guarded = await serve()
    assert (await asyncio.to_thread(fetch, guarded, None))[0] == 401
    assert (await asyncio.to_thread(fetch, guarded, "wrong"))[0] == 401
    off = await serve(tmp_path / "off.sqlite3", operator_token=None)
    status, text = await asyncio.to_thread(fetch, off)
    assert status == 404 and "--operator-token" in text
    south, north, match_id = await live_match(guarded.url)
    await play_actions(south, north, match_id, 3, seed=2)
    other = await serve(tmp_path / "other.sqlite3")
    assert (await scrape(guarded))[("kalah_actions_total", ())] == 3
    assert (await scrape(other))[("kalah_actions_total", ())] == 0
    await south.close()
    await north.close()


async def test_collections_and_a_late_event_loop_are_timed_while_the_server_runs(serve: Serve) -> None:
    """A full collection in the server's process shows in kalah_gc_pause_seconds{generation="2"}, and the loop held
    200 ms in kalah_event_loop_lag_seconds above 0.1 s; a closed server stops timing collections (its callback leaves
    gc.callbacks)."""
    callbacks = len(gc.callbacks)
    server = await serve()
    gc.collect()
    lag = server.arena.metrics.loop_lag_seconds
    await eventually(lambda: sum(lag.counts) > 0)  # the lag sampler has begun its rounds
    time.sleep(0.2)  # the server's loop is this test's: the sample due meanwhile comes at least 0.15 s late
    await eventually(lambda: sum(lag.counts[lag.bounds.index(0.1) + 1:]) > 0)
    samples = await scrape(server)
    assert samples[("kalah_gc_pause_seconds_count", (("generation", "2"),))] >= 1
    assert samples[("kalah_gc_pause_seconds_sum", (("generation", "2"),))] > 0
    assert samples[("kalah_event_loop_lag_seconds_count", ())] > samples[
        ("kalah_event_loop_lag_seconds_bucket", (("le", "0.1"),))]
    await server.close()
    assert len(gc.callbacks) == callbacks


async def test_cluster_nodes_report_owned_matches_copies_and_bus_latency(serve: Serve, pg_url: str,
                                                                         bus_url: str) -> None:
    """On two nodes, the node where a match was made owns it and the other keeps a copy for its player; each action
    is counted once, where it was made, and its event timed on the local path there (and on the bus path on the
    other node when the notice carried it)."""
    a, b = [await serve(pg_url, bus=bus_url) for _ in range(2)]
    alice, bob, match_id = await across(a, b, "kalah(6,4)")
    game = await play_actions(alice, bob, match_id, 6, seed=3)

    def timed(samples: list[Samples], path: str) -> float:
        """Events timed on `path` by all the nodes."""
        return sum(s.get(("kalah_event_follower_seconds_count", (("path", path),)), 0) for s in samples)

    async def timed_on_the_bus() -> bool:
        """Whether actions' events reached the other node's followers from the bus notices (a copy busy with a
        request of its own reads the database instead, which is not timed)."""
        return 0 < timed([await scrape(a), await scrape(b)], "bus") <= game.ply

    await eventually(timed_on_the_bus, what="events timed on the bus")
    on_a, on_b = await scrape(a), await scrape(b)
    assert (on_a[("kalah_cluster_owned_matches", ())], on_a[("kalah_cluster_copies", ())]) == (1, 0)
    assert (on_b[("kalah_cluster_owned_matches", ())], on_b[("kalah_cluster_copies", ())]) == (0, 1)
    assert on_a[("kalah_actions_total", ())] + on_b[("kalah_actions_total", ())] == game.ply
    assert timed([on_a, on_b], "local") == game.ply
    assert on_a[("kalah_cluster_takeovers_total", ())] == on_b[("kalah_cluster_takeovers_total", ())] == 0
    await alice.close()
    await bob.close()

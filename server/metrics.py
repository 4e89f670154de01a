"""The server's figures in the Prometheus text format (`GET /metrics` with the operator token).

Each server has its own `CollectorRegistry` (never the process-wide default one), so several
servers in one process keep apart. What changes on every event is observed as it happens
(commit latency, event-to-follower latency, bot move time, refusals by code); what is state
(connections, matches, analyses, the cluster's matches) is read from the arena when scraped,
so a scrape costs nothing between scrapes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client import Counter as CounterMetric
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

if TYPE_CHECKING:
    from server.analysis import Analyst
    from server.arena import Arena

CONTENT_TYPE = CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Seconds: from half a millisecond (a quiet commit) to seconds (a database in trouble)."""
BOT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """One server's registry and the figures observed as they happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.commit_seconds = Histogram(
            "kalah_commit_seconds", "Time to commit one group of writes (durable before acknowledged).",
            buckets=LATENCY_BUCKETS, registry=self.registry)
        self.follower_seconds = Histogram(
            "kalah_event_follower_seconds",
            "From an action's arrival at its owner to its event being handed to this node's followers "
            "(path=local where the action was made, path=bus on a node that keeps a copy and applied the bus's "
            "notice: the bus lag included; a copy that re-reads the database instead is not timed).",
            ["path"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.bot_move_seconds = Histogram(
            "kalah_bot_move_seconds", "Time a hosted bot took to choose a move, queueing included.", ["bot"],
            buckets=BOT_BUCKETS, registry=self.registry)
        self.refusals = CounterMetric(
            "kalah_refusals", "Requests and connections refused, by error code (rate_limited, too_many, ...; "
            "http_429 and http_503 at the handshake; hello_timeout; banned).", ["code"], registry=self.registry)

    def refused(self, code: str) -> None:
        """Count one refusal of `code`."""
        self.refusals.labels(code).inc()

    def watch(self, arena: Arena, analyst: Analyst, connections: Callable[[], int]) -> None:
        """Read the arena's state at every scrape (called once the server is built)."""
        self.registry.register(_ArenaCollector(arena, analyst, connections))

    def render(self) -> bytes:
        """The whole registry in the Prometheus text format."""
        return generate_latest(self.registry)


class _ArenaCollector(Collector):
    """The arena's state as gauges and counters, read when scraped."""

    def __init__(self, arena: Arena, analyst: Analyst, connections: Callable[[], int]) -> None:
        self.arena = arena
        self.analyst = analyst
        self.connections = connections

    def describe(self) -> Iterable[Metric]:
        """Nothing to describe ahead: the families are made at each scrape."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The families of one scrape."""
        arena = self.arena
        yield GaugeMetricFamily("kalah_connections", "Open websocket connections.", value=self.connections())
        yield GaugeMetricFamily("kalah_identities_online", "Identities with at least one connection to this node.",
                                value=len(arena.sessions_of))
        matches = GaugeMetricFamily("kalah_matches", "Matches held in memory, by status and variant.",
                                    labels=["state", "variant"])
        by_kind = Counter((room.match.status, room.match.variant.text()) for room in arena.rooms.values())
        for (state, variant), count in sorted(by_kind.items()):
            matches.add_metric([state, variant], count)
        yield matches
        yield CounterMetricFamily("kalah_actions", "Actions stored and played on this node.", value=arena.actions)
        running = min(self.analyst.pending, 1)
        analyses = GaugeMetricFamily("kalah_analyses", "Analyses running (one thread) and queued.", labels=["state"])
        analyses.add_metric(["running"], running)
        analyses.add_metric(["queued"], self.analyst.pending - running)
        yield analyses
        yield GaugeMetricFamily("kalah_quarantined_matches", "Stored matches set aside because they could not be "
                                "read back (see kalah quarantine).", value=arena.quarantined)
        yield CounterMetricFamily("kalah_bot_fallbacks", "Hosted-bot moves that were a random legal one (late, "
                                  "failed or shed).", value=arena.bots.fallbacks)
        cluster = arena.cluster
        if cluster is not None:
            figures = cluster.health()
            yield GaugeMetricFamily("kalah_cluster_owned_matches", "Unfinished matches this node owns.",
                                    value=figures["owned"])
            yield GaugeMetricFamily("kalah_cluster_copies", "Matches this node keeps a copy of for its followers.",
                                    value=figures["copies"])
            yield CounterMetricFamily("kalah_cluster_takeovers", "Matches this node took over from dead nodes.",
                                      value=figures["taken_over"])
            yield GaugeMetricFamily("kalah_cluster_nodes", "Live nodes this node knows of.",
                                    value=len(figures["nodes"]))
            yield CounterMetricFamily("kalah_cluster_bus_received", "Notices received from the bus.",
                                      value=figures["bus_received"])


def respond(conn: ServerConnection, request: Request, arena: Arena) -> Response:
    """`GET /metrics`: the figures for a request bearing the operator token; 404 when the server has no operator
    token (metrics are off), 401 without the right one."""
    if arena.options.operator_token is None:
        return conn.respond(HTTPStatus.NOT_FOUND, "metrics are off: start the server with --operator-token\n")
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not arena.is_operator(token.strip()):
        response = conn.respond(HTTPStatus.UNAUTHORIZED, "metrics need the operator token: "
                                "Authorization: Bearer <operator token>\n")
        response.headers["WWW-Authenticate"] = 'Bearer realm="kalah metrics"'
        return response
    body = arena.metrics.render()
    headers = Headers([("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(body))),
                       ("Cache-Control", "no-store")])
    return Response(HTTPStatus.OK, HTTPStatus.OK.phrase, headers, body)

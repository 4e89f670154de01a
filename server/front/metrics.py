"""The server's figures in the Prometheus text format (`GET /metrics` with the operator token).

Each server has its own `CollectorRegistry` (never the process-wide default one), so several
servers in one process keep apart. What changes on every event is observed as it happens
(commit latency, event-to-follower latency, bot move time: lock-free `Timings` on the event
loop's thread; refusals by code); what is state
(connections, matches, analyses, the cluster's matches) is read from the arena when scraped,
so a scrape costs nothing between scrapes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.core.errors import RateLimitedError
from server.core.figures import Figures, LabelledTimings, Timings
from server.front.operator_auth import OperatorAuth

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.front.analysis import Analyst

CONTENT_TYPE = CONTENT_TYPE_LATEST

def cumulative(timings: Timings) -> list[tuple[str, float]]:
    """A histogram's buckets as Prometheus gives them: (upper bound, observations at or below it), `+Inf` last."""
    out, running = [], 0
    for bound, count in zip((*map(floatToGoString, timings.bounds), "+Inf"), timings.counts, strict=True):
        running += count
        out.append((bound, float(running)))
    return out


def family_of(timings: Timings | LabelledTimings) -> HistogramMetricFamily:
    """A histogram (or one per label value) as one metric family."""
    if isinstance(timings, LabelledTimings):
        return _families(timings.name, timings.documentation, timings.by_value, timings.label)
    return _families(timings.name, timings.documentation, {"": timings})


def _families(name: str, documentation: str, by_value: dict[str, Timings], label: str = "") -> HistogramMetricFamily:
    """Histograms as one Prometheus family: unlabelled (`label` empty), or one per value of `label`."""
    family = HistogramMetricFamily(name, documentation, labels=[label] if label else None)
    for value, timings in sorted(by_value.items()):
        family.add_metric([value] if label else [], cumulative(timings), timings.total)
    return family


class Metrics:
    """One server's registry: its figures (`Figures`) and its state, read when scraped."""

    def __init__(self, figures: Figures | None = None) -> None:
        self.figures = figures = Figures() if figures is None else figures
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_RefusalCollector(figures.refusals))
        self.registry.register(_BotMoveCollector(figures.explained_moves))

    def watch(self, arena: Arena, analyst: Analyst, connections: Callable[[], int]) -> None:
        """Read the arena's state at every scrape (called once the server is built)."""
        self.registry.register(_ArenaCollector(arena, analyst, connections, self.timings))

    def timings(self) -> list[HistogramMetricFamily]:
        """The histograms, as metric families."""
        f = self.figures
        return [family_of(t) for t in (f.commit_seconds, f.follower_seconds, f.bot_move_seconds, f.loop_lag_seconds,
                                       f.gc_pause_seconds)]

    def render(self) -> bytes:
        """The whole registry in the Prometheus text format."""
        return generate_latest(self.registry)


class _RefusalCollector(Collector):
    """The refusals counted so far, by code, read when scraped."""

    def __init__(self, counts: Counter[str]) -> None:
        self.counts = counts

    def describe(self) -> Iterable[Metric]:
        """Nothing to describe ahead: the family is made at each scrape."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The refusals' family."""
        family = CounterMetricFamily("kalah_refusals", "Requests and connections refused, by error code (rate_limited, "
                                     "too_many, ...; http_429 and http_503 at the handshake; hello_timeout; banned).",
                                     labels=["code"])
        for code, count in sorted(self.counts.items()):
            family.add_metric([code], count)
        yield family


class _BotMoveCollector(Collector):
    """The moves of the hosted bots that explain them (`perfect`), by kind and whether proved, read when scraped."""

    def __init__(self, counts: Counter[tuple[str, str, bool]]) -> None:
        self.counts = counts

    def describe(self) -> Iterable[Metric]:
        """Nothing to describe ahead: the family is made at each scrape."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The family of the explained moves."""
        family = CounterMetricFamily(
            "kalah_perfect_moves", "Moves the hosted perfect bot played, by how each was found (kind: book, proof, "
            "forced, keep, search, estimate; late: a random move for a bot that failed or ran out of time) and "
            "whether it was proved best (exact).", labels=["bot", "kind", "exact"])
        for (bot, kind, exact), count in sorted(self.counts.items()):
            family.add_metric([bot, kind, "true" if exact else "false"], count)
        yield family


class _ArenaCollector(Collector):
    """The arena's state as gauges and counters, read when scraped."""

    def __init__(self, arena: Arena, analyst: Analyst, connections: Callable[[], int],
                 timings: Callable[[], list[HistogramMetricFamily]]) -> None:
        self.arena = arena
        self.timings = timings
        self.analyst = analyst
        self.connections = connections

    def describe(self) -> Iterable[Metric]:
        """Nothing to describe ahead: the families are made at each scrape."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The families of one scrape."""
        arena = self.arena
        yield from self.timings()
        yield GaugeMetricFamily("kalah_connections", "Open websocket connections.", value=self.connections())
        yield GaugeMetricFamily("kalah_identities_online", "Identities with at least one connection to this node.",
                                value=len(arena.presence.sessions_of))
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
        yield CounterMetricFamily("kalah_analyses_paced", "Analyses that waited for the analysis thread's pace (the "
                                  "server under pressure).", value=self.analyst.paced)
        yield GaugeMetricFamily("kalah_analysis_share", "The share of a core the analysis thread used over the last "
                                "10 s.", value=self.analyst.share())
        yield GaugeMetricFamily("kalah_quarantined_matches", "Stored matches set aside because they could not be "
                                "read back (see kalah quarantine).", value=arena.quarantined)
        yield CounterMetricFamily("kalah_bot_fallbacks", "Hosted-bot moves that were a random legal one (late, "
                                  "failed or shed).", value=arena.bots.fallbacks)
        figures = arena.replication.health().get("cluster")  # a cluster node's own figures
        if figures is not None:
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


def respond(conn: ServerConnection, request: Request, arena: Arena, metrics: Metrics, operator: OperatorAuth,
            address: str) -> Response:
    """`GET /metrics`: the figures for a request bearing the operator token; 404 when the server has no operator
    token (metrics are off), 401 without the right one, 429 while `address` is locked out after wrong ones."""
    if arena.options.operator_token is None:
        return conn.respond(HTTPStatus.NOT_FOUND, "metrics are off: start the server with --operator-token-file\n")
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    try:
        allowed = scheme.lower() == "bearer" and operator.check(address, token.strip(), "metrics")
    except RateLimitedError as exc:
        wait_s = math.ceil((exc.retry_ms or 1000) / 1000)
        response = conn.respond(HTTPStatus.TOO_MANY_REQUESTS, f"{exc}; retry in {wait_s} s\n")
        response.headers["Retry-After"] = str(wait_s)
        return response
    if not allowed:
        response = conn.respond(HTTPStatus.UNAUTHORIZED, "metrics need the operator token: "
                                "Authorization: Bearer <operator token>\n")
        response.headers["WWW-Authenticate"] = 'Bearer realm="kalah metrics"'
        return response
    body = metrics.render()
    headers = Headers([("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(body))),
                       ("Cache-Control", "no-store")])
    return Response(HTTPStatus.OK, HTTPStatus.OK.phrase, headers, body)

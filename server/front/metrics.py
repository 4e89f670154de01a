"""The server's figures in the Prometheus text format (`GET /metrics` with the operator token).

Each server has its own `CollectorRegistry` (never the process-wide default one), so several
servers in one process keep apart. What changes on every event is observed as it happens
(commit latency, event-to-follower latency, bot move time: lock-free `Timings` on the event
loop's thread; refusals by code); what is state
(connections, matches, analyses, the cluster's matches) is read from the arena when scraped,
so a scrape costs nothing between scrapes.
"""

from __future__ import annotations

from bisect import bisect_left
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

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.front.analysis import Analyst

CONTENT_TYPE = CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Seconds: from half a millisecond (a quiet commit) to seconds (a database in trouble)."""
PAUSE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
"""Seconds of a pause: a young generation's collection takes under a millisecond, a full one of a big heap 0.1 s+."""
BOT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Timings:
    """A histogram observed on the event loop's thread alone, so without a lock: one bisect and two additions an
    observation (prometheus_client's `Histogram` takes a lock and walks every bucket), exported when scraped."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)
        """Observations per bucket (not cumulative); the last is above every bound."""
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        """Count one observation."""
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def family(self) -> HistogramMetricFamily:
        """This histogram as a metric family."""
        return _families(self.name, self.documentation, {"": self})

    def cumulative(self) -> list[tuple[str, float]]:
        """The buckets as Prometheus gives them: (upper bound, observations at or below it), `+Inf` last."""
        out, running = [], 0
        for bound, count in zip((*map(floatToGoString, self.bounds), "+Inf"), self.counts, strict=True):
            running += count
            out.append((bound, float(running)))
        return out


class LabelledTimings:
    """`Timings` by the value of one label (a path, a bot), each made at its first observation."""

    def __init__(self, name: str, documentation: str, label: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.buckets = buckets
        self.by_value: dict[str, Timings] = {}

    def labels(self, value: str) -> Timings:
        """The histogram of one label value."""
        found = self.by_value.get(value)
        if found is None:
            found = self.by_value[value] = Timings(self.name, self.documentation, self.buckets)
        return found

    def family(self) -> HistogramMetricFamily:
        """Every label value's histogram as one metric family."""
        return _families(self.name, self.documentation, self.by_value, self.label)


def _families(name: str, documentation: str, by_value: dict[str, Timings], label: str = "") -> HistogramMetricFamily:
    """Histograms as one Prometheus family: unlabelled (`label` empty), or one per value of `label`."""
    family = HistogramMetricFamily(name, documentation, labels=[label] if label else None)
    for value, timings in sorted(by_value.items()):
        family.add_metric([value] if label else [], timings.cumulative(), timings.total)
    return family


class Metrics:
    """One server's registry and the figures observed as they happen."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.commit_seconds = Timings(
            "kalah_commit_seconds", "Time to commit one group of writes (durable before acknowledged).",
            LATENCY_BUCKETS)
        self.follower_seconds = LabelledTimings(
            "kalah_event_follower_seconds",
            "From an action's arrival at its owner to its event being handed to this node's followers "
            "(path=local where the action was made, path=bus on a node that keeps a copy and applied the bus's "
            "notice: the bus lag included; a copy that re-reads the database instead is not timed).",
            "path", LATENCY_BUCKETS)
        self.local_follower_seconds = self.follower_seconds.labels("local")
        self.bus_follower_seconds = self.follower_seconds.labels("bus")
        self.bot_move_seconds = LabelledTimings(
            "kalah_bot_move_seconds", "Time a hosted bot took to choose a move, queueing included.", "bot",
            BOT_BUCKETS)
        self.loop_lag_seconds = Timings(
            "kalah_event_loop_lag_seconds", "How late the server's event loop ran a 50 ms timer, sampled every 50 ms: "
            "what a message waited behind other work (collections and a descheduled process included).",
            PAUSE_BUCKETS)
        self.gc_pause_seconds = LabelledTimings(
            "kalah_gc_pause_seconds", "Time of each garbage collection in the server's process, by generation "
            "(every thread waits while it runs).", "generation", PAUSE_BUCKETS)
        for generation in range(3):  # every generation's series from the start, at zero until one is timed
            self.gc_pause_seconds.labels(str(generation))
        self.refusals: Counter[str] = Counter()
        """Refusals by error code, counted without a lock (a flood is refused thousands of times a second)."""
        self.registry.register(_RefusalCollector(self.refusals))

    def refused(self, code: str) -> None:
        """Count one refusal of `code`."""
        self.refusals[code] += 1

    def collection(self, generation: int, seconds: float) -> None:
        """Count one garbage collection of `generation` that took `seconds`."""
        self.gc_pause_seconds.labels(str(generation)).observe(seconds)

    def watch(self, arena: Arena, analyst: Analyst, connections: Callable[[], int]) -> None:
        """Read the arena's state at every scrape (called once the server is built)."""
        self.registry.register(_ArenaCollector(arena, analyst, connections))

    def timings(self) -> list[HistogramMetricFamily]:
        """The histograms, as metric families."""
        return [self.commit_seconds.family(), self.follower_seconds.family(), self.bot_move_seconds.family(),
                self.loop_lag_seconds.family(), self.gc_pause_seconds.family()]

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
        yield from arena.metrics.timings()
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

"""The figures a server observes as they happen: lock-free timings on the event loop's thread, refusals by code.

They are plain counters; `server.front.metrics` exports them in the Prometheus text format when scraped.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter

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


class Figures:
    """What one server observes as it happens: timings and refusals (exported by `server.front.metrics`)."""

    def __init__(self) -> None:
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
        self.explained_moves: Counter[tuple[str, str, bool]] = Counter()
        """Moves of hosted bots that explain them (`perfect`), by (bot, kind, exact): counted on the event loop's
        thread."""

    def refused(self, code: str) -> None:
        """Count one refusal of `code`."""
        self.refusals[code] += 1

    def bot_moved(self, bot: str, kind: str, exact: bool) -> None:
        """Count one move of a bot that explains its moves: how it was found (`kind`) and whether it is proved."""
        self.explained_moves[bot, kind, exact] += 1

    def collection(self, generation: int, seconds: float) -> None:
        """Count one garbage collection of `generation` that took `seconds`."""
        self.gc_pause_seconds.labels(str(generation)).observe(seconds)

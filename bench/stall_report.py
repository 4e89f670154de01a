"""Where a server's stalls come from: the records of bench/stall_probe.py's probes read back and set beside what the
clients measured (their slow actions, their bot moves' times, their own collections and loop lateness): which stalls
overlap each burst of slow actions (`attribute`), and where each step of a bot's move went (`explain_moves`).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

SLOW_S = 0.050
"""An action slower than this is a slow action (the p99 goal)."""


def load(path: Path) -> list[dict[str, Any]]:
    """The records of a probe file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def overlaps(records: list[dict[str, Any]], start: float, end: float, when: Callable[[dict[str, Any]], bool]) -> list[
        dict[str, Any]]:
    """The records (with `t` and `s`) that overlap [start, end] and pass `when`."""
    return [r for r in records if r["t"] < end and r["t"] + r.get("s", 0.0) > start and when(r)]


def attribute(server: list[dict[str, Any]], client: list[dict[str, Any]], slow: list[tuple[float, float]],
              window: tuple[float, float], rounds_s: float) -> None:
    """Print the stalls of each probe in the measured window and which of them overlap the slow actions."""
    t0, t1 = window
    span = [r for r in server if t0 <= r["t"] <= t1]
    kinds: dict[str, list[dict[str, Any]]] = {}
    for r in span:
        kinds.setdefault(r["kind"], []).append(r)
    commits = kinds.get("commit", [])
    trips = kinds.get("round_trip", [])
    print(f"\nstalls in the measured {rounds_s:.0f} s ({len(slow)} actions over {1000 * SLOW_S:.0f} ms):")
    if commits:
        secs = sorted(c["s"] for c in commits)
        ck = [c for c in commits if c["checkpoint"]]
        print(f"  commits {len(commits)}: in the db thread p50 {1000 * secs[len(secs) // 2]:.1f} ms, "
              f"p99 {1000 * secs[int(0.99 * len(secs))]:.1f} ms, max {1000 * secs[-1]:.1f} ms; "
              f"COMMIT alone max {1000 * max(c['commit_s'] for c in commits):.1f} ms; over 20 ms: "
              f"{sum(c['s'] > 0.02 for c in commits)}")
        if ck:
            each = ", ".join(f"{1000 * c['s']:.0f}" for c in ck)
            rest = max((c["s"] for c in commits if not c["checkpoint"]), default=0.0)
            print(f"  checkpoints in a commit {len(ck)}: {each} ms (their commits); other commits' max "
                  f"{1000 * rest:.1f} ms")
    if trips:
        ts = sorted(c["s"] for c in trips)
        print(f"  commit round trips from the loop: p50 {1000 * ts[len(ts) // 2]:.1f} ms, "
              f"p99 {1000 * ts[int(0.99 * len(ts))]:.1f} ms, max {1000 * ts[-1]:.1f} ms")
    for name in ("gc", "freeze"):
        rs = kinds.get(name, [])
        if rs:
            print(f"  {name} over 1 ms: {len(rs)}, total {1000 * sum(r['s'] for r in rs):.0f} ms, max "
                  f"{1000 * max(r['s'] for r in rs):.1f} ms (gen {max(rs, key=lambda r: r['s']).get('gen', '-')})")
    client_gc = [r for r in client if r["kind"] == "gc"]
    if client_gc:
        print(f"  client gc over 1 ms: {len(client_gc)}, total {1000 * sum(r['s'] for r in client_gc):.0f} ms, max "
              f"{1000 * max(r['s'] for r in client_gc):.1f} ms")
    for who in ("server", "client"):
        lags = [r for r in (server if who == "server" else client) if r["kind"] == "lag" and t0 <= r["t"] <= t1]
        if lags:
            print(f"  {who} loop late over 5 ms: {len(lags)} times, over 20 ms {sum(r['s'] > 0.02 for r in lags)}, "
                  f"max {1000 * max(r['s'] for r in lags):.0f} ms")
    cpu = kinds.get("cpu", [])
    if len(cpu) > 1:
        dt = cpu[-1]["t"] - cpu[0]["t"]
        shares = {k: (cpu[-1][k] - cpu[0][k]) / dt for k in cpu[-1] if k not in ("t", "kind") and k in cpu[0]}
        print("  server threads' CPU: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items()))
    # group the slow actions into bursts (a stall delays many at once) and name what overlaps each
    bursts: list[list[tuple[float, float]]] = []
    for s, e in sorted(slow):
        if bursts and s <= max(x[1] for x in bursts[-1]):
            bursts[-1].append((s, e))
        else:
            bursts.append([(s, e)])
    print(f"  slow actions in {len(bursts)} bursts:")
    for burst in bursts:
        s = min(x[0] for x in burst)
        e = max(x[1] for x in burst)
        found = []
        for c in overlaps(commits, s, e, lambda r: r["s"] > 0.015):
            found.append(f"commit {1000 * c['s']:.0f} ms (COMMIT {1000 * c['commit_s']:.0f}, "
                         f"{'checkpoint, ' if c['checkpoint'] else ''}{c['items']} writes)")
        for g in overlaps(kinds.get("gc", []) + kinds.get("freeze", []), s, e, lambda r: r["s"] > 0.005):
            found.append(f"{g['kind']} {1000 * g['s']:.0f} ms" + (f" gen {g['gen']}" if "gen" in g else ""))
        for g in overlaps(client_gc, s, e, lambda r: r["s"] > 0.005):
            found.append(f"client gc {1000 * g['s']:.0f} ms gen {g['gen']}")
        for who, recs in (("server", server), ("client", client)):
            lag = overlaps([r for r in recs if r["kind"] == "lag"], s - 0.01, e, lambda r: r["s"] > 0.015)
            if lag:
                found.append(f"{who} loop late {1000 * max(r['s'] for r in lag):.0f} ms")
        for st in overlaps([r for r in server if r["kind"] == "stack"], s, e, lambda r: True)[:2]:
            found.append("stuck in " + " < ".join(reversed(st["stack"][-4:])))
        print(f"    {t0 and s - t0:6.2f} s +{1000 * (e - s):4.0f} ms, {len(burst):4} actions, worst "
              f"{1000 * max(x[1] - x[0] for x in burst):4.0f} ms: {'; '.join(found) or 'nothing recorded'}")



def thread_shares(cpu: list[dict[str, Any]]) -> dict[str, float]:
    """Each thread's share of a core over the `cpu` records (from the first that names it to the last)."""
    shares = {}
    for name in {k for r in cpu for k in r} - {"t", "kind"}:
        seen = [r for r in cpu if name in r]
        if len(seen) > 1 and seen[-1]["t"] > seen[0]["t"]:
            shares[name] = (seen[-1][name] - seen[0][name]) / (seen[-1]["t"] - seen[0]["t"])
    return shares


STEPS = (("ack to turn", None, "t"), ("to a worker", "t", "worker"), ("search", "worker", "searched"),
         ("back to the loop", "searched", "resumed"), ("to the write", "resumed", "write"),
         ("write", "write", "written"), ("to sent", "written", "sent"), ("sent to seen", "sent", None))
"""A traced bot move's steps: name, from, to (None: the client's ack, or the client's receipt of the event)."""


def explain_moves(samples: list[tuple[float, float]], server: list[dict[str, Any]], client: list[dict[str, Any]],
                  worst: int = 3) -> list[str]:
    """Lines that say where the bot moves' time went: each step's p50 and max over the moves `samples` (the client's
    (ack, event) times) matched to the server's `bot_turn` traces, then the `worst` slowest moves step by step with
    the client's own collections and loop lateness that overlap them."""
    turns = sorted((r for r in server if r["kind"] == "bot_turn"), key=lambda r: r["sent"])
    matched: list[tuple[float, float, dict[str, Any]]] = []
    for ack, seen in samples:  # the last action written between the ack and its event reaching the client
        found = [r for r in turns if ack <= r.get("written", r["sent"]) <= seen]
        if found:
            matched.append((ack, seen, found[-1]))
    if not matched:
        return [f"  no traced bot moves matched ({len(samples)} moves, {len(turns)} traces)"]

    def step(ack: float, seen: float, trace: dict[str, Any], start: str | None, end: str | None) -> float:
        """One step's milliseconds (nan where the trace lacks a time)."""
        a = ack if start is None else trace.get(start)
        b = seen if end is None else trace.get(end)
        return 1000 * (b - a) if a is not None and b is not None else float("nan")

    lines = [f"  {len(matched)} of {len(samples)} moves traced; per step p50 / max ms: " + ", ".join(
        f"{name} {statistics.median(v):.1f} / {max(v):.1f}" for name, start, end in STEPS
        if (v := [step(a, s, tr, start, end) for a, s, tr in matched]))]
    window = (matched[0][0], matched[-1][1])
    gcs, lags = ([r["s"] for r in client if r["kind"] == kind and window[0] <= r["t"] <= window[1]]
                 for kind in ("gc", "lag"))
    if client:
        lines.append(f"  the honest clients' process while the moves were played: {len(gcs)} collections over 1 ms "
                     f"(max {1000 * max(gcs, default=0):.1f} ms), its loop late over 5 ms {len(lags)} times (max "
                     f"{1000 * max(lags, default=0):.0f} ms)")
    late = [r for r in server if r["kind"] == "lag" and window[0] <= r["t"] <= window[1] and r["s"] > 0.02]
    if late:
        total = sum(r["s"] + 0.005 for r in late)
        ran, waited = (100 * sum(r.get(k, 0) for r in late) / total for k in ("ran", "waited"))
        longest = 1000 * max(r["s"] for r in late)
        lines.append(f"  the server's loop late over 20 ms {len(late)} times (max {longest:.0f} ms); in those periods "
                     f"its thread ran {ran:.0f}% of the time and waited for a core {waited:.0f}%")
    shares = thread_shares([r for r in server if r["kind"] == "cpu" and window[0] <= r["t"] <= window[1]])
    if shares:
        lines.append("  the server's threads while the moves were played, share of a core: " + ", ".join(
            f"{name} {100 * share:.0f}%" for name, share in sorted(shares.items(), key=lambda kv: -kv[1])
            if share >= 0.005))
    cpu = [1000 * tr["cpu"] for _, _, tr in matched if "cpu" in tr]
    delay = [1000 * tr["delay"] for _, _, tr in matched if "delay" in tr]
    if cpu and delay:
        lines.append(f"  the search thread a move: ran p50 {statistics.median(cpu):.1f} ms, max {max(cpu):.1f} ms; "
                     f"waited for a core p50 {statistics.median(delay):.1f} ms, max {max(delay):.1f} ms")
    for ack, seen, trace in sorted(matched, key=lambda m: m[0] - m[1])[:worst]:
        gcs = overlaps([r for r in client if r["kind"] == "gc"], ack, seen, lambda r: True)
        lags = overlaps([r for r in client if r["kind"] == "lag"], ack, seen, lambda r: True)
        own = (f"; client gc {sum(1000 * g['s'] for g in gcs):.0f} ms" if gcs else "") + (
            f"; client loop late {max(1000 * g['s'] for g in lags):.0f} ms" if lags else "")
        lines.append(f"  slow move {1000 * (seen - ack):.0f} ms: " + ", ".join(
            f"{name} {step(ack, seen, trace, start, end):.1f}" for name, start, end in STEPS)
            + f" (the search thread ran {1000 * trace.get('cpu', float('nan')):.1f} ms and waited for a core "
              f"{1000 * trace.get('delay', float('nan')):.1f} ms, {trace.get('thread', '?')})" + own)
    return lines

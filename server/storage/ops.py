"""What a write is made of, whatever the backend: statements by kind, and the plan that batches them.

An `Op` is `(kind, params)`: the kind names a statement (`"action"`, `"finish"`, ...) and every
backend has its own SQL for each kind, so the arena never sees SQL.
"""

from __future__ import annotations

from typing import Any

Op = tuple[str, tuple[Any, ...]]
"""A statement kind (one of `PHASES`) and its parameters, in the order every backend's SQL takes them."""


# Statement kinds in the order a batch runs them. Within one write the statements already come
# in this order (a match is created before it is joined, an action stored before the end it
# causes), and writes of one batch never depend on each other, so a batch can run each kind
# as one `executemany`: a few calls per commit instead of one per row, which matters because
# every call hands the GIL back and forth with the busy event loop (SQLite) or is a round trip
# (PostgreSQL). Rows of one kind keep the order their writes came in.
PHASES = ("guard", "player", "create", "own", "join", "action", "finish", "rating", "cancel", "disown", "quarantine",
          "set_aside", "forfeit", "event", "event_own", "entrant", "entrant_seed", "entrant_out", "event_status",
          "event_version", "pairing", "pairing_result", "event_disown", "ban", "unban", "rename", "close_player",
          "unrate", "audit")
_PHASE = {kind: index for index, kind in enumerate(PHASES)}


def plan_batch(items: list[list[Op]]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements of many writes grouped into one `executemany` per kind, in phase order."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for ops in items:
        for kind, params in ops:
            groups.setdefault(kind, []).append(params)
    return sorted(groups.items(), key=lambda group: _PHASE.get(group[0], len(PHASES)))

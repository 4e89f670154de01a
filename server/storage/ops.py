"""What a write is made of, whatever the backend: statements by kind, and the plan that batches them.

An `Op` is `(kind, params)`: the kind (an `OpKind`: `OpKind.ACTION`, `OpKind.FINISH`, ...) names a statement and every
backend has its own SQL for each kind, so the arena never sees SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class OpKind(StrEnum):
    """The kind of statement an `Op` is: every backend has one statement of its own for each.

    Members are listed in the order a batch runs them. Within one write the statements already come
    in this order (a match is created before it is joined, an action stored before the end it
    causes), and writes of one batch never depend on each other, so a batch can run each kind
    as one `executemany`: a few calls per commit instead of one per row, which matters because
    every call hands the GIL back and forth with the busy event loop (SQLite) or is a round trip
    (PostgreSQL). Rows of one kind keep the order their writes came in.
    """

    GUARD_SWEEP = "guard_sweep"
    GUARD_LAPSED = "guard_lapsed"
    GUARD = "guard"
    PLAYER = "player"
    CREATE = "create"
    OWN = "own"
    JOIN = "join"
    ACTION = "action"
    FINISH = "finish"
    RATING = "rating"
    EXPLORE = "explore"
    CANCEL = "cancel"
    DISOWN = "disown"
    QUARANTINE = "quarantine"
    SET_ASIDE = "set_aside"
    FORFEIT = "forfeit"
    EVENT = "event"
    EVENT_OWN = "event_own"
    ENTRANT = "entrant"
    ENTRANT_SEED = "entrant_seed"
    ENTRANT_OUT = "entrant_out"
    EVENT_STATUS = "event_status"
    EVENT_VERSION = "event_version"
    PAIRING = "pairing"
    PAIRING_RESULT = "pairing_result"
    EVENT_DISOWN = "event_disown"
    BAN = "ban"
    UNBAN = "unban"
    RENAME = "rename"
    CLOSE_PLAYER = "close_player"
    UNRATE = "unrate"
    AUDIT = "audit"
    CREDENTIAL = "credential"
    CREDENTIAL_USED = "credential_used"
    ACCOUNT_SESSION = "account_session"
    SESSION_SEEN = "session_seen"
    SESSION_END = "session_end"
    SESSIONS_END = "sessions_end"
    REVIEW = "review"
    REVIEW_REDONE = "review_redone"
    PUZZLE_ATTEMPT = "puzzle_attempt"
    PUZZLE_RATING = "puzzle_rating"
    PUZZLER_RATING = "puzzler_rating"
    CHALLENGE = "challenge"
    CHALLENGE_DROP = "challenge_drop"
    PASSKEY_USED = "passkey_used"
    PASSKEY_REMOVE = "passkey_remove"


Op = tuple[OpKind, tuple[Any, ...]]
"""A statement kind and its parameters, in the order every backend's SQL takes them."""

PHASES: tuple[OpKind, ...] = tuple(OpKind)
"""Every kind, in the order a batch runs them."""
_PHASE: dict[OpKind, int] = {kind: index for index, kind in enumerate(PHASES)}


def plan_batch(items: Sequence[Sequence[Op]]) -> list[tuple[OpKind, list[tuple[Any, ...]]]]:
    """The statements of many writes grouped into one `executemany` per kind, in phase order (a kind no backend
    knows after every one it does, first seen first)."""
    groups: dict[OpKind, list[tuple[Any, ...]]] = {}
    for ops in items:
        for kind, params in ops:
            groups.setdefault(kind, []).append(params)
    return sorted(groups.items(), key=lambda group: _PHASE.get(group[0], len(PHASES)))

"""Moderation in the database: bans, the audit of every act, and the writes on players and matches they make.

One SQL for both backends (`?` placeholders; PostgreSQL numbers them), as for events. The bans
table is the truth every node reads; the audit table is append-only and numbered, so a node can
read the acts made elsewhere since the last one it saw.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from protocol.names import name_key
from server.storage.ops import Op, OpKind
from server.storage.writer import Storage

BanKind = Literal["player", "address", "event"]
"""What a ban covers: a player, a network address, or an event the operator hid (left out of every list)."""

MODERATION_SQL: dict[OpKind, str] = {
    OpKind.BAN: "INSERT INTO bans (kind, target, reason, actor, at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (kind, target) DO UPDATE SET reason = excluded.reason, actor = excluded.actor,"
                " at = excluded.at",
    OpKind.UNBAN: "DELETE FROM bans WHERE kind = ? AND target = ?",
    OpKind.AUDIT: "INSERT INTO audit (at, actor, action, target, reason) VALUES (?, ?, ?, ?, ?)",
    OpKind.RENAME: "UPDATE players SET name = ?, name_key = ? WHERE id = ?",
    OpKind.CLOSE_PLAYER: "UPDATE players SET token_hash = NULL WHERE id = ?",
    OpKind.UNRATE: "UPDATE matches SET rated = ? WHERE id = ?",
}
"""The statement of each moderation `Op` kind."""

PLAYER_NAMED = "SELECT id FROM players WHERE name_key = ?"
"""The player holding a name in canonical form (UNIQUE: one at most)."""
BANS = "SELECT kind, target, reason, actor, at FROM bans ORDER BY at, kind, target"
AUDIT_SINCE = "SELECT id, at, actor, action, target, reason FROM audit WHERE id > ? ORDER BY id"
AUDIT_RECENT = "SELECT id, at, actor, action, target, reason FROM audit ORDER BY id DESC LIMIT ?"
LAST_AUDIT = "SELECT coalesce(max(id), 0) FROM audit"


@dataclass(frozen=True)
class Ban:
    """A stored ban: a player id or a network address, why, by whom, since when."""

    kind: str
    target: str
    reason: str
    actor: str
    at: float


@dataclass(frozen=True)
class AuditEntry:
    """One moderation act: its number, when, who, what, on whom, why."""

    number: int
    at: float
    actor: str
    action: str
    target: str
    reason: str


def op_ban(kind: BanKind, target: str, reason: str, actor: str) -> Op:
    """Store (or renew) a ban."""
    return (OpKind.BAN, (kind, target, reason, actor, time.time()))


def op_unban(kind: BanKind, target: str) -> Op:
    """Lift a ban."""
    return (OpKind.UNBAN, (kind, target))


def op_audit(actor: str, action: str, target: str, reason: str) -> Op:
    """Note one moderation act."""
    return (OpKind.AUDIT, (time.time(), actor, action, target, reason))


def op_rename(player_id: str, name: str) -> Op:
    """Give a player a new name (unique in its canonical form, as every name)."""
    return (OpKind.RENAME, (name, name_key(name), player_id))


def op_close_player(player_id: str) -> Op:
    """Revoke a player's token for good: no one can say hello as it again."""
    return (OpKind.CLOSE_PLAYER, (player_id,))


def op_unrate(match_id: str) -> Op:
    """Mark a match unrated (an aborted one)."""
    return (OpKind.UNRATE, (False, match_id))


def _audit(row: Sequence[Any]) -> AuditEntry:
    """An audit row as a value."""
    return AuditEntry(int(row[0]), float(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]))


async def read_bans(storage: Storage) -> list[Ban]:
    """Every ban, oldest first."""
    return [Ban(str(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4])) for r in await storage.fetch_rows(BANS)]


async def read_audit_since(storage: Storage, number: int) -> list[AuditEntry]:
    """The acts audited after act `number`, in order."""
    return [_audit(r) for r in await storage.fetch_rows(AUDIT_SINCE, number)]


async def read_audit_recent(storage: Storage, limit: int) -> list[AuditEntry]:
    """The latest `limit` acts, newest first."""
    return [_audit(r) for r in await storage.fetch_rows(AUDIT_RECENT, limit)]


async def player_id_named(storage: Storage, name: str) -> str | None:
    """The id of the stored player holding `name` (compared in canonical form), if any."""
    rows = await storage.fetch_rows(PLAYER_NAMED, name_key(name))
    return str(rows[0][0]) if rows else None


async def last_audit(storage: Storage) -> int:
    """The number of the latest audited act (0: none)."""
    rows = await storage.fetch_rows(LAST_AUDIT)
    return int(rows[0][0])

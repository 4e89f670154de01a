"""Passkeys in the database (schema version 16): each account's passkeys and the pending WebAuthn challenges.

A passkey is a `credentials` row of kind `passkey` (see `server.storage.accounts`): its id is `pk-<player>-<the
authenticator's credential id, base64url>` (scoped by the account, so no one can register a credential id that
replaces another account's), `secret` its public key (COSE, base64url), `detail` its sign counter, `used_at` its
last sign-in. `passkey_challenges` holds each ceremony begun and not yet finished: the challenge, what it is for
(`register`: bound to the session that asked, `sign_in`: bound to that attempt's id), the relying party id and the
page's origin, and when it expires. Every node reads them here, so a ceremony begun on one node of a cluster
finishes on another; a finish claims the challenge in `guards` (a second claim, on any node, fails) and deletes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from server.storage.ops import Op, OpKind
from server.storage.writer import Storage

Purpose = Literal["register", "sign_in"]

PASSKEY_SQL: dict[OpKind, str] = {
    OpKind.CHALLENGE: "INSERT INTO passkey_challenges (id, challenge, purpose, session_id, rp_id, origin, expires_at)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?)",
    OpKind.CHALLENGE_DROP: "DELETE FROM passkey_challenges WHERE id = ? OR expires_at < ?",
    OpKind.PASSKEY_USED: "UPDATE credentials SET detail = ?, used_at = ? WHERE id = ? AND kind = 'passkey'",
    OpKind.PASSKEY_REMOVE: "DELETE FROM credentials WHERE id = ? AND player_id = ? AND kind = 'passkey'",
}
"""The statement of each passkey `Op` kind, with `?` placeholders (PostgreSQL numbers them)."""

ONE_CHALLENGE = ("SELECT id, challenge, purpose, session_id, rp_id, origin, expires_at FROM passkey_challenges"
                 " WHERE id = ?")


@dataclass(frozen=True)
class Challenge:
    """A pending ceremony: its id, challenge (base64url), purpose, the session it is bound to (registration), the
    relying party id and origin it was made for, and when it expires (wall-clock seconds)."""

    challenge_id: str
    challenge: str
    purpose: str
    session_id: str
    rp_id: str
    origin: str
    expires_at: float


def passkey_id(player_id: str, credential_id: str) -> str:
    """The `credentials` row id of an account's passkey (its credential id in base64url)."""
    return f"pk-{player_id}-{credential_id}"


def op_challenge(c: Challenge) -> Op:
    """Store a pending ceremony's challenge."""
    return (OpKind.CHALLENGE, (c.challenge_id, c.challenge, c.purpose, c.session_id, c.rp_id, c.origin, c.expires_at))


def op_challenge_drop(challenge_id: str, now: float) -> Op:
    """Delete a challenge (used) and every expired one."""
    return (OpKind.CHALLENGE_DROP, (challenge_id, now))


def op_passkey_used(row_id: str, sign_count: int, at: float) -> Op:
    """A passkey signed in: its new counter and when."""
    return (OpKind.PASSKEY_USED, (str(sign_count), at, row_id))


def op_passkey_remove(row_id: str, player_id: str) -> Op:
    """Remove one of an account's passkeys."""
    return (OpKind.PASSKEY_REMOVE, (row_id, player_id))


def _challenge(row: Sequence[Any]) -> Challenge:
    """A challenge row as a value."""
    return Challenge(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]), float(row[6]))


async def read_challenge(storage: Storage, challenge_id: str) -> Challenge | None:
    """One pending challenge (expired or not), or None."""
    rows = await storage.fetch_rows(ONE_CHALLENGE, challenge_id)
    return _challenge(rows[0]) if rows else None

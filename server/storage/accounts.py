"""Accounts in the database: credentials and sessions (schema version 14), one SQL for both backends.

`credentials` holds what proves an account: its password (`password`: an argon2id hash, one row,
id `pw-<player>`), its one-time recovery codes (`recovery`, and the operator's `reset`: the SHA-256 of
each code, `used_at` set once used), and its passkeys (`passkey`: the public key, `detail` its
counter). `account_sessions` holds each sign-in: the SHA-256 of its secret (never the secret), the
client, the address, when it began, was last seen and ended. A session whose `ended_at` is set is
refused everywhere from the moment it is stored: every node reads sessions from here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from server.storage.ops import Op, OpKind
from server.storage.writer import Storage

CredentialKind = Literal["password", "recovery", "reset", "passkey"]

ACCOUNT_SQL: dict[OpKind, str] = {
    OpKind.CREDENTIAL: "INSERT INTO credentials (id, player_id, kind, secret, detail, created_at, used_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (id) DO UPDATE SET secret = excluded.secret,"
                       " detail = excluded.detail, created_at = excluded.created_at, used_at = NULL",
    OpKind.CREDENTIAL_USED: "UPDATE credentials SET used_at = ? WHERE id = ?",
    OpKind.ACCOUNT_SESSION: "INSERT INTO account_sessions (id, player_id, token_hash, client, address, created_at,"
                            " seen_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
    OpKind.SESSION_SEEN: "UPDATE account_sessions SET seen_at = ? WHERE id = ?",
    OpKind.SESSION_END: "UPDATE account_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
    OpKind.SESSIONS_END: "UPDATE account_sessions SET ended_at = ? WHERE player_id = ? AND id <> ?"
                         " AND ended_at IS NULL",
}
"""The statement of each account `Op` kind, with `?` placeholders (PostgreSQL numbers them)."""

CREDENTIALS = ("SELECT id, player_id, kind, secret, detail, created_at, used_at FROM credentials"
               " WHERE player_id = ? AND kind = ? ORDER BY created_at, id")
SESSION_ROW = "SELECT id, player_id, token_hash, client, address, created_at, seen_at, ended_at FROM account_sessions"
ONE_SESSION = f"{SESSION_ROW} WHERE id = ?"
OPEN_SESSIONS = f"{SESSION_ROW} WHERE player_id = ? AND ended_at IS NULL ORDER BY created_at DESC, id LIMIT ?"
MAX_SESSIONS_LISTED = 200
"""The most sessions a listing holds (the newest)."""


@dataclass(frozen=True)
class Credential:
    """One stored credential of an account."""

    credential_id: str
    player_id: str
    kind: str
    secret: str
    detail: str
    created_at: float
    used_at: float | None


@dataclass(frozen=True)
class AccountSession:
    """One stored sign-in: its id, account, secret's hash, client, address and times (ended: None if open)."""

    session_id: str
    player_id: str
    token_hash: str
    client: str
    address: str
    created_at: float
    seen_at: float
    ended_at: float | None


def password_id(player_id: str) -> str:
    """The id of an account's password row (one per account)."""
    return f"pw-{player_id}"


def op_credential(credential_id: str, player_id: str, kind: CredentialKind, secret: str, detail: str = "") -> Op:
    """Store a credential (or replace the one with its id: a new password)."""
    return (OpKind.CREDENTIAL, (credential_id, player_id, kind, secret, detail, time.time()))


def op_credential_used(credential_id: str) -> Op:
    """Mark a one-time code used (its second use is refused)."""
    return (OpKind.CREDENTIAL_USED, (time.time(), credential_id))


def op_session(session: AccountSession) -> Op:
    """Store a new session."""
    s = session
    return (OpKind.ACCOUNT_SESSION, (s.session_id, s.player_id, s.token_hash, s.client, s.address, s.created_at,
                                     s.seen_at))


def op_session_seen(session_id: str, at: float) -> Op:
    """Note when a session was last seen (a hello with it)."""
    return (OpKind.SESSION_SEEN, (at, session_id))


def op_session_end(session_id: str) -> Op:
    """End one session."""
    return (OpKind.SESSION_END, (time.time(), session_id))


def op_sessions_end(player_id: str, keep: str = "") -> Op:
    """End every open session of an account but `keep` (none kept: every one)."""
    return (OpKind.SESSIONS_END, (time.time(), player_id, keep))


def _credential(row: Sequence[Any]) -> Credential:
    """A credential row as a value."""
    return Credential(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), float(row[5]),
                      None if row[6] is None else float(row[6]))


def _session(row: Sequence[Any]) -> AccountSession:
    """A session row as a value."""
    return AccountSession(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), float(row[5]),
                          float(row[6]), None if row[7] is None else float(row[7]))


async def read_credentials(storage: Storage, player_id: str, kind: CredentialKind) -> list[Credential]:
    """An account's credentials of one kind, oldest first."""
    return [_credential(r) for r in await storage.fetch_rows(CREDENTIALS, player_id, kind)]


async def read_session(storage: Storage, session_id: str) -> AccountSession | None:
    """One session (open or ended), or None."""
    rows = await storage.fetch_rows(ONE_SESSION, session_id)
    return _session(rows[0]) if rows else None


async def read_open_sessions(storage: Storage, player_id: str) -> list[AccountSession]:
    """An account's open sessions, newest first (at most `MAX_SESSIONS_LISTED`)."""
    return [_session(r) for r in await storage.fetch_rows(OPEN_SESSIONS, player_id, MAX_SESSIONS_LISTED)]

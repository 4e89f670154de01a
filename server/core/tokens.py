"""Random ids (of players, matches, tournaments, nodes) and players' secret tokens (stored only as hashes, checked
in constant time).

A token is the player id followed by a random secret, so a hello with a token finds its
player by id and compares the token's hash with `hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ID_LENGTH = 12


def new_id(prefix: str) -> str:
    """A fresh random id: `prefix` and hex digits, `ID_LENGTH` characters in all."""
    return prefix + secrets.token_hex(ID_LENGTH)[: ID_LENGTH - len(prefix)]


def new_token(player_id: str) -> str:
    """A new secret token for `player_id` (the id, then 43 random URL-safe characters)."""
    return player_id + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The stored form of a token: its SHA-256 in hex (tokens are random, so no salt is needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


def player_of_token(token: str) -> str:
    """The player id a token claims to belong to."""
    return token[:ID_LENGTH]


def token_matches(token: str, stored_hash: str | None) -> bool:
    """Whether `token` hashes to `stored_hash`, compared in constant time."""
    if stored_hash is None:
        return False
    return hmac.compare_digest(hash_token(token).encode(), stored_hash.encode())


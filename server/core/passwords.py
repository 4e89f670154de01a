"""Passwords as argon2id hashes (argon2-cffi), hashed off the event loop, a few at a time.

`Passwords` hashes a new password, checks one against its stored hash, and says when a stored hash
was made with other parameters than today's (it is then hashed again at the next sign-in). A name
that is no account is checked against a dummy hash with the same parameters (written, not computed: a
random salt and digest, so start-up pays no hash), so an unknown name costs what a wrong password
costs. The parameters are in docs/operations.md.
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass
from typing import Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


@dataclass(frozen=True)
class PasswordCost:
    """argon2id's parameters: passes, memory (KiB), lanes (RFC 9106's second recommended set by default)."""

    time_cost: int = 3
    memory_kib: int = 65_536
    parallelism: int = 4


class Hasher(Protocol):
    """What the accounts ask of a password hash: make one, check one, and whether one is out of date."""

    def hash(self, password: str) -> str:
        """A new salted hash of `password`."""

    def verify(self, stored: str, password: str) -> bool:
        """Whether `password` matches `stored`."""

    def needs_rehash(self, stored: str) -> bool:
        """Whether `stored` was made with other parameters than today's."""

    def unmatched(self) -> str:
        """A hash with today's parameters that no password matches, made without hashing: checking a password
        against it costs what checking one against a real hash costs."""


class Argon2Hasher:
    """argon2id through argon2-cffi."""

    def __init__(self, cost: PasswordCost) -> None:
        self._hasher = PasswordHasher(time_cost=cost.time_cost, memory_cost=cost.memory_kib,
                                      parallelism=cost.parallelism)

    def hash(self, password: str) -> str:
        """A new salted argon2id hash."""
        return self._hasher.hash(password)

    def verify(self, stored: str, password: str) -> bool:
        """Whether `password` matches `stored` (a damaged hash matches nothing)."""
        try:
            return self._hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        """Whether `stored` has other parameters than this hasher's."""
        try:
            return self._hasher.check_needs_rehash(stored)
        except (InvalidHashError, ValueError):
            return True

    def unmatched(self) -> str:
        """An argon2id hash in the standard encoding with this hasher's parameters and lengths, its salt and digest
        random (verifying against it runs the full argon2id computation, then fails the comparison)."""
        h = self._hasher
        salt, digest = (_b64(os.urandom(n)) for n in (h.salt_len, h.hash_len))
        return f"$argon2id$v=19$m={h.memory_cost},t={h.time_cost},p={h.parallelism}${salt}${digest}"


def _b64(raw: bytes) -> str:
    """Base64 without padding, as the argon2 encoding writes salts and digests."""
    return base64.b64encode(raw).decode().rstrip("=")


MAX_HASHING = 2
"""Hashes computed at once (each takes `memory_kib` of memory and a core for a while)."""


class Passwords:
    """Hashing and checking passwords in worker threads, at most `MAX_HASHING` at once."""

    def __init__(self, hasher: Hasher, max_hashing: int = MAX_HASHING) -> None:
        self.hasher = hasher
        self._slots = asyncio.Semaphore(max_hashing)
        self._dummy = hasher.unmatched()
        """What an unknown name's password is checked against (today's parameters; making it costs no hash)."""

    async def hash(self, password: str) -> str:
        """A new hash of `password`."""
        async with self._slots:
            return await asyncio.to_thread(self.hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> bool:
        """Whether `password` matches `stored`; with no stored hash (no such account), a dummy one is checked
        instead, so that the answer takes as long, and False is returned."""
        if stored is None:
            async with self._slots:
                await asyncio.to_thread(self.hasher.verify, self._dummy, password)
            return False
        async with self._slots:
            return await asyncio.to_thread(self.hasher.verify, stored, password)

    def needs_rehash(self, stored: str) -> bool:
        """Whether a stored hash should be made again with today's parameters."""
        return self.hasher.needs_rehash(stored)

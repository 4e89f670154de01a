"""Passwords as argon2id hashes (argon2-cffi), hashed off the event loop, a few at a time.

`Passwords` hashes a new password, checks one against its stored hash, and says when a stored hash
was made with other parameters than today's (it is then hashed again at the next sign-in). A name
that is no account is checked against a dummy hash made with the same parameters, so an unknown
name costs what a wrong password costs. The parameters are in docs/operations.md.
"""

from __future__ import annotations

import asyncio
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


MAX_HASHING = 2
"""Hashes computed at once (each takes `memory_kib` of memory and a core for a while)."""
DUMMY_PASSWORD = "not-a-password-of-anyone"


class Passwords:
    """Hashing and checking passwords in worker threads, at most `MAX_HASHING` at once."""

    def __init__(self, hasher: Hasher, max_hashing: int = MAX_HASHING) -> None:
        self.hasher = hasher
        self._slots = asyncio.Semaphore(max_hashing)
        self._dummy = hasher.hash(DUMMY_PASSWORD)
        """What an unknown name's password is checked against (made once, with today's parameters)."""

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

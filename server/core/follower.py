"""Who the core reaches: a follower of matches and tournaments (a websocket session, an outside engine's session).

The core knows no transport. It hands a follower messages (`send`) or texts encoded once for many
(`deliver`, an `Outgoing`), and the follower's transport puts them on its own wire: a websocket
session frames an `Outgoing` once for all its followers; an engine's session only wakes its driver.
"""

from __future__ import annotations

from typing import Protocol

from protocol.messages import ErrorMessage, Message


class Outgoing:
    """Messages encoded once for many followers; a transport keeps its own form of them beside (framed once)."""

    __slots__ = ("texts", "wire")

    def __init__(self, texts: list[bytes]) -> None:
        self.texts = texts
        self.wire: list[bytes] | None = None
        """The texts in the transport's own form, made by the first follower that needs it and kept for the rest."""


class Follower(Protocol):
    """A connection the core sends to: who it is, what it follows, and how it is sent to."""

    @property
    def player_id(self) -> str | None:
        """The identity it said hello as (None before hello)."""

    name: str | None
    """The name of that identity (renamed by the operator while connected)."""

    @property
    def following(self) -> set[str]:
        """The matches it follows (kept by the rooms it follows)."""

    @property
    def remote_host(self) -> str:
        """Its network address (the unit of per-address quotas)."""

    def send(self, msg: Message) -> None:
        """Queue one message without waiting."""

    def dismiss(self, error: ErrorMessage, reason: str) -> None:
        """Send a last error and close the connection (`reason`: why, for the transport's close)."""

    def deliver(self, out: Outgoing, first: bytes | None = None) -> bool:
        """Queue texts encoded for many (with `first`, an encoded text of its own, ahead of them) without waiting;
        False if the follower stopped reading and was dropped."""

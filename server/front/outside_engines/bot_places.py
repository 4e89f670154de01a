"""The places for games of the gateway's agents against hosted bots: how many run at once, in all and per address,
and which agents wait for one (each such game costs a bot's thinking time on the server's worker threads)."""

from __future__ import annotations

from collections import Counter

from server.front.outside_engines.agent import Agent


class BotPlaces:
    """Games against hosted bots running, per address and in all, and the agents due one that wait, oldest first."""

    def __init__(self, in_all: int, per_address: int) -> None:
        self.in_all = in_all
        self.per_address = per_address
        self.playing: Counter[str] = Counter()
        """Games running: per address, and `""` for all together."""
        self.waiting: dict[Agent, str] = {}
        """Agents due a game against a hosted bot (the bot chosen) while no place is free for them, oldest first."""

    def full(self) -> bool:
        """Whether every place of the server is taken."""
        return self.playing[""] >= self.in_all

    def refusal(self, address: str) -> str | None:
        """Why an agent of `address` may not start a game against a hosted bot now, if so."""
        if self.full():
            return f"all places for games against hosted bots are taken ({self.in_all} at once)"
        if self.playing[address] >= self.per_address:
            return f"your address plays {self.per_address} games against hosted bots at once already"
        return None

    def take(self, address: str) -> None:
        """A game of an agent of `address` against a hosted bot starts."""
        self.playing[""] += 1
        self.playing[address] += 1

    def free(self, address: str) -> None:
        """A game of an agent of `address` against a hosted bot ended."""
        for where in ("", address):
            self.playing[where] -= 1
            if not self.playing[where]:
                del self.playing[where]

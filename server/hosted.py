"""Hosted bots: `bots/` players run by the server, off the event loop and within the clock."""

from __future__ import annotations

import asyncio
import importlib
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from protocol.actions import Action
from protocol.position import Position
from protocol.variant import TimeControl
from server.errors import UnknownBotError


class Player(Protocol):
    """The interface of `bots.players`: choose an action within a time budget."""

    async def choose(self, position: Position, budget_s: float) -> Action:
        """The action to play in `position`, decided within about `budget_s` seconds."""
        ...


PlayerFactory = Callable[[str], Player]
DEFAULT_BUDGET_S = 1.0


def default_factory(name: str) -> Player:
    """A player from `bots.players.make_player`; raises `UnknownBotError` for unknown names."""
    try:
        module = importlib.import_module("bots.players")
    except ImportError:
        raise UnknownBotError("this server has no hosted bots installed") from None
    try:
        player: Player = module.make_player(name)
    except (ValueError, KeyError) as exc:
        raise UnknownBotError(str(exc)) from None
    return player


def budget(control: TimeControl | None, left_ms: int) -> float:
    """Seconds a bot may think with `left_ms` on its clock, keeping a safety margin."""
    if control is None:
        return DEFAULT_BUDGET_S
    if control.per_move_ms:
        return max(0.01, min(DEFAULT_BUDGET_S, control.per_move_ms / 1000 * 0.5))
    share = left_ms / 1000 / 30 + control.increment_ms / 1000 * 0.5
    return max(0.01, min(DEFAULT_BUDGET_S, share, left_ms / 1000 * 0.5))


class BotRunner:
    """Runs bots' `choose` in worker threads, each with its own event loop, never on the server's."""

    def __init__(self, factory: PlayerFactory | None = None, workers: int = 2) -> None:
        self.factory = factory or default_factory
        self._players: dict[str, Player] = {}
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hosted-bot")

    def check(self, name: str) -> None:
        """Raise `UnknownBotError` unless `name` is a bot this server can run."""
        self._player(name)

    def _player(self, name: str) -> Player:
        """The (cached) player named `name`."""
        if name not in self._players:
            try:
                self._players[name] = self.factory(name)
            except UnknownBotError:
                raise
            except Exception as exc:
                raise UnknownBotError(f"unknown bot {name!r}: {exc}") from None
        return self._players[name]

    async def choose(self, name: str, position: Position, budget_s: float) -> Action:
        """The bot's action, decided off the event loop; a random legal one if it fails or is late."""
        player = self._player(name)
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._pool, lambda: asyncio.run(player.choose(position, budget_s)))
        try:
            action = await asyncio.wait_for(work, timeout=budget_s * 1.5 + 0.5)
        except Exception:
            action = None
        legal = position.legal_actions()
        return action if action in legal else random.choice(legal)

    def close(self) -> None:
        """Stop the worker threads (a running search is left to finish on its own)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

"""Test helpers for the client: an app hosting one screen with no network, recording what it sends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from client.styles import STYLESHEET
from client.ui_messages import Outgoing
from protocol import Game, Variant
from protocol.messages import Clocks, Message, Snapshot


class ScreenHost(App[None]):
    """Shows one screen; messages the screen asks to send are kept in `sent`."""

    CSS_PATH = STYLESHEET

    def __init__(self, screen: Screen[None], light: bool = False) -> None:
        super().__init__()
        self.first = screen
        self.light = light
        self.sent: list[Message] = []

    def on_mount(self) -> None:
        """Show the hosted screen."""
        self.theme = "textual-light" if self.light else "textual-dark"
        self.push_screen(self.first)

    def on_outgoing(self, event: Outgoing) -> None:
        """Record instead of sending."""
        self.sent.append(event.msg)


S = TypeVar("S", bound=Screen[Any])


def shown(app: App[Any], kind: type[S]) -> S | None:
    """The screen on top if it is a `kind` that has been composed and mounted (its widgets can be queried)."""
    screen = app.screen
    return screen if isinstance(screen, kind) and screen.is_mounted else None


async def until(pilot: Pilot[None], cond: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until `cond()` holds; fail after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for the client")
        await pilot.pause(0.02)


def make_snapshot(record: str, variant: str = "kalah(6,4)", you: str | None = "south", *,
                  status: str = "live", clocks: Clocks | None = None, spectators: int = 0,
                  seq: int | None = None, **extra: object) -> Snapshot:
    """A snapshot of match `m1` (ann South, bob North) after `record`."""
    game = Game.from_record(Variant.parse(variant), record)
    return Snapshot.model_validate({
        "match_id": "m1", "seq": len(game.actions) + 2 if seq is None else seq, "variant": variant,
        "south": "ann", "north": "bob", "you": you, "status": status, "record": record.split(),
        "position": game.position.fen(), "clocks": clocks or Clocks(), "spectators": spectators, **extra,
    }, strict=False)

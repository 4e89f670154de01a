"""`kalah puzzle` in the terminal: a small Textual application around the puzzle screen.

From a server it keeps one connection (`client.connection`, the identity remembered as by `kalah
play`, so answers are rated for the same player each time); offline it is handed the stored
puzzles and answers them here, unrated.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType

from client.connection import Connection
from client.identities import load_token, save_token, server_keys
from client.puzzle_desk import ServerDesk, StoredDesk
from client.screens.puzzle import PuzzleScreen
from client.styles import STYLESHEET
from protocol.messages import Message, ServerMessage, Welcome
from protocol.puzzle_messages import PuzzleInfo


@dataclass
class PuzzleLaunch:
    """Where the puzzles come from and which to show first."""

    url: str | None = None
    """The server (None: the `stored` puzzles, offline)."""
    stored: tuple[PuzzleInfo, ...] = ()
    name: str = "player"
    session: str | None = None
    identity_file: Path | None = None
    variant: str | None = None
    puzzle_id: str | None = None
    light: bool = False


class PuzzleApp(App[None]):
    """Puzzles with proved answers, one screen."""

    TITLE = "Kalah Arena: puzzles"
    CSS_PATH = STYLESHEET
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(self, launch: PuzzleLaunch) -> None:
        super().__init__()
        self.launch = launch
        self.connection: Connection | None = None
        self.failure: str | None = None
        """Why the session ended early (no server, a refused name), printed by the command."""
        if launch.url is None:
            self.desk: ServerDesk | StoredDesk = StoredDesk(list(launch.stored))
        else:
            self.desk = ServerDesk(self.send)

    def on_mount(self) -> None:
        """Connect (from a server), then show the first puzzle."""
        self.theme = "textual-light" if self.launch.light else "textual-dark"
        if self.launch.url is not None:
            self.run_network(self.launch.url)
        self.push_screen(PuzzleScreen(self.desk, self.launch.variant, self.launch.puzzle_id))

    @work(group="network")
    async def run_network(self, url: str) -> None:
        """Keep the connection up; end the session saying why if the server cannot be reached."""
        self.connection = Connection(url, self.launch.name, session=self.launch.session,
                                     on_message=self._received, on_status=lambda ok, detail: None,
                                     find_token=self._remembered, guest=True)
        failure = await self.connection.run()
        if failure is not None:
            self.failure = failure
            self.exit()

    def _received(self, msg: ServerMessage) -> None:
        """A server message: a welcome's token is remembered, the rest goes to the desk."""
        if isinstance(msg, Welcome):
            if msg.token is not None and self.launch.identity_file is not None and self.connection is not None \
                    and self.connection.guest_instead is None:
                with contextlib.suppress(OSError):
                    save_token(self.launch.identity_file, self._keys(self.connection.store), msg.name, msg.token)
            return
        if isinstance(self.desk, ServerDesk):
            self.desk.received(msg)

    def _keys(self, store: str | None) -> list[str]:
        """Where this server's identities are filed."""
        return server_keys(self.launch.url, store, None)

    def _remembered(self, store: str | None, name: str) -> str | None:
        """The token remembered for `name` on this server, if any."""
        if self.launch.identity_file is None:
            return None
        return load_token(self.launch.identity_file, self._keys(store), name)

    def send(self, msg: Message) -> None:
        """Send one message on the connection (once it is up)."""
        self.run_send(msg)

    @work(group="send")
    async def run_send(self, msg: Message) -> None:
        """Wait for the connection, then send."""
        for _ in range(300):
            if self.connection is not None and self.connection.connected:
                await self.connection.send(msg)
                return
            await asyncio.sleep(0.05)

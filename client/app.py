"""The Textual application: routes server traffic down to screens and sends what they ask."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType

from client.connection import RETRY_DELAYS, Connection
from client.embedded import EmbeddedServer, start_embedded
from client.identities import load_token, save_token
from client.match_state import MatchState
from client.opponents import DEFAULT_BOT_LEVEL, bot_opponent
from client.screens.game import GameScreen
from client.screens.lobby import LobbyScreen, NameChanged, ReplayRequested, WatchRequested
from client.screens.replay import ReplayScreen, StoredGame, stored_from_info, stored_from_state
from client.styles import CSS
from client.ui_messages import ConnectionChanged, Outgoing, ServerMessageReceived
from protocol import Variant
from protocol.messages import (
    Analysis,
    CreateMatch,
    ErrorMessage,
    GameList,
    LeaveMatch,
    Message,
    Snapshot,
    SyncMatch,
    WatchMatch,
    Welcome,
)

StartWith = Literal["lobby", "bot", "watch", "replay"]


@dataclass
class Launch:
    """How a session starts: which server (None: an embedded one) and what to open first."""

    url: str | None = None
    name: str = "player"
    token: str | None = None
    db_path: Path | None = None
    start: StartWith = "lobby"
    match_id: str | None = None
    variant: Variant = field(default_factory=Variant)
    bot_level: int = DEFAULT_BOT_LEVEL
    seat: Literal["south", "north", "random"] = "south"
    stored: StoredGame | None = None
    library: tuple[StoredGame, ...] = ()
    offline: bool = False
    animate: bool = True
    light: bool = False
    retry_delays: tuple[float, ...] = RETRY_DELAYS
    identity_file: Path | None = None
    """Where tokens are remembered between sessions (None: not remembered)."""

    def server_key(self) -> str:
        """Which server an identity belongs to: the URL, or the embedded server's database file."""
        return self.url or f"embedded:{self.db_path or 'default'}"


class KalahApp(App[None]):
    """Kalah Arena in the terminal: lobby, play, spectate, replay."""

    TITLE = "Kalah Arena"
    CSS = CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+t", "toggle_theme", "Light/dark"),
    ]

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.launch = launch
        self.connection: Connection | None = None
        self.embedded: EmbeddedServer | None = None
        self.pending_replays: set[str] = set()
        self.library: dict[str, StoredGame] = {g.match_id: g for g in launch.library}
        self._started = False
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.lobby = LobbyScreen(launch.name)

    def on_mount(self) -> None:
        """Lobby first; then connect (or open the stored replay directly)."""
        self.theme = "textual-light" if self.launch.light else "textual-dark"
        self.push_screen(self.lobby)
        if self.launch.offline:
            self.lobby.set_library(self.launch.library)
            self.lobby.connection_changed(False, "Offline: stored games only. Enter replays the selected game.")
            self.call_after_refresh(self.lobby.focus_table, "finished")
            if self.launch.stored is not None:
                self.push_screen(self.replay_screen(self.launch.stored))
            return
        self.run_network()
        self.run_sender()

    @work(exclusive=True, group="network")
    async def run_network(self) -> None:
        """Start the embedded server if no URL was given, then keep a connection up."""
        url = self.launch.url
        if url is None:
            self.lobby.connection_changed(False, "Starting the local server…")
            try:
                self.embedded = await start_embedded(self.launch.db_path)
            except Exception as exc:  # any failure to start is shown, not raised into Textual
                self.lobby.connection_changed(False, f"Could not start the local server: {exc}")
                return
            url = self.embedded.url
        token = self.launch.token
        if token is None and self.launch.identity_file is not None:
            token = load_token(self.launch.identity_file, self.launch.server_key(), self.launch.name)
        self.connection = Connection(
            url, self.launch.name, token=token,
            on_message=lambda m: self.post_message(ServerMessageReceived(m)),
            on_status=lambda ok, detail: self.post_message(ConnectionChanged(ok, detail)),
            retry_delays=self.launch.retry_delays,
        )
        await self.connection.run()

    async def on_unmount(self) -> None:
        """Close the connection and stop the embedded server."""
        if self.connection is not None:
            await self.connection.close()
        if self.embedded is not None:
            await self.embedded.close()
            self.embedded = None

    # --- routing ------------------------------------------------------------------------

    def game_screen(self, match_id: str) -> GameScreen | None:
        """The open game screen of a match, if any."""
        for screen in self.screen_stack:
            if isinstance(screen, GameScreen) and screen.match_id == match_id:
                return screen
        return None

    def on_server_message_received(self, event: ServerMessageReceived) -> None:
        """Hand a server message to the screen it is for."""
        msg = event.msg
        if isinstance(msg, Welcome):
            self.lobby.server_message(msg)
            self._remember(msg)
            if not self._started:
                self._started = True
                self._first_steps(msg.seats)
            return
        if isinstance(msg, GameList):
            self._set_library(tuple(stored_from_info(g) for g in msg.games if g.status == "finished"))
            return
        if isinstance(msg, Analysis) or (isinstance(msg, ErrorMessage) and msg.request == "analyse"):
            self._to_replays(msg)
            return
        match_id: str | None = getattr(msg, "match_id", None)
        if match_id is None:
            self.lobby.server_message(msg)
            return
        screen = self.game_screen(match_id)
        if screen is not None:
            screen.server_message(msg)
        elif isinstance(msg, Snapshot):
            self._open(msg)
        elif isinstance(msg, ErrorMessage):
            self.pending_replays.discard(match_id)
            self.notify(msg.message, title="Server", severity="error")

    def _open(self, snap: Snapshot) -> None:
        """Open the screen a new snapshot asks for: a replay, or a live game."""
        if snap.match_id in self.pending_replays:
            self.pending_replays.discard(snap.match_id)
            self.send(LeaveMatch(match_id=snap.match_id))
            self.push_screen(self.replay_screen(stored_from_state(MatchState.from_snapshot(snap))))
            return
        screen = GameScreen(MatchState.from_snapshot(snap), animate=self.launch.animate)
        screen.server_url = self.connection.url if self.connection is not None else ""
        self.push_screen(screen)

    def _to_replays(self, msg: Analysis | ErrorMessage) -> None:
        """A solver answer (or refusal) goes to the replay screens that asked for it."""
        for screen in self.screen_stack:
            if isinstance(screen, ReplayScreen):
                if isinstance(msg, Analysis):
                    screen.analysis_received(msg)
                else:
                    screen.analysis_refused(msg.message)

    def replay_screen(self, stored: StoredGame) -> ReplayScreen:
        """A replay screen for a stored game; solver values need a server (not offline)."""
        return ReplayScreen(stored, animate=self.launch.animate, can_analyse=not self.launch.offline)

    def _remember(self, welcome: Welcome) -> None:
        """Keep the identity's token for the next session."""
        if self.launch.identity_file is None:
            return
        try:
            save_token(self.launch.identity_file, self.launch.server_key(), welcome.name, welcome.token)
        except OSError:
            self.notify("Could not remember your identity for next time.", severity="warning")

    def _first_steps(self, seats: list[str]) -> None:
        """After the first welcome: resume an unfinished game, create the bot game, or open a match."""
        launch = self.launch
        if seats and launch.start in ("bot", "lobby"):
            self.send(SyncMatch(match_id=seats[-1]))
            if len(seats) > 1:
                self.notify(f"You hold seats in {len(seats)} matches: see the lobby.", title="Welcome back")
        elif launch.start == "bot":
            self.send(CreateMatch(variant=launch.variant.text(), seat=launch.seat,
                                  opponent=bot_opponent(launch.bot_level), rated=False))
        elif launch.start == "watch" and launch.match_id:
            self.send(WatchMatch(match_id=launch.match_id))
        elif launch.start == "replay" and launch.match_id:
            self.open_replay(launch.match_id)

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        """Tell every screen that shows the connection state."""
        for screen in self.screen_stack:
            if isinstance(screen, LobbyScreen | GameScreen | ReplayScreen):
                screen.connection_changed(event.connected, event.detail)

    # --- requests from screens ----------------------------------------------------------

    def on_outgoing(self, event: Outgoing) -> None:
        """Send what a screen asked for."""
        self.send(event.msg)

    def _set_library(self, games: tuple[StoredGame, ...]) -> None:
        """Show the stored games (as the server lists them) in the lobby; replays of them open at once."""
        self.library = {g.match_id: g for g in games}
        self.lobby.set_library(games)

    def on_watch_requested(self, event: WatchRequested) -> None:
        """Watch a live match from the lobby."""
        self.send(WatchMatch(match_id=event.match_id))

    def on_replay_requested(self, event: ReplayRequested) -> None:
        """Replay a finished match from the lobby (from the library when offline)."""
        stored = self.library.get(event.match_id)
        if stored is not None:
            self.push_screen(self.replay_screen(stored))
        else:
            self.open_replay(event.match_id)

    def open_replay(self, match_id: str) -> None:
        """Fetch a match's record (its snapshot) and open it in the replay screen."""
        self.pending_replays.add(match_id)
        self.send(WatchMatch(match_id=match_id))

    async def on_name_changed(self, event: NameChanged) -> None:
        """Say hello again under the new name."""
        if self.connection is not None:
            self.connection.name = event.name
            self.connection.token = None
            await self.connection.drop()

    def send(self, msg: Message) -> None:
        """Queue a message for the server; messages leave in the order they were queued."""
        if not self.launch.offline:
            self._outbox.put_nowait(msg)

    @work(exclusive=True, group="send")
    async def run_sender(self) -> None:
        """Send queued messages one at a time; say so when one cannot go because the link is down."""
        while True:
            msg = await self._outbox.get()
            if self.connection is None or not await self.connection.send(msg):
                self.notify("Not connected: not sent. Reconnecting…", severity="warning")

    # --- app-wide actions -------------------------------------------------------------

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

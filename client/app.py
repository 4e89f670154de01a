"""The Textual application: passes server traffic to the screens it is for, and sends what they ask."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

from client.connection import RETRY_DELAYS, Connection
from client.embedded import (
    EmbeddedServer,
    LocalAnalyst,
    LocalServerError,
    review_here,
    start_embedded,
    start_failure,
    start_local_analyst,
)
from client.identities import load_token, replaced_text, save_token, server_keys
from client.match_state import MatchState
from client.opponents import DEFAULT_BOT_LEVEL, bot_opponent
from client.screens.dialogs import ResumeScreen
from client.screens.events import EVENT_REQUESTS, EventsScreen
from client.screens.game import GameScreen
from client.screens.lobby import LobbyScreen, NameChanged, WatchRequested
from client.screens.replay import ReplayScreen
from client.stored_game import StoredGame
from client.styles import STYLESHEET
from client.ui_messages import (
    AnalysisReceived,
    ConnectionChanged,
    ErrorReceived,
    EventListReceived,
    EventReceived,
    EventStateReceived,
    GameListReceived,
    GameRecordReceived,
    GameReviewReceived,
    MatchListReceived,
    Outgoing,
    PresenceReceived,
    Received,
    ReplayRequested,
    SeekingReceived,
    SnapshotReceived,
    StandingsReceived,
    WelcomeReceived,
    received,
)
from protocol import KalahError, Side, Variant
from protocol.messages import (
    Analyse,
    Analysis,
    CreateMatch,
    ErrorMessage,
    FetchGame,
    GameOverEvent,
    GameReview,
    LeaveMatch,
    Message,
    ReviewGame,
    SyncMatch,
    WatchMatch,
)

StartWith = Literal["lobby", "bot", "watch", "replay"]

INTERRUPTED_STATUS = 130
"""The exit status after SIGINT, as a shell reports a process that Ctrl-C ended."""


@dataclass
class Launch:
    """How a session starts: which server (None: an embedded one) and what to open first."""

    url: str | None = None
    name: str = "player"
    token: str | None = None
    session: str | None = None
    """A signed-in account's session on `url` (`kalah login`): the hello says it instead of a guest's token."""
    db_path: Path | None = None
    start: StartWith = "lobby"
    match_id: str | None = None
    variant: Variant = field(default_factory=Variant)
    bot_level: int = DEFAULT_BOT_LEVEL
    seat: Literal["south", "north", "random"] = "south"
    stored: StoredGame | None = None
    """A stored game to open at once (offline)."""
    library: tuple[StoredGame, ...] = ()
    """The stored games the lobby lists when offline."""
    offline: bool = False
    animate: bool = True
    light: bool = False
    retry_delays: tuple[float, ...] = RETRY_DELAYS
    identity_file: Path | None = None
    """Where tokens are remembered between sessions (None: not remembered)."""
    resume: bool | None = None
    """Reopen the newest unfinished game the identity holds a seat in: True at once (`kalah play --resume`),
    False never (flags chose what to start), None when nothing was said (then the app asks: resume or new)."""
    spectate: bool = False
    """`kalah watch`: a match asked for with `watch` is shown as a spectator even to an identity seated in it."""
    guest: bool = False
    """`kalah watch` and `kalah replay`: a name the server refuses is replaced by a guest's (they need no name)."""
    command: str = "kalah"
    """The command as the user ran it (`kalah play`): the start of every line the session leaves in the terminal."""

    def server_keys(self, url: str | None, store: str | None) -> list[str]:
        """Where the identity is filed: the server's database when it is on this machine, its URL when named."""
        embedded = f"embedded:{self.db_path or 'default'}" if self.url is None else None
        return server_keys(url, store, embedded)


class KalahApp(App[None]):
    """Kalah Arena in the terminal: lobby, play, spectate, replay."""

    TITLE = "Kalah Arena"
    CSS_PATH = STYLESHEET
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Light/dark"),
    ]

    def __init__(self, launch: Launch) -> None:
        super().__init__()
        self.launch = launch
        self.connection: Connection | None = None
        self.embedded: EmbeddedServer | None = None
        self.analyst: LocalAnalyst | None = None
        """Offline only: the solver that answers the replay's questions in this process (made on first use)."""
        self._started = False
        self._watched: set[str] = set()
        self._ended: set[str] = set()
        """Matches whose end came while their game screen is open (its screen may not have drawn it yet)."""
        """Matches asked for with `watch` (shown as a spectator when `launch.spectate`)."""
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.seats: list[str] = []
        """The unfinished matches the player holds a seat in, oldest first: the last welcome's, then those started
        and ended since."""
        self.farewell: str | None = None
        """What the command prints once the screen is restored (set when `q` leaves an unfinished game)."""
        self.lobby = LobbyScreen(launch.name, launch.library, offline=launch.offline,
                                 private=launch.url is None and not launch.offline)

    def on_mount(self) -> None:
        """Lobby first; then connect (or open the stored replay directly)."""
        self.theme = "textual-light" if self.launch.light else "textual-dark"
        self._catch_interrupts()
        self.push_screen(self.lobby)
        if self.launch.offline:
            if self.launch.stored is not None:
                self.push_screen(self.replay_screen(self.launch.stored))
            self.run_local_analysis()
            return
        self.run_network()
        self.run_sender()

    @work(exclusive=True, group="network")
    async def run_network(self) -> None:
        """Start the embedded server if no URL was given, then keep a connection up (or exit saying why not)."""
        url = self.launch.url
        if url is None:
            self.post_message(ConnectionChanged(False, "Starting the local server…"))
            try:
                self.embedded, moved = await start_embedded(self.launch.db_path)
            except Exception as exc:  # ends the session in one line, not a traceback (unless KALAH_DEBUG asks)
                if os.environ.get("KALAH_DEBUG") and not isinstance(exc, LocalServerError):
                    raise
                self.give_up(start_failure(exc))
                return
            if moved is not None:
                self.notify(moved, title="Local server", severity="warning", timeout=20)
            url = self.embedded.url
        self.connection = Connection(
            url, self.launch.name, token=self.launch.token, session=self.launch.session,
            on_message=lambda m: self.post_message(received(m)),
            on_status=lambda ok, detail: self.post_message(ConnectionChanged(ok, detail)),
            retry_delays=self.launch.retry_delays, find_token=self._remembered, guest=self.launch.guest,
        )
        failure = await self.connection.run()
        if failure is not None:
            self.give_up(failure)

    @property
    def player_name(self) -> str:
        """The name the player goes by: the connection's (changed in the lobby, or a guest's), else the launch's."""
        return self.connection.name if self.connection is not None else self.launch.name

    def give_up(self, reason: str) -> None:
        """End the session with exit status 1, printing `reason` once the screen is restored.

        The exit waits for the next refresh, so a failure found while the first screen is still
        being mounted does not pull it down half-built.
        """
        self.call_after_refresh(self.exit, None, 1, Text(f"{self.launch.command}: {reason}"))

    def _catch_interrupts(self) -> None:
        """SIGINT (a Ctrl-C the terminal turns into a signal, `kill -INT`) quits as `q` does, with status 130; a SIGINT
        the process was started with ignored (a background job of a script) stays ignored."""
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.interrupt)

    def interrupt(self) -> None:
        """Quit after SIGINT: status 130 and a line saying so (and how to take an unfinished game up again)."""
        kept = self._kept_game()
        self.farewell = f"{self.launch.command}: interrupted" + ("" if kept is None else f"; {kept}")
        self.exit(return_code=INTERRUPTED_STATUS)

    async def on_unmount(self) -> None:
        """Close the connection and stop the embedded server."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
        if self.connection is not None:
            await self.connection.close()
        if self.embedded is not None:
            await self.embedded.close()
            self.embedded = None
        if self.analyst is not None:
            self.analyst.close()
            self.analyst = None

    # --- server traffic, passed on to the screens it is for ----------------------------

    def game_screen(self, match_id: str | None) -> GameScreen | None:
        """The open game screen of a match, if any."""
        for screen in self.screen_stack:
            if isinstance(screen, GameScreen) and screen.match_id == match_id:
                return screen
        return None

    def _to_match(self, event: SnapshotReceived | EventReceived | PresenceReceived | ErrorReceived) -> bool:
        """Post a match's traffic to its game screen; False if no screen shows that match."""
        screen = self.game_screen(event.msg.match_id)
        return screen is not None and screen.post_message(event.copy())

    @on(WelcomeReceived)
    def _welcomed(self, event: WelcomeReceived) -> None:
        """Remember the identity, tell the lobby, and take the first steps of the session once."""
        if event.msg.token is not None:  # an account signs in with its session, not a guest token
            self._remember(event.msg.name, event.msg.token)
        self.seats = list(event.msg.seats)
        self.lobby.post_message(event.copy())
        if not self._started:
            self._started = True
            self._first_steps(event.msg.seats)

    @on(MatchListReceived)
    @on(GameListReceived)
    @on(StandingsReceived)
    @on(SeekingReceived)
    def _to_lobby(self, event: Received[Any]) -> None:
        """Listings, stored games, standings and pairing news are the lobby's."""
        self.lobby.post_message(event.copy())

    @on(EventListReceived)
    @on(EventStateReceived)
    def _to_events(self, event: Received[Any]) -> bool:
        """Event lists and states go to the events screen; False if none is open."""
        screens = [s for s in self.screen_stack if isinstance(s, EventsScreen)]
        for screen in screens:
            screen.post_message(event.copy())
        return bool(screens)

    @on(SnapshotReceived)
    def _snapshot(self, event: SnapshotReceived) -> None:
        """A snapshot updates its match's screen, or opens one (a new, joined, watched or resumed match)."""
        if self.launch.spectate and event.msg.match_id in self._watched and event.msg.you is not None:
            event.msg = event.msg.model_copy(update={"you": None})  # watching is spectating, seated or not
        self._note_seat(event.msg.match_id, seated=event.msg.you is not None and event.msg.status != "finished")
        if not self._to_match(event):
            url = self.connection.url if self.connection is not None else ""
            state = MatchState.from_snapshot(event.msg)
            self._close_done_games()
            self.push_screen(GameScreen(state, animate=self.launch.animate, server_url=url))

    def _close_done_games(self) -> None:
        """Before a new game screen opens: close the finished or watched game screens on top (and the replays or
        dialogs over them), so that one game screen shows at a time and Escape from the new one goes back to where
        they were opened from (an arena's events screen after its eleventh game, not the tenth game)."""
        stack = self.screen_stack
        cut = None
        for index in range(len(stack) - 1, 0, -1):
            screen = stack[index]
            if isinstance(screen, GameScreen):
                if not (screen.state.over or screen.match_id in self._ended or screen.spectating):
                    break  # a game of the player's under way stays
                cut = index
            elif not isinstance(screen, ReplayScreen | ModalScreen):
                break
        if cut is None:
            return
        for screen in stack[cut:]:
            if isinstance(screen, GameScreen) and screen.spectating:
                self.send(LeaveMatch(match_id=screen.match_id))
        for _ in stack[cut:]:
            self.pop_screen()

    @on(EventReceived)
    @on(PresenceReceived)
    def _match_news(self, event: EventReceived | PresenceReceived) -> None:
        """Events and presence go to their match's screen (none open: nothing to update); a game's end is noted."""
        if isinstance(event.msg, GameOverEvent):
            self._note_seat(event.msg.match_id, seated=False)
        if self._to_match(event) and isinstance(event.msg, GameOverEvent):
            self._ended = {m for m in self._ended if self.game_screen(m) is not None} | {event.msg.match_id}

    def _note_seat(self, match_id: str, seated: bool) -> None:
        """Keep `seats` up to date: the player holds a seat in this unfinished match, or no longer."""
        if match_id in self.seats and not seated:
            self.seats.remove(match_id)
        elif seated and match_id not in self.seats:
            self.seats.append(match_id)

    @on(GameRecordReceived)
    def _stored_game(self, event: GameRecordReceived) -> None:
        """A stored game the user asked to replay has come."""
        self.push_screen(self.replay_screen(StoredGame.from_info(event.msg.game)))

    @on(AnalysisReceived)
    @on(GameReviewReceived)
    def _analysis(self, event: AnalysisReceived | GameReviewReceived | ErrorReceived) -> None:
        """A solver answer or a review (or a refusal of one) goes to the replay screens that ask for them."""
        for screen in self.screen_stack:
            if isinstance(screen, ReplayScreen):
                screen.post_message(event.copy())

    @on(ErrorReceived)
    def _refused(self, event: ErrorReceived) -> None:
        """A refusal goes where the request came from: a replay screen, the events screen, a match's screen, or a
        notification."""
        if event.msg.request in ("analyse", "review"):
            self._analysis(event)
        elif event.msg.request in EVENT_REQUESTS and self._to_events(event):
            return
        elif not self._to_match(event):
            self.notify(event.msg.message, title="Server", severity="error")

    @on(ConnectionChanged)
    def _connection_changed(self, event: ConnectionChanged) -> None:
        """Tell every screen (each shows the connection state its own way)."""
        for screen in self.screen_stack:
            screen.post_message(event.copy())

    def replay_screen(self, stored: StoredGame) -> ReplayScreen:
        """A replay screen for a stored game (its solver values come from the server, or offline from here)."""
        return ReplayScreen(stored, animate=self.launch.animate)

    def _keys(self, store: str | None) -> list[str]:
        """Where this session's identity is filed, given the database the server named."""
        return self.launch.server_keys(self.launch.url, store)

    def _remembered(self, store: str | None, name: str) -> str | None:
        """The token remembered for `name` on this server (by its database, else its address), if any."""
        if self.launch.identity_file is None:
            return None
        return load_token(self.launch.identity_file, self._keys(store), name)

    def _remember(self, name: str, token: str) -> None:
        """Keep the identity's token for the next session (a guest's is not kept: the user's own stays)."""
        connection = self.connection
        if connection is not None and connection.guest_instead is not None:
            if not self._started:
                self.notify(f"The name {connection.guest_instead!r} is not yours on this server: you are the "
                            f"guest {name} here.", title="Here as a guest")
            return
        if self.launch.identity_file is None:
            return
        try:
            replaced = save_token(self.launch.identity_file,
                                  self._keys(None if connection is None else connection.store), name, token)
        except OSError:
            self.notify("Could not remember your identity for next time.", severity="warning")
            return
        if replaced:
            self.notify(replaced_text(name, self.launch.identity_file), title="A new token", severity="warning")

    def _first_steps(self, seats: list[str]) -> None:
        """After the first welcome: resume an unfinished game, create the bot game, or open a match."""
        launch = self.launch
        seats = [] if launch.spectate else seats
        if seats and launch.resume and launch.start in ("bot", "lobby"):
            self._resume(seats)
            return
        if seats and launch.resume is None and launch.start in ("bot", "lobby"):
            count = f" (one of {len(seats)})" if len(seats) > 1 else ""
            self.push_screen(ResumeScreen(f"match {seats[-1]}{count}"),
                             lambda resume: self._resume(seats) if resume else self._start(seats))
            return
        self._start(seats)

    def _resume(self, seats: list[str]) -> None:
        """Reopen the newest unfinished game the identity holds a seat in."""
        self.send(SyncMatch(match_id=seats[-1]))
        if len(seats) > 1:
            self.notify(f"You hold seats in {len(seats)} matches: see the lobby.", title="Welcome back")

    def _start(self, seats: list[str]) -> None:
        """Start what the launch asks for (a bot game, a watch, a replay), noting unfinished games."""
        launch = self.launch
        if seats:
            self.notify(f"You hold a seat in {len(seats)} unfinished match{'es' if len(seats) > 1 else ''}: "
                        f"`{self.resume_command()}` reopens the newest, or find it in the lobby.", title="Unfinished")
        elif launch.resume:
            self.notify(f"{self.player_name} holds no seat in an unfinished match on this server: nothing to resume. "
                        "c creates a game here (`kalah play` starts one against a bot); is yours under another --name "
                        "or --db?", title="Resume")
        if launch.start == "bot":
            self.send(CreateMatch(variant=launch.variant.text(), seat=launch.seat,
                                  opponent=bot_opponent(launch.bot_level), rated=False))
        elif launch.start == "watch" and launch.match_id:
            self.send(WatchMatch(match_id=launch.match_id))
        elif launch.start == "replay" and launch.match_id:
            self.send(FetchGame(match_id=launch.match_id))

    # --- requests from screens ----------------------------------------------------------

    def on_outgoing(self, event: Outgoing) -> None:
        """Send what a screen asked for."""
        self.send(event.msg)

    def on_watch_requested(self, event: WatchRequested) -> None:
        """Watch a live match from the lobby."""
        self.send(WatchMatch(match_id=event.match_id))

    def on_replay_requested(self, event: ReplayRequested) -> None:
        """Replay a game: at once if the screen had it stored, else once the server sends its record."""
        if event.stored is not None:
            self.push_screen(self.replay_screen(event.stored))
        else:
            self.send(FetchGame(match_id=event.match_id))

    async def on_name_changed(self, event: NameChanged) -> None:
        """Say hello again under the new name."""
        if self.connection is not None:
            self.connection.name = event.name
            self.connection.token = None
            await self.connection.drop()

    def send(self, msg: Message) -> None:
        """Queue a message for the server (offline: only solver questions, answered here), in order."""
        if isinstance(msg, WatchMatch):
            self._watched.add(msg.match_id)
        if not self.launch.offline or isinstance(msg, Analyse | ReviewGame):
            self._outbox.put_nowait(msg)

    @work(exclusive=True, group="send")
    async def run_sender(self) -> None:
        """Send queued messages one at a time; say so when one cannot go because the link is down."""
        while True:
            msg = await self._outbox.get()
            if self.connection is None or not await self.connection.send(msg):
                self.notify("Not connected: not sent. Reconnecting…", severity="warning")

    @work(exclusive=True, group="send")
    async def run_local_analysis(self) -> None:
        """Offline: answer the replay's solver questions in this process, one at a time, in the order asked."""
        while True:
            msg = await self._outbox.get()
            if isinstance(msg, Analyse):
                self.post_message(received(await self.analyse_here(msg)))
            elif isinstance(msg, ReviewGame):
                self.post_message(received(await self.review_here(msg)))

    async def analyse_here(self, msg: Analyse) -> Analysis | ErrorMessage:
        """The local solver's answer to `msg`, or its refusal in the form the server would send."""
        try:
            if self.analyst is None:
                self.analyst = start_local_analyst()
            answer = await self.analyst.aanalyse(msg)
        except KalahError as exc:
            return ErrorMessage(code=exc.code, message=str(exc)[:1000], request="analyse")
        except Exception as exc:  # the solver could not be loaded: say so in the replay, not as a traceback
            return ErrorMessage(code="internal_error", message=f"the local solver failed: {exc}"[:1000],
                                request="analyse")
        if answer is None:
            return ErrorMessage(code="internal_error", message="the local solver gave no answer", request="analyse")
        return answer

    async def review_here(self, msg: ReviewGame) -> GameReview | ErrorMessage:
        """Offline: the stored game's review from the database, else made here; or why there is none."""
        stored = next((s.stored for s in self.screen_stack
                       if isinstance(s, ReplayScreen) and s.stored.match_id == msg.match_id), None)
        if stored is None:
            return ErrorMessage(code="unknown_match", message="the game is no longer shown", request="review")
        try:
            if self.analyst is None:
                self.analyst = start_local_analyst()
            return await review_here(self.analyst, self.launch.db_path, stored.match_id, stored.variant,
                                     stored.record, (stored.south, stored.north))
        except Exception as exc:  # the solver or the database failed: say so in the replay, not as a traceback
            return ErrorMessage(code="internal_error", message=f"the local review failed: {exc}"[:1000],
                                request="review")

    # --- app-wide actions -------------------------------------------------------------

    def resume_command(self) -> str:
        """The command that reopens the player's newest unfinished game: on this server (or database), as this name."""
        launch = self.launch
        where = ["--server", launch.url] if launch.url else ["--db", str(launch.db_path)] if launch.db_path else []
        return shlex.join(["kalah", "play", *where, "--name", self.player_name, "--resume"])

    def _kept_game(self) -> str | None:
        """On leaving with an unfinished game of the player's (on screen, or only held on the server): that it is
        kept, and the command that takes it up again; None without one."""
        unfinished = [s for s in self.screen_stack
                      if isinstance(s, GameScreen) and not s.spectating and not s.state.over]
        if not unfinished:
            held = [] if self.launch.spectate else [m for m in self.seats if m not in self._ended]
            if not held:
                return None
            games = f"game {held[-1]}" if len(held) == 1 else f"{len(held)} games (the newest {held[-1]})"
            return (f"you hold a seat in an unfinished {games}, kept on the server: `{self.resume_command()}` takes "
                    f"{'it' if len(held) == 1 else 'the newest'} up again.")
        game = unfinished[-1]
        state = game.state
        opponent = state.north if state.you is Side.SOUTH else state.south if state.you is Side.NORTH else None
        against = (f"{opponent} waits for you" if opponent is not None and opponent.startswith("bot:")
                   else "against a person, who may claim the win once you have been away for the server's grace "
                        "period")
        return (f"your game {game.match_id} is kept on the server ({against}): "
                f"`{self.resume_command()}` takes it up again.")

    async def action_quit(self) -> None:
        """Quit (`q`, Ctrl-C); when a game of the player's is unfinished, say that it is kept and how to take it up
        again."""
        kept = self._kept_game()
        self.farewell = None if kept is None else f"{self.launch.command}: {kept}"
        self.exit()

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

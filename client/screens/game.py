"""The game screen: play a match, or watch one read-only, live from the server's events."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from client.match_state import EventOutcome, LastAction, MatchState, describe_last, result_parts
from client.screens.dialogs import ConfirmScreen, HelpScreen
from client.screens.terminal_size import fit_board
from client.styles import NARROW
from client.ui_messages import (
    ConnectionChanged,
    ErrorReceived,
    EventReceived,
    Outgoing,
    PresenceReceived,
    ReplayRequested,
    SnapshotReceived,
)
from client.widgets.board import Board, ChoiceRefused, PitChosen, keys_text
from client.widgets.game_over import GameOverPanel
from client.widgets.panels import MoveList, PlayerBar, TitleBar
from protocol import Side
from protocol.messages import (
    ClaimWin,
    LeaveMatch,
    MakeMove,
    Resign,
    SwapSides,
    SyncMatch,
    TransferSeed,
    WatchMatch,
)


class GameScreen(Screen[None]):
    """A live match: the board from the player's side, clocks, moves, notices."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "swap", "Swap (pie)"),
        Binding("n", "no_transfer", "No transfer"),
        Binding("r", "resign", "Resign"),
        Binding("w", "claim", "Claim win"),
        Binding("v", "replay", "Replay"),
        Binding("question_mark,f1", "help", "Rules"),
        Binding("escape", "leave", "Lobby"),
    ]

    def __init__(self, state: MatchState, *, animate: bool = True, server_url: str = "") -> None:
        super().__init__()
        self.state = state
        self.animate_sowing = animate
        self.server_url = server_url
        """Where others can watch this match (shown as a `kalah watch` command; empty: not shown)."""
        self.pending = False
        """An action was sent and has not come back as an event yet."""
        self.transfer_src: int | None = None
        """The house chosen first for the opening transfer."""
        self.error: str | None = None
        self.hint: str | None = None
        """Why the last key or click did nothing (cleared by the next thing that happens). It and `error` take the
        prompt's line in the notice, the newer of them shown."""
        self.connection_notice: str | None = None
        self._drawn_last: LastAction | None = None

    @property
    def match_id(self) -> str:
        """The match shown."""
        return self.state.match_id

    @property
    def spectating(self) -> bool:
        """Whether the viewer is a spectator rather than a player."""
        return self.state.you is None

    def compose(self) -> ComposeResult:
        """Title, the two player bars around the board, notices, move list, game-over panel."""
        yield Static(id="connection", classes="banner")
        yield TitleBar(id="title")
        yield Static(id="too-small")
        with Horizontal(id="game-body"):
            with Vertical(id="board-column"):
                yield PlayerBar(id="top-player", classes="player")
                yield Board(self.state.variant, self.state.viewpoint, animate=self.animate_sowing, id="board")
                yield PlayerBar(id="bottom-player", classes="player")
                yield Static(id="notice")
                yield GameOverPanel(id="game-over")
            with VerticalScroll(id="side-panel", can_focus=False):
                yield Static(id="spectators")
                yield Static(id="server")
                yield MoveList(id="moves")
        yield Footer()

    def on_mount(self) -> None:
        """Draw the state and start the clock tick."""
        self.refresh_view()
        self.set_interval(0.1, self._tick)
        for board in self.query(Board):
            board.focus()

    # --- from the server (the app posts this match's traffic here) ---------------------

    @on(SnapshotReceived)
    def _snapshot(self, event: SnapshotReceived) -> None:
        """Start again from the server's whole state (a player who lost the seat keeps the viewpoint)."""
        msg, you = event.msg, self.state.you
        self.state = MatchState.from_snapshot(msg)
        if self.state.you is None and you is not None and msg.status != "finished":
            self.state.you = you
        self.pending = False
        self.hint = None
        self.refresh_view()

    @on(EventReceived)
    def _event(self, event: EventReceived) -> None:
        """Apply the next event; ask for what was missed on a gap; an action seen back ends the wait, and it or the
        end of the game clears the hint and the error (they were about the position before)."""
        ply, over = self.state.ply, self.state.over
        outcome = self.state.apply_event(event.msg)
        if outcome is EventOutcome.GAP:
            self.request_sync()
        if outcome is not EventOutcome.APPLIED:
            return
        if self.state.ply != ply or self.state.over != over:
            self.pending = False
            self.error = None
            self.hint = None
        self.refresh_view()

    @on(ErrorReceived)
    def _refused(self, event: ErrorReceived) -> None:
        """The server refused what this screen sent: say why, and let the player try again."""
        self.error = event.msg.message
        self.hint = None
        self.pending = False
        self.transfer_src = None
        self.refresh_view()

    @on(PresenceReceived)
    def _presence(self, event: PresenceReceived) -> None:
        """Who is connected, and how many watch."""
        msg = event.msg
        self.state.apply_presence(msg.spectators, msg.south_connected, msg.north_connected)
        self.refresh_view()

    @on(ConnectionChanged)
    def _connection_changed(self, event: ConnectionChanged) -> None:
        """Show a banner while the connection is down."""
        self.connection_notice = None if event.connected else event.detail
        if event.connected:
            self.pending = False
        self.refresh_view()

    def request_sync(self) -> None:
        """Ask the server for what this screen missed."""
        cls = WatchMatch if self.spectating else SyncMatch
        self.post_message(Outgoing(cls(match_id=self.match_id, since=self.state.seq)))

    # --- drawing -------------------------------------------------------------------------

    def refresh_view(self) -> None:
        """Set every widget's attributes from the match state."""
        st = self.state
        pos = st.position
        board = self.query_one(Board)
        board.set_viewpoint(st.viewpoint)
        board.position = pos
        board.choosable = frozenset(self._choosable())
        board.show_keys = not self.spectating and not st.over
        if st.last is not self._drawn_last:
            self._drawn_last = st.last
            board.path = st.last.path if st.last else ()
            captured = [] if st.last is None or st.last.captured_bin is None else [st.last.captured_bin]
            board.captured = tuple(captured)
        role = "Watching" if self.spectating else f"Playing {st.viewpoint.name.title()}"
        title_bar = self.query_one(TitleBar)
        title_bar.lead, title_bar.before = "Kalah Arena", f" · match {st.match_id} · "
        title_bar.variant, title_bar.after = st.variant.text(), f" · {role} · ply {st.ply}"
        for bar_id, side in (("#bottom-player", st.viewpoint), ("#top-player", st.viewpoint.other)):
            bar = self.query_one(bar_id, PlayerBar)
            bar.side = side
            bar.player = st.player(side)
            bar.you = st.you == side
            bar.away = side in st.away and not st.over
            bar.to_move = not st.over and pos.to_move == side and st.status != "open"
        self._tick()
        self.query_one("#notice", Static).update(self._notice())
        banner = self.query_one("#connection", Static)
        banner.update(self.connection_notice or "")
        banner.display = bool(self.connection_notice)
        self.query_one("#spectators", Static).update(f"👁 {st.spectators} watching")
        moves = tuple((before.to_move.letter, token) for before, token in zip(st.positions, st.record, strict=False))
        move_list = self.query_one(MoveList)
        if moves != move_list.moves:
            move_list.moves = moves
            panel = self.query_one("#side-panel")
            self.call_after_refresh(panel.scroll_end, animate=False)
        over = self.query_one(GameOverPanel)
        over.display = st.over
        if st.over:
            over.heading, over.result = "GAME OVER", result_parts(st)
            over.details = (f"Stores: South {pos.stores[0]} · North {pos.stores[1]}",
                            "v: replay · Esc: lobby · q: quit")
        self.refresh_bindings()
        self.query_one("#server", Static).update(self._watch_hint())
        self._fit()

    def _watch_hint(self) -> str:
        """How someone else can watch this match."""
        if not self.server_url:
            return ""
        return f"[dim]Others can watch with:[/dim]\nkalah watch {self.match_id} --server {self.server_url}\n"

    def on_resize(self) -> None:
        """Stack the move list under the board on narrow terminals."""
        narrow = self.size.width < NARROW
        self.set_class(narrow, "-narrow")
        for moves in self.query(MoveList):
            moves.inline = narrow
        for hint in self.query("#server"):
            hint.display = not narrow
        self._fit()

    def _fit(self) -> None:
        """The board if the terminal holds it, else one line saying what size it needs; back in focus when shown."""
        hidden = not self.query_one("#game-body").display
        if fit_board(self, self.state.variant) and hidden:
            self.query_one(Board).focus()

    def _tick(self) -> None:
        """Count the running clock down."""
        for bar in self.query(PlayerBar):
            bar.clock_ms = self.state.clock_ms(bar.side)

    def _choosable(self) -> list[int]:
        """Bins the player may choose now: legal houses, or houses for the opening transfer."""
        st = self.state
        if not st.my_turn or self.pending or st.status == "open" or self.connection_notice:
            return []
        pos = st.position
        if pos.transfer_pending:
            houses = [b for side in (Side.SOUTH, Side.NORTH) for b in pos.house_bins(side)]
            if self.transfer_src is None:
                return [b for b in houses if pos.pits[b - 1]]
            return [b for b in houses if b != self.transfer_src]
        return pos.legal_bins()

    def _notice(self) -> Content:
        """What the player should know now: the last move's effect, then the prompt (offers, whose turn, an absent
        opponent), or in its place what the server refused or why the last key did nothing."""
        st = self.state
        lines: list[Content] = []
        if st.last is not None:
            lines.append(Content(describe_last(st.last, st.last_turn(), st.over, (st.south, st.north))))
        if self.error:
            lines.append(Content.styled(f"⚠ {self.error}", "bold $error"))
        elif self.hint:
            lines.append(Content.styled(self.hint, "$warning"))
        elif prompt := self._prompt():
            lines.append(Content.from_markup(prompt))
        return Content("\n").join(lines)

    def _prompt(self) -> str:
        """What the player may do now, in markup (empty once the game is over): with the opponent disconnected, that
        the win may be claimed, in place of asking for a move or waiting (a pie or transfer offer comes first)."""
        st = self.state
        pos = st.position
        if st.over:
            return ""
        if st.status == "open":
            return "Waiting for an opponent to join…"
        if st.my_turn and pos.transfer_pending:
            if self.transfer_src is None:
                return "[b]Opening transfer:[/b] choose a house to take one seed from, or n for none."
            return f"Take a seed from bin {self.transfer_src}: now choose the house to put it in."
        if st.my_turn and pos.swap_offered:
            return ("[b]Pie rule:[/b] press [b]s[/b] to take over South and its opening move (your opponent then "
                    "plays North), or sow a house.")
        if st.you is not None and st.you.other in st.away:
            return "Your opponent is disconnected: press [b]w[/b] to claim the win once the grace period is over."
        if st.my_turn:
            return "[b]Your move:[/b] the key under a house, or ←/→ and Enter, or a click."
        if not self.spectating:
            return f"Waiting for {st.player(pos.to_move) or pos.to_move.name.title()}…"
        return ""

    # --- actions ----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show swap, transfer and resign keys only where they apply."""
        st = self.state
        if action == "swap":
            return st.my_turn and st.position.swap_offered
        if action == "no_transfer":
            return st.my_turn and st.position.transfer_pending
        if action == "resign":
            return not self.spectating and not st.over
        if action == "replay":
            return st.over
        if action == "claim":
            return st.you is not None and not st.over and st.you.other in st.away
        return True

    def refusal(self, bin_number: int | None, key: str | None) -> str:
        """Why a house key, click or Enter chose nothing, and what would work."""
        st = self.state
        pos = st.position
        keys = f"use {keys_text(st.variant.houses)}, shown under your houses"
        if self.spectating:
            return "You are watching: spectators cannot move."
        if st.over:
            return "The game is over: v replays it, Esc goes back to the lobby."
        if self.connection_notice:
            return "Not connected: moves wait until the connection is back."
        if st.status == "open":
            return "No opponent yet: moves start once someone joins."
        if not st.my_turn:
            return f"Not your turn: waiting for {st.player(pos.to_move) or pos.to_move.name.title()}."
        if self.pending:
            return "Your move is on its way to the server…"
        if bin_number is None:
            return f"Key {key} is not one of your houses: {keys}." if key else f"Choose a house: {keys}."
        if pos.transfer_pending:
            if self.transfer_src is None:
                return f"Bin {bin_number} has no seed to give: choose a house with seeds, or n for no transfer."
            return "Choose another house to put the seed in."
        if bin_number not in pos.house_bins(st.you or pos.to_move):
            return f"Bin {bin_number} is not one of your houses: sow from your own row, at the bottom."
        if pos.pits[bin_number - 1] == 0:
            return f"House {bin_number} is empty: choose a house with seeds."
        return f"House {bin_number} cannot be sown now."

    @on(ChoiceRefused)
    def _choice_refused(self, event: ChoiceRefused) -> None:
        """A key or click that chose nothing: say why, in the prompt's place."""
        event.stop()
        self.hint = self.refusal(event.bin, event.key)
        self.error = None
        self.refresh_view()

    def on_key(self, event: events.Key) -> None:
        """A printable key that nothing here uses gets a hint instead of silence."""
        if event.is_printable and event.key not in self.active_bindings:
            name = event.character if event.character and event.character.strip() else event.key
            self.hint = f"Key {name} does nothing here: the keys are in the footer."
            self.error = None
            self.refresh_view()

    def on_pit_chosen(self, event: PitChosen) -> None:
        """Send a sowing, or build the opening transfer from two choices."""
        event.stop()
        st = self.state
        self.hint = None
        if not st.my_turn or self.pending:
            return
        ply = st.position.ply
        if st.position.transfer_pending:
            if self.transfer_src is None:
                self.transfer_src = event.bin
                self.refresh_view()
                return
            src, self.transfer_src = self.transfer_src, None
            self._send(TransferSeed(match_id=self.match_id, ply=ply, src=src, dst=event.bin))
            return
        self._send(MakeMove(match_id=self.match_id, ply=ply, bin=event.bin))

    def _send(self, msg: MakeMove | SwapSides | TransferSeed | Resign) -> None:
        """Send an action and wait for it to come back as an event."""
        self.pending = True
        self.error = None
        self.post_message(Outgoing(msg))
        self.refresh_view()

    def action_swap(self) -> None:
        """Take the pie-rule swap when it is offered."""
        st = self.state
        if st.my_turn and st.position.swap_offered and not self.pending:
            self._send(SwapSides(match_id=self.match_id, ply=st.position.ply))

    def action_no_transfer(self) -> None:
        """Decline the opening transfer."""
        st = self.state
        if st.my_turn and st.position.transfer_pending and not self.pending:
            self.transfer_src = None
            self._send(TransferSeed(match_id=self.match_id, ply=st.position.ply))

    def action_resign(self) -> None:
        """Resign, after confirmation."""
        if self.spectating or self.state.over:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.post_message(Outgoing(Resign(match_id=self.match_id)))

        self.app.push_screen(ConfirmScreen("Resign this game?"), confirmed)

    def action_claim(self) -> None:
        """Claim the win while the opponent is disconnected (the server checks the grace period)."""
        if self.state.you is not None and not self.state.over:
            self.error = None
            self.post_message(Outgoing(ClaimWin(match_id=self.match_id)))

    def action_replay(self) -> None:
        """Step through the finished game (as the server stored it)."""
        if self.state.over:
            self.post_message(ReplayRequested(self.match_id))

    def action_help(self) -> None:
        """Show the rules of this match's variant."""
        self.app.push_screen(HelpScreen(self.state.variant))

    def action_leave(self) -> None:
        """Back to the lobby (spectators stop watching)."""
        if self.spectating:
            self.post_message(Outgoing(LeaveMatch(match_id=self.match_id)))
        self.dismiss()

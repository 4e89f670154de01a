"""The replay screen: step through a stored game, each position with the move that led to it."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from client.match_state import describe_last, last_action
from client.screens.dialogs import HelpScreen
from client.screens.terminal_size import fit_board
from client.stored_game import StoredGame, replay
from client.styles import NARROW
from client.ui_messages import AnalysisReceived, ConnectionChanged, ErrorReceived, GameReviewReceived, Outgoing
from client.widgets.board import Board
from client.widgets.game_over import GameOverPanel
from client.widgets.panels import MoveList, PlayerBar, TitleBar
from protocol import Side
from protocol.messages import Analyse, Analysis
from protocol.review_messages import GameReview, ReviewedPly, ReviewGame, ReviewSummary
from protocol.wire_base import MATCH_ID_RULE, is_match_id

ANALYSIS_BUDGET_MS = 1000
"""How long the server may search for the value of one replayed position."""

KEYS_LINE = "←/→ step · Home/End jump · a solver value · Esc back"
"""The notice's second line while the solver's values are hidden (the solver line takes its place)."""


MARKS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
"""A review's mark of each kind of move that lost seeds (a perfect or unjudged move has none)."""


def mark_of(p: ReviewedPly) -> str:
    """The mark beside a reviewed move: `?!`, `?` or `??`, `~` before it when it is an estimate; empty for none."""
    mark = MARKS.get(p.mark, "")
    return f"~{mark}" if mark and not p.exact else mark


def ply_text(p: ReviewedPly) -> str:
    """The review of the move played at a position, in words (`~`: an estimate, not proved)."""
    who = p.player or p.side.capitalize()
    lost = "a perfect move" if p.loss == 0 else f"{p.mark}, {'~' if not p.exact else ''}{p.loss} seeds lost"
    best = f" · best {' or '.join(p.best)}" if p.best and p.loss else ""
    return f"Review: {who} played {p.action} here, {lost}{best}"


def summary_text(s: ReviewSummary) -> str:
    """One player's review summary in a line."""
    worst = "" if s.worst_ply is None else f", worst move {s.worst_ply + 1} ({s.worst_loss})"
    estimate = " ~" if not s.exact else ""
    who = s.player or ("North" if s.seat else "South")
    return f"{who}: {s.perfect}/{s.moves} perfect, {s.lost} seeds lost{worst}{estimate}"


def analysis_text(a: Analysis) -> str:
    """A solver answer in words: who wins by how much (≈ when only a bounded search finished), best move."""
    side = "South" if a.value > 0 else "North"
    if a.exact:
        value = "a draw" if a.value == 0 else f"{side} wins by {abs(a.value)}"
        value += " with best play" if a.best else ""
    else:
        value = "≈ even" if a.value == 0 else f"≈ {side} ahead by {abs(a.value)}"
        value += f" (search depth {a.depth})"
    best = f" · best move {', '.join(map(str, a.best))}" if a.best else ""
    return f"Solver: {value}{best}"


class ReplayScreen(Screen[None]):
    """Left/right step one action, Home/End jump to the start or the end."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Back", priority=True),
        Binding("right", "step(1)", "Forward", priority=True),
        Binding("home", "jump(0)", "Start", priority=True),
        Binding("end", "jump(-1)", "End", priority=True),
        Binding("a", "toggle_analysis", "Solver value"),
        Binding("n", "next_mark", "Next marked move", show=False),
        Binding("question_mark,f1", "help", "Rules"),
        Binding("escape", "leave", "Lobby"),
    ]

    index: reactive[int] = reactive(0, init=False)
    """The position shown: 0 is the start, `len(game.actions)` the end."""

    def __init__(self, stored: StoredGame, *, animate: bool = True) -> None:
        super().__init__()
        self.stored = stored
        self.game = replay(stored.variant, stored.record)
        self.animate_sowing = animate
        self.show_analysis = False
        self.analyses: dict[str, Analysis] = {}
        """Solver answers by position (fen), asked for once each."""
        self.refused: dict[str, str] = {}
        """Why the server gave no value of a position, by position."""
        self.asked: list[str] = []
        """Positions asked about and not answered yet, in the order asked (the server answers in order)."""
        self.move_text = ""
        """The notice's first line: the start, or the action that led to the position shown."""
        self.review: GameReview | None = None
        """The game's review against perfect play, once the server (or, offline, this process) sent it."""
        self.review_refused = ""
        """Why there is no review, if it was refused."""

    def compose(self) -> ComposeResult:
        """Title, board between the players, the move that led here, and the move list."""
        yield TitleBar(id="title")
        yield Static(id="too-small")
        with Horizontal(id="game-body"):
            with Vertical(id="board-column"):
                yield PlayerBar(id="top-player", classes="player")
                yield Board(self.stored.variant, Side.SOUTH, animate=self.animate_sowing, id="board")
                yield PlayerBar(id="bottom-player", classes="player")
                yield Static(id="notice")
                yield GameOverPanel(id="game-over")
            with VerticalScroll(id="side-panel"):
                yield MoveList(id="moves")
                yield Static(id="review-summary")
        yield Footer()

    def on_mount(self) -> None:
        """Start at the first position; ask for a finished game's review."""
        self.query_one("#review-summary", Static).display = False
        self.watch_index()
        if self.stored.finished and self.game.actions:
            if not is_match_id(self.stored.match_id):  # a hand-written database's id: no request can carry it
                self.review_refused = f"{self.stored.match_id!r} is not a match id ({MATCH_ID_RULE})"
                self._draw_review()
                return
            self.post_message(Outgoing(ReviewGame(match_id=self.stored.match_id)))

    # --- the review -------------------------------------------------------------------------

    @on(GameReviewReceived)
    def _review_received(self, event: GameReviewReceived) -> None:
        """Mark the moves, sum up each player, and say what the move played at the position shown cost."""
        review = event.msg
        if review.match_id != self.stored.match_id:
            return
        self.review = review
        marks = {p.ply: mark_of(p) for p in review.plies}
        self.query_one(MoveList).marks = tuple(marks.get(i, "") for i in range(len(self.game.actions)))
        self._draw_review()

    def _draw_review(self) -> None:
        """Under the moves: the review's heading, each player's summary, and what the move played here cost (n: the
        next marked move); or why there is no review."""
        summary = self.query_one("#review-summary", Static)
        review = self.review
        if review is None:
            summary.display = bool(self.review_refused)
            summary.update(f"Review: none ({self.review_refused})")
            return
        heading = "Review (?! ? ??: seeds lost" + ("" if review.exact else "; ~ an estimate") + "; n: next marked)"
        here = self._review_line()
        summary.update(Content("\n").join([Content.styled(heading, "bold"), *map(Content, map(summary_text,
                                                                                             review.players)),
                                           *([Content.styled(here, "bold")] if here else [])]))
        summary.display = True

    def _review_line(self) -> str | None:
        """What the review says of the move played at the position shown (None: no review, or no move here)."""
        if self.review is None:
            return None
        found = next((p for p in self.review.plies if p.ply == self.index), None)
        return None if found is None else ply_text(found)

    def action_next_mark(self) -> None:
        """To the position before the next move that lost seeds (from the start again after the last)."""
        if self.review is None:
            return
        marked = [p.ply for p in self.review.plies if mark_of(p)]
        later = [ply for ply in marked if ply > self.index]
        if later or marked:
            self.index = (later or marked)[0]

    # --- solver values --------------------------------------------------------------------

    def action_toggle_analysis(self) -> None:
        """Show or hide the solver's value of each position (asked as shown: of the server, or here offline)."""
        self.show_analysis = not self.show_analysis
        self.asked.clear()  # answers lost to a reconnection are asked for again
        self._draw_analysis()

    @on(AnalysisReceived)
    def _analysis_received(self, event: AnalysisReceived) -> None:
        """Keep a solver answer; show it if it is about the position on screen."""
        msg = event.msg
        self.analyses[msg.position] = msg
        if msg.position in self.asked:
            self.asked.remove(msg.position)
        self._draw_analysis()

    @on(ErrorReceived)
    def _analysis_refused(self, event: ErrorReceived) -> None:
        """The server could not analyse the oldest position asked about (or review the game): say why instead of
        waiting."""
        if event.msg.request == "review":
            self.review_refused = event.msg.message
            self._draw_review()
        elif self.asked:
            self.refused[self.asked.pop(0)] = event.msg.message
            self._draw_analysis()

    @on(ConnectionChanged)
    def _connection_changed(self, event: ConnectionChanged) -> None:
        """Questions in flight when the link went down got no answer: ask again once it is back."""
        if event.connected:
            self.asked.clear()
            self._draw_analysis()

    def current_fen(self) -> str:
        """The position on screen, in the notation the server analyses."""
        return self.game.positions[self.index].fen()

    def _draw_analysis(self) -> None:
        """The notice: the action that led to the position shown, then the keys, or in their place the position's
        solver line (asked for if it is not known yet)."""
        second = Content.styled(self._solver_line(), "$text-muted") if self.show_analysis else Content(KEYS_LINE)
        self.query_one("#notice", Static).update(Content("\n").join([Content(self.move_text), second]))
        self._draw_review()

    def _solver_line(self) -> str:
        """The solver's value of the position shown, why there is none, or that it is being worked out (then asked
        for once)."""
        fen = self.current_fen()
        known = self.analyses.get(fen)
        if known is not None:
            return analysis_text(known)
        if fen in self.refused:
            return f"Solver: no value ({self.refused[fen]})"
        if fen not in self.asked:
            self.asked.append(fen)
            self.post_message(Outgoing(Analyse(variant=self.stored.variant.text(), position=fen,
                                               budget_ms=ANALYSIS_BUDGET_MS)))
        return "Solver: thinking…"

    def _seat_name(self, side: Side) -> str | None:
        """Who played `side` at the current position (players change sides after a swap)."""
        swapped = self.game.positions[self.index].swapped
        opener, other = self.stored.south, self.stored.north
        if side == Side.SOUTH:
            return other if swapped else opener
        return opener if swapped else other

    def watch_index(self) -> None:
        """Show position `index` and the action that led to it."""
        g, i = self.game, self.index
        pos = g.positions[i]
        board = self.query_one(Board)
        board.position = pos
        last = last_action(g.events[i - 1]) if i > 0 else None
        board.path = last.path if last else ()
        board.captured = (last.captured_bin,) if last and last.captured_bin else ()
        n = len(g.actions)
        title_bar = self.query_one(TitleBar)
        title_bar.lead, title_bar.before = "Replay", f" · match {self.stored.match_id} · "
        title_bar.variant, title_bar.after = self.stored.variant.text(), f" · position {i} of {n}"
        for bar_id, side in (("#bottom-player", Side.SOUTH), ("#top-player", Side.NORTH)):
            bar = self.query_one(bar_id, PlayerBar)
            bar.side = side
            bar.player = self._seat_name(side)
            bar.to_move = not pos.over and pos.to_move == side
        seats = (self._seat_name(Side.SOUTH), self._seat_name(Side.NORTH))
        self.move_text = "Start position." if last is None else f"Ply {i}: " + describe_last(last, over=pos.over,
                                                                                               seats=seats)
        over = self.query_one(GameOverPanel)
        over.display = i == n
        if over.display:
            over.heading = "GAME OVER" if self.stored.finished or pos.over else "END OF THE RECORD"
            over.result, over.details = self.stored.verdict_parts, (f"Stores: South {pos.stores[0]} · North "
                                                                     f"{pos.stores[1]}",)
        self._draw_analysis()
        moves = self.query_one(MoveList)
        moves.moves = tuple((before.to_move.letter, a.token()) for before, a in zip(g.positions, g.actions,
                                                                                    strict=False))
        moves.current = i or None
        if not moves.inline:
            panel = self.query_one("#side-panel")
            self.call_after_refresh(panel.scroll_to, y=max(0, i - panel.size.height // 2), animate=False)
        fit_board(self, self.stored.variant)

    def on_resize(self) -> None:
        """Stack the move list under the board on narrow terminals; on one too small for the board, say what it
        needs."""
        narrow = self.size.width < NARROW
        self.set_class(narrow, "-narrow")
        for moves in self.query(MoveList):
            moves.inline = narrow
        fit_board(self, self.stored.variant)

    def action_step(self, step: int) -> None:
        """One action back or forward."""
        self.index = max(0, min(len(self.game.actions), self.index + step))

    def action_jump(self, where: int) -> None:
        """To the start (0) or the end (-1)."""
        self.index = 0 if where == 0 else len(self.game.actions)

    def action_help(self) -> None:
        """The rules of this game's variant."""
        self.app.push_screen(HelpScreen(self.stored.variant))

    def action_leave(self) -> None:
        """Back to where the replay was opened from."""
        self.dismiss()

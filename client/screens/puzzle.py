"""The puzzle screen: a position where one move alone keeps the proved value; press or click a house to answer.

The board is drawn from the side to move; only its legal houses can be chosen. The answer is sent
to the desk (`client.puzzle_desk`); the verdict says right or wrong, the seeds the move lost, the
answer and the best play after the move (a wrong move's refutation), then every move with its
proved value. `n` asks for the next puzzle.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from client.puzzle_desk import DeskError, PuzzleDesk
from client.widgets.board import Board, PitChosen
from protocol import Position, Variant
from protocol.actions import parse_action
from protocol.puzzle_messages import PuzzleMove, PuzzleResult, PuzzleShown


def house_text(variant: Variant, action: str) -> str:
    """A move as the player to move says it: `house K` of its own row, or `the swap`."""
    if action == "swap":
        return "the swap"
    bin_number = int(action)
    return f"house {bin_number if bin_number <= variant.houses else bin_number - variant.houses - 1}"


def line_text(position: Position, line: list[str]) -> str:
    """Best play in words from `position`: `North 1, South 3` (houses counted on each mover's own row)."""
    words = []
    for token in line:
        if position.over:
            break
        words.append(f"{position.to_move.name.capitalize()} {house_text(position.variant, token)[6:]}")
        position = position.play(int(token))
    return ", ".join(words) or "the game ends"


def mine(result: PuzzleResult, move: PuzzleMove) -> int:
    """The final margin of whoever chose `move` (after a swap the chooser holds South's side)."""
    return move.value if move.action == "swap" or result.side == "south" else -move.value


def verdict_text(variant: Variant, result: PuzzleResult) -> str:
    """Right or wrong in a sentence, with the seeds lost and the answer (a swap decision from the chooser's seat)."""
    played = house_text(variant, result.action)
    pie = any(m.action == "swap" for m in result.moves)
    if result.correct:
        margin = f"{mine(result, result.played):+d} for you" if pie else f"{result.value:+d} for South"
        return f"Right: {played} keeps the value, {margin}."
    loss = result.played.loss
    answer = next(m for m in result.moves if m.action == result.answer)
    instead = (f"you end {mine(result, result.played):+d} instead of {mine(result, answer):+d}" if pie
               else f"{result.played.value:+d} for South instead of {result.value:+d}")
    return (f"Wrong: {played} loses {loss} seed{'s' * (loss != 1)} ({instead}). The answer was "
            f"{house_text(variant, result.answer)}.")


def values_text(position: Position, result: PuzzleResult) -> str:
    """Every move with its proved value, the seeds it loses and the best play after it, a line each."""
    variant = position.variant

    def row(m: PuzzleMove) -> str:
        """One move's line."""
        tag = " (the answer)" if m.action == result.answer else " (yours)" if m.action == result.action else ""
        after = line_text(position.apply(parse_action(m.action)), m.line)
        return f"{house_text(variant, m.action)}{tag}: {m.value:+d}, {m.loss} lost · then {after}"

    return "Every move, proved (South's final margin):\n" + "\n".join(row(m) for m in result.moves)


class PuzzleScreen(Screen[None]):
    """One puzzle at a time: a house answers it, `n` brings the next."""

    DEFAULT_CSS = """
    PuzzleScreen #puzzle-board { height: auto; }
    PuzzleScreen #puzzle-title { text-style: bold; margin: 0 0 1 0; }
    PuzzleScreen #puzzle-prompt, PuzzleScreen #puzzle-verdict, PuzzleScreen #puzzle-values { margin: 1 0 0 0; }
    PuzzleScreen #puzzle-verdict { text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next", "Next puzzle"),
        Binding("s", "swap", "Swap sides (when offered)"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, desk: PuzzleDesk, variant: str | None = None, puzzle_id: str | None = None) -> None:
        super().__init__()
        self.desk = desk
        self.variant_text = variant
        self.wanted = puzzle_id
        self.shown: PuzzleShown | None = None
        self.position: Position | None = None
        self.result: PuzzleResult | None = None
        self.answering = False

    def compose(self) -> ComposeResult:
        """The title, the board's place, the prompt, the verdict and the values."""
        yield Static("Puzzles: find the one move that keeps the value", id="puzzle-title")
        yield Vertical(id="puzzle-board")
        yield Static("Asking for a puzzle…", id="puzzle-prompt")
        yield Static("", id="puzzle-verdict")
        yield Static("", id="puzzle-values")
        yield Footer()

    def on_mount(self) -> None:
        """Ask for the first puzzle."""
        self.ask()

    def say(self, widget: str, text: str) -> None:
        """Set one line of the screen."""
        self.query_one(f"#{widget}", Static).update(text)

    @work(exclusive=True, group="puzzle")
    async def ask(self) -> None:
        """Ask the desk for the puzzle wanted, else the next one, and show it."""
        try:
            shown = await self.desk.next(self.variant_text, self.wanted)
        except DeskError as exc:
            self.say("puzzle-prompt", f"No puzzle: {exc}")
            return
        self.wanted = None
        await self.show(shown)

    async def show(self, shown: PuzzleShown) -> None:
        """Draw a puzzle to solve."""
        variant = Variant.parse(shown.variant)
        self.shown, self.result, self.answering = shown, None, False
        self.position = Position.from_fen(variant, shown.position)
        side = self.position.to_move
        place = self.query_one("#puzzle-board", Vertical)
        await place.remove_children()
        board = Board(variant, side, animate=False, id="board")
        await place.mount(board)
        board.position = self.position
        board.show_keys = True
        board.choosable = frozenset(self.position.legal_bins())
        board.focus()
        self.call_after_refresh(board.focus)  # after the screen's own first focus
        themes = f" · {', '.join(t.replace('_', ' ') for t in shown.themes)}" if shown.themes else ""
        rating = "" if shown.player_rating is None else f" · your rating {shown.player_rating:.0f}"
        self.say("puzzle-title", f"Puzzle {shown.id} · {shown.variant} · rated {shown.rating:.0f}{themes}{rating}")
        if self.position.swap_offered:
            self.say("puzzle-prompt", "North to move, the pie rule offered: s swaps sides, a house's key sows. Find "
                                      "the one choice that keeps the value.")
        else:
            self.say("puzzle-prompt", f"{side.name.capitalize()} to move: find the one move that keeps the value "
                                      "(press a house's key or click it).")
        self.say("puzzle-verdict", "")
        self.say("puzzle-values", "")

    @on(PitChosen)
    def _chosen(self, event: PitChosen) -> None:
        """A house answers the puzzle."""
        event.stop()
        self.choose(str(event.bin))

    def action_swap(self) -> None:
        """Answer North's swap decision with the swap (when the position offers it)."""
        if self.position is not None and self.position.swap_offered:
            self.choose("swap")

    def choose(self, action: str) -> None:
        """Show the move chosen and send it as the answer."""
        if self.shown is None or self.position is None or self.result is not None or self.answering:
            return
        self.answering = True
        board = self.query_one(Board)
        board.choosable = frozenset()
        board.position = self.position.apply(parse_action(action))
        self.say("puzzle-prompt", f"You chose {house_text(self.position.variant, action)}: checking…")
        self.answer(self.shown.id, action)

    @work(exclusive=True, group="puzzle")
    async def answer(self, puzzle_id: str, action: str) -> None:
        """Send the answer and show the verdict."""
        try:
            result = await self.desk.answer(puzzle_id, action)
        except DeskError as exc:
            self.answering = False
            if self.position is not None:
                self.query_one(Board).position = self.position
                self.query_one(Board).choosable = frozenset(self.position.legal_bins())
            self.say("puzzle-prompt", f"Not answered: {exc}")
            return
        self.result = result
        self.show_result(result)

    def show_result(self, result: PuzzleResult) -> None:
        """The verdict, the line after the move, the ratings and every move's value."""
        assert self.position is not None
        after = self.position.apply(parse_action(result.action))
        then = "Then" if result.correct else "Refutation"
        rating = "" if result.player_rating is None else \
            f" Your puzzle rating: {result.player_rating:.0f}{'' if result.rated else ' (unchanged)'}."
        self.say("puzzle-prompt", ("Solved." if result.correct else "Not solved.") + rating + " n: next puzzle")
        self.say("puzzle-verdict", f"{verdict_text(self.position.variant, result)}\n{then}: "
                                   f"{line_text(after, result.played.line)}.")
        self.say("puzzle-values", values_text(self.position, result))

    def action_next(self) -> None:
        """Ask for the next puzzle."""
        self.say("puzzle-prompt", "Asking for a puzzle…")
        self.ask()


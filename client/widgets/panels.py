"""Small display widgets around the board: a player's bar with the clock, and the move list."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from protocol import Side


def format_clock(ms: int | None) -> str:
    """`m:ss`, with tenths under ten seconds; empty when there is no clock."""
    if ms is None:
        return ""
    if ms < 10_000:
        return f"0:{ms / 1000:04.1f}"
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


class PlayerBar(Static):
    """One player's line: side, name, to-move marker, and clock."""

    player: reactive[str | None] = reactive(None)
    side: reactive[Side] = reactive(Side.SOUTH)
    to_move: reactive[bool] = reactive(False)
    clock_ms: reactive[int | None] = reactive(None)
    you: reactive[bool] = reactive(False)
    away: reactive[bool] = reactive(False)

    def render(self) -> Text:
        """The bar's text."""
        self.set_class(self.to_move, "-to-move")
        marker = "▶ " if self.to_move else "  "
        text = Text(marker)
        text.append(f"{self.side.name.title():<6}", style="bold")
        text.append(f"  {self.player or '(open seat)'}")
        if self.you:
            text.append("  (you)", style="italic")
        if self.away:
            text.append("  (disconnected)", style="bold")
        clock = format_clock(self.clock_ms)
        low = self.clock_ms is not None and self.clock_ms < 10_000
        pad = max(2, 56 - len(text.plain) - len(clock))
        text.append(" " * pad)
        text.append(clock, style="bold reverse" if self.to_move else ("bold" if low else ""))
        return text


class MoveList(Widget):
    """The moves so far in bin notation with the mover's side: one per line, or wrapped inline."""

    DEFAULT_CSS = "MoveList { height: auto; }"

    moves: reactive[tuple[tuple[str, str], ...]] = reactive((), layout=True)
    """(side letter, token) per action."""
    current: reactive[int | None] = reactive(None)
    """1-based number of the action to highlight (the replay's position)."""
    inline: reactive[bool] = reactive(False, layout=True)
    """Wrap the moves in a paragraph (narrow terminals) instead of one per line."""

    def render(self) -> Text:
        """The list, newest last."""
        text = Text()
        text.append("Moves", style="bold underline")
        text.append(" " if self.inline else "\n")
        if not self.moves:
            text.append("(none yet)", style="italic")
        for i, (side, token) in enumerate(self.moves, 1):
            style = "reverse bold" if i == self.current else ""
            if self.inline:
                text.append(f"{i}.{side}{token}", style=style)
                text.append(" ")
            else:
                text.append(f"{i:3d}. {side} {token}", style=style)
                text.append("\n")
        return text

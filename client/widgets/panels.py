"""Small display widgets around the board: a screen's title, a player's bar with the clock, and the move list."""

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


CLOCK_END = 56
"""The column a player's clock ends at in a bar wider than that."""


def cut(text: str, room: int) -> str:
    """`text`, or as much of it as fits `room` columns with `…` at the end (at least the `…`)."""
    return text if len(text) <= room else text[:max(room - 1, 0)] + "…"


class PlayerBar(Static):
    """One player's line: side, name, to-move marker, and clock; a name too long for the bar is cut short."""

    player: reactive[str | None] = reactive(None)
    side: reactive[Side] = reactive(Side.SOUTH)
    to_move: reactive[bool] = reactive(False)
    clock_ms: reactive[int | None] = reactive(None)
    you: reactive[bool] = reactive(False)
    away: reactive[bool] = reactive(False)

    def render(self) -> Text:
        """The bar's text: the clock ends at `CLOCK_END`, or at the bar's right edge when the bar or the name is too
        long for that; a name too long for the bar is cut short."""
        self.set_class(self.to_move, "-to-move")
        tags: list[tuple[str, str]] = []
        if self.you:
            tags.append(("  (you)", "italic"))
        if self.away:
            tags.append(("  (disconnected)", "bold"))
        clock = format_clock(self.clock_ms)
        width = self.content_size.width or CLOCK_END
        side = f"{self.side.name.title():<6}"
        room = width - len(f"▶ {side}  ") - sum(len(tag) for tag, _ in tags) - 2 - len(clock)
        text = Text("▶ " if self.to_move else "  ")
        text.append(side, style="bold")
        text.append(f"  {cut(self.player or '(open seat)', room)}")
        for tag, style in tags:
            text.append(tag, style=style)
        low = self.clock_ms is not None and self.clock_ms < 10_000
        text.append(" " * max(2, min(CLOCK_END, width) - len(text.plain) - len(clock)))
        text.append(clock, style="bold reverse" if self.to_move else ("bold" if low else ""))
        return text


TITLE_NAME_MIN = 10
"""The fewest columns a title cuts a variant's name to: `kalah(6,4)`, or the first 9 characters of a longer one."""


class TitleBar(Widget):
    """A screen's title on one line: `lead` in bold, then `before`, the `variant`'s name and `after`; a name too long
    for the line is cut short with `…` (what follows it stays), down to `TITLE_NAME_MIN` columns. Where even that is
    not enough, `before` (the match) gives way, then `lead`, and the name is cut to what is left: `after` (the role
    and the ply, or the position) stays to the last."""

    DEFAULT_CSS = "TitleBar { height: 1; }"

    lead: reactive[str] = reactive("")
    before: reactive[str] = reactive("")
    variant: reactive[str] = reactive("")
    after: reactive[str] = reactive("")

    def render(self) -> Text:
        """The title cut to the width it has: the variant's name first, down to `TITLE_NAME_MIN`, then the match,
        the lead and the rest of the name; the line's end last."""
        width = self.content_size.width
        forms = [(self.lead, self.before), (self.lead, " · " if self.lead else ""), ("", "")]
        for lead, before in forms:
            room = width - len(lead) - len(before) - len(self.after)
            if not width or room >= min(TITLE_NAME_MIN, len(self.variant)):
                break
        text = Text()
        text.append(lead, style="bold")
        text.append(f"{before}{cut(self.variant, max(room, 1))}{self.after}")
        if width:
            text.truncate(width, overflow="ellipsis")
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
    marks: reactive[tuple[str, ...]] = reactive(())
    """A review's mark after each action (`?!`, `?`, `??`, `~` before an estimate's; empty for none)."""

    def render(self) -> Text:
        """The list, newest last."""
        text = Text()
        text.append("Moves", style="bold underline")
        text.append(" " if self.inline else "\n")
        if not self.moves:
            text.append("(none yet)", style="italic")
        for i, (side, token) in enumerate(self.moves, 1):
            style = "reverse bold" if i == self.current else ""
            mark = self.marks[i - 1] if i <= len(self.marks) else ""
            if self.inline:
                text.append(f"{i}.{side}{token}{mark}", style=style)
                text.append(" ")
            else:
                text.append(f"{i:3d}. {side} {token}", style=style)
                if mark:
                    text.append(f" {mark}", style="bold")
                text.append("\n")
        return text

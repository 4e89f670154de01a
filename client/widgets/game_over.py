"""The game-over panel under the notice: who won, by how much and why, in full where the terminal has the lines,
compact where it is short."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from client.widgets.panels import cut

RESULT_NAME_MIN = 10
"""The fewest columns a result line cuts the winner's name to before its reason takes a line of its own."""

COMPACT_LINES = 2
"""Lines of the compact panel: the result, then its last detail line (the keys), or the reason where the result line
has no room for it."""

FRAME_LINES = 2
"""Lines of the full panel's border (`kalah.tcss`: `#game-over`)."""

FRAME_COLUMNS = 4
"""Columns of the full panel's border and padding, both sides."""


def fit_result(who: str, what: str, why: str, room: int) -> list[str]:
    """The result `who` + `what` + `why` (`bob`, ` (North) wins by 4`, ` (resignation)`) in `room` columns: one line,
    a long name cut with `…` first, down to `RESULT_NAME_MIN` columns; where even that leaves no room, two lines (who
    won and by how much, then why). The name, never the reason, gives way."""
    def named(rest: str) -> str:
        return (cut(who, room - len(rest)) if who else "") + rest

    whole = what + why
    if len(who) + len(whole) <= room or (who and RESULT_NAME_MIN + len(whole) <= room):
        return [named(whole)]
    return [named(what), why.strip()] if why else [named(what)]


class GameOverPanel(Widget):
    """The end of a game: in full, a heading, the result (`fit_result`) and detail lines in a border; compact
    (`COMPACT_LINES`, no border) where the screen sets `compact` for a short terminal. Every line is cut to the
    panel's width with `…`, never wrapped."""

    heading: reactive[str] = reactive("", layout=True)
    result: reactive[tuple[str, str, str]] = reactive(("", "", ""), layout=True)
    """The winner's name (empty for none), what follows it, and why (`result_parts`)."""
    details: reactive[tuple[str, ...]] = reactive((), layout=True)
    """Lines under the result in full (the stores, the keys); the compact panel keeps the last."""
    compact: reactive[bool] = reactive(False, layout=True)

    def watch_compact(self, compact: bool) -> None:
        """Drop the border in the compact form (`kalah.tcss`: `#game-over.-compact`)."""
        self.set_class(compact, "-compact")

    def lines(self, room: int) -> list[str]:
        """The panel's lines for `room` columns inside it, in its present form."""
        result = fit_result(*self.result, room)
        if self.compact:
            return [*result, *self.details[-1:]][:COMPACT_LINES]
        return [self.heading, *result, *self.details]

    def full_height(self, width: int) -> int:
        """Lines the full panel takes at `width` columns, border included."""
        return FRAME_LINES + 1 + len(fit_result(*self.result, width - FRAME_COLUMNS)) + len(self.details)

    def render(self) -> Text:
        """The lines, each cut to the panel's width: the heading in bold in full, the result in bold when compact."""
        room = self.content_size.width
        text = Text(justify="center", no_wrap=True, overflow="ellipsis")
        for i, line in enumerate(self.lines(room or 1000)):
            text.append("\n" if i else "")
            text.append(cut(line, room) if room else line, style="bold" if i == 0 else "")
        return text

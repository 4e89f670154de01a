"""What terminal a board screen needs, worked out from its layout, and the line it shows instead in a smaller one.

The game and replay screens stack, top to bottom: the title, the opponent's bar, the board (two
rows of houses three lines high, the stores beside them; then the line of house keys for a
player), the player's bar, the notice (a blank line and two lines: the last move, then the prompt, or in its place
why a key did nothing, what the server refused, or the replay's solver value) and the footer. Once the game is over,
the game-over panel goes under the notice, in place of the house keys: compact (`COMPACT_LINES`: the result with its
reason, then the keys) in the line of the keys and the notice's blank line, so every board screen needs the same
lines in play and at the end; in full (with its border, heading and stores) where the terminal has the lines. The
board column has 1 column of padding each side on a narrow terminal, and 2 columns and 1 line on a
wide one (`kalah.tcss`: `#board-column`). The bars and the notice under the board are
`TEXT_WIDTH` columns where the terminal has room; in a narrower one they take the columns it has,
down to the board's width (`board_width`: the houses' count and the digits of the largest count a
pit can show) or `MIN_TEXT_WIDTH`, whichever is wider: a bar then cuts a long name short, and the
notice wraps its lines, so it takes two lines more (the title stays one line: a long variant name is cut short, as a
bar cuts a name). A smaller terminal shows one line instead of a
cut-off board: the size the variant needs and that enlarging the window brings the board back.
Everything else goes on: the game is followed, the keys in the footer work, and the board returns
as it is.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Static

from client.styles import NARROW
from client.widgets.board import board_width, count_digits
from client.widgets.game_over import COMPACT_LINES, GameOverPanel
from protocol import Variant

TEXT_WIDTH = 66
"""Columns of the player bars and the notice under the board where the terminal has room (`kalah.tcss`: `.player`,
`#notice`): a 6-house board's width."""

MIN_TEXT_WIDTH = 40
"""The fewest columns of the bars and the notice: a bar's side, a name of 13 characters with `(you)`, and its clock."""

TEXT_PARTS = ".player, #notice, #game-over"
"""The parts of the board column as wide as the bars (`kalah.tcss`)."""

BOARD_LINES = 6
"""Lines of the board: two rows of houses, three lines each (the stores are as high as both)."""

AROUND_BOARD_LINES = 7
"""Lines around the board: the title, two player bars, the notice (a blank line and two lines) and the footer. The
notice's blank line is the move list's border under a narrow board, and a wide board column's bottom padding stands
for it: a line the end of a game may take."""

END_LINES = COMPACT_LINES - 1
"""Lines under the board's rows: a player's house keys in play; once the game is over, the compact game-over panel,
less the notice's blank line it takes too. A spectator and a replay count them as a player does, as the end of a
game comes unannounced."""

WRAPPED_LINES = 2
"""Lines the notice takes more when the bars are narrower than `TEXT_WIDTH`: each of its two lines (the last move,
the prompt) wraps once."""


def padding(wide: bool) -> int:
    """Columns of the board column's padding, both sides (`wide`: a terminal of `NARROW` columns or more)."""
    return 4 if wide else 2


def least_text_width(variant: Variant) -> int:
    """The fewest columns the bars and the notice of `variant` may take: the board's width, but no fewer than
    `MIN_TEXT_WIDTH` and no more than `TEXT_WIDTH`."""
    return min(max(board_width(variant.houses, count_digits(variant)), MIN_TEXT_WIDTH), TEXT_WIDTH)


def text_width(variant: Variant, columns: int, *, wide: bool) -> int:
    """Columns of the bars and the notice in a terminal of `columns`: `TEXT_WIDTH` where it has room, else what it
    has, down to `least_text_width`."""
    return max(least_text_width(variant), min(TEXT_WIDTH, columns - padding(wide)))


def needed_size(variant: Variant, *, wide: bool, columns: int | None = None) -> tuple[int, int]:
    """Columns and lines a board screen of `variant` needs, in play and once over (`wide`: laid out for a terminal of
    `NARROW` columns or more, with more padding); the lines are those needed at `columns` (None: at the fewest
    columns), as a narrower notice takes more."""
    width = max(board_width(variant.houses, count_digits(variant)), MIN_TEXT_WIDTH) + padding(wide)
    fewest = max(width, NARROW) if wide else width
    wrapped = text_width(variant, fewest if columns is None else columns, wide=wide) < TEXT_WIDTH
    height = (AROUND_BOARD_LINES + BOARD_LINES + END_LINES + (2 if wide else 0)
              + (WRAPPED_LINES if wrapped else 0))
    return width, height


def too_small_text(variant: Variant, size: tuple[int, int], needed: tuple[int, int]) -> str:
    """The line shown instead of the board: the terminal's size, what the variant needs, and what to do."""
    return (f"This terminal is {size[0]} columns by {size[1]} lines: {variant.text()} needs at least {needed[0]} by "
            f"{needed[1]}. Enlarge the window and the board comes back as it was (nothing is lost meanwhile; q quits).")


def fit_board(screen: Screen[Any], variant: Variant) -> bool:
    """Show `screen`'s title and body if the terminal holds the board, its bars and notice as wide as it has room for,
    else its `#too-small` line saying what size is needed; its game-over panel in full where the lines beyond that
    hold it, else compact; whether the board is shown."""
    size = screen.size
    wide = size.width >= NARROW
    width, height = needed_size(variant, wide=wide, columns=size.width)
    fits = size.width >= width and size.height >= height
    line = screen.query_one("#too-small", Static)
    if fits:
        columns = text_width(variant, size.width, wide=wide)
        for part in screen.query(TEXT_PARTS):
            part.styles.width = columns
        for panel in screen.query(GameOverPanel):
            panel.compact = size.height - height < panel.full_height(columns) - COMPACT_LINES
    else:
        line.update(too_small_text(variant, (size.width, size.height), (width, height)))
    line.display = not fits
    for part in screen.query("#title, #game-body"):
        part.display = fits
    return fits

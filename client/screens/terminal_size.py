"""What terminal a board screen needs, worked out from its layout, and the line it shows instead in a smaller one.

The game and replay screens stack, top to bottom: the title, the opponent's bar, the board (two
rows of houses three lines high, the stores beside them; then the line of house keys for a
player), the player's bar, the notice (a blank line and two lines) and the footer; the board
column has 1 column of padding each side on a narrow terminal, and 2 columns and 1 line on a
wide one (`kalah.tcss`: `#board-column`). Its width is the board's (`board_width`: the houses'
count and the digits of the largest count a pit can show) or the bars' and the notice's
(`TEXT_WIDTH`), whichever is wider. A smaller terminal shows one line instead of a cut-off board:
the size the variant needs and that enlarging the window brings the board back. Everything else
goes on: the game is followed, the keys in the footer work, and the board returns as it is.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Static

from client.styles import NARROW
from client.widgets.board import board_width, count_digits
from protocol import Variant

TEXT_WIDTH = 66
"""Columns of the player bars and the notice under the board (`kalah.tcss`: `.player`, `#notice`)."""

BOARD_LINES = 6
"""Lines of the board: two rows of houses, three lines each (the stores are as high as both)."""

AROUND_BOARD_LINES = 7
"""Lines around the board: the title, two player bars, the notice (a blank line and two lines) and the footer."""


def needed_size(variant: Variant, *, keys: bool, wide: bool) -> tuple[int, int]:
    """Columns and lines a board screen of `variant` needs (`keys`: with the line of house keys; `wide`: laid out for
    a terminal of `NARROW` columns or more, with more padding)."""
    width = max(board_width(variant.houses, count_digits(variant)), TEXT_WIDTH) + (4 if wide else 2)
    height = AROUND_BOARD_LINES + BOARD_LINES + (1 if keys else 0) + (2 if wide else 0)
    return width, height


def too_small_text(variant: Variant, size: tuple[int, int], needed: tuple[int, int]) -> str:
    """The line shown instead of the board: the terminal's size, what the variant needs, and what to do."""
    return (f"This terminal is {size[0]} columns by {size[1]} lines: {variant.text()} needs at least {needed[0]} by "
            f"{needed[1]}. Enlarge the window and the board comes back as it was (nothing is lost meanwhile; q quits).")


def fit_board(screen: Screen[Any], variant: Variant, *, keys: bool) -> bool:
    """Show `screen`'s title and body if the terminal holds the board, else its `#too-small` line saying what size is
    needed; whether the board is shown."""
    size = screen.size
    needed = needed_size(variant, keys=keys, wide=size.width >= NARROW)
    fits = size.width >= needed[0] and size.height >= needed[1]
    line = screen.query_one("#too-small", Static)
    if not fits:
        line.update(too_small_text(variant, (size.width, size.height), needed))
    line.display = not fits
    for part in screen.query("#title, #game-body"):
        part.display = fits
    return fits

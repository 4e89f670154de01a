"""The Kalah board widget: two rows of houses and two stores, drawn from one side.

Attributes down (position, viewpoint, choosable bins, the last sowing, whether to show the
house keys), messages up: a clicked `Pit` (or key label) posts `Pit.Clicked` to the board,
which posts `PitChosen` when that pit may be chosen now, and `ChoiceRefused` when it may not
(or a house key names no house), so the screen can say why. The board holds no game state of
its own: only its cursor and animation.

Every board up to 12 houses fits 80 columns: houses narrow from 8 to 5 columns as their number
grows (`house_width`), and under the player's own row a line shows the key of each house.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from protocol import Position, Side, Variant

HOUSE_KEYS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "minus", "equals_sign")
"""Key for the k-th house from the left of the bottom row (up to 12 houses: 1-9, 0, -, =)."""

KEY_LABELS = "1234567890-="
"""What each house key shows on the keyboard."""

STORE_WIDTH = 9
"""Columns of a store."""

MAX_BOARD_WIDTH = 78
"""Columns the widest board may take: an 80-column terminal less a margin column each side."""


COMPACT_BELOW = 8
"""Houses narrower than this have no side edges: a bin number needs 8 columns between two corners."""


def count_digits(variant: Variant) -> int:
    """Digits of the largest count a pit of `variant` can show: every seed of the board in one pit."""
    return len(str(2 * variant.houses * variant.seeds))


def house_width(houses: int, digits: int = 1) -> int:
    """Columns of one house: 8, or less on boards that would not fit `MAX_BOARD_WIDTH` (5 for 11 and 12), but never
    too narrow for a count of `digits` digits (5 columns hold 4 digits: 200 seeds a house on 12 houses)."""
    width = max(5, min(8, (MAX_BOARD_WIDTH - 2 * STORE_WIDTH) // houses))
    return max(width, digits + (0 if width < COMPACT_BELOW else 2))


def board_width(houses: int, digits: int = 1) -> int:
    """Columns of the whole board: two stores and one row of houses."""
    return 2 * STORE_WIDTH + houses * house_width(houses, digits)


def keys_text(houses: int) -> str:
    """The house keys of a board in words: `1`, `1 to 6`, `1 to 9, 0, - and =`."""
    if houses == 1:
        return "1"
    if houses <= 9:
        return f"1 to {houses}"
    keys: list[str] = ["1 to 9", *KEY_LABELS[9:houses]]
    return ", ".join(keys[:-1]) + " and " + keys[-1]


ANIMATION_STEP = 0.06
"""Seconds between two seeds of the sowing animation."""


class PitChosen(Message):
    """The user chose a pit (house) of the board."""

    def __init__(self, bin_number: int) -> None:
        super().__init__()
        self.bin = bin_number


class ChoiceRefused(Message):
    """A house key or click that chooses nothing now: `key` is the key pressed (None for a click or Enter)."""

    def __init__(self, bin_number: int | None, key: str | None) -> None:
        super().__init__()
        self.bin = bin_number
        """The pit asked for; None when the key names no house of this board."""
        self.key = key


class Pit(Static):
    """One house or store: its seed count, with the bin number as the border title."""

    class Clicked(Message):
        """The user clicked a pit or its key (the board decides whether that chooses it)."""

        def __init__(self, bin_number: int) -> None:
            super().__init__()
            self.bin = bin_number

    def __init__(self, bin_number: int, store: bool = False, width: int | None = None) -> None:
        super().__init__("", id=f"pit-{bin_number}", classes="store" if store else "house")
        self.bin = bin_number
        self.border_title = str(bin_number)
        if width is not None:
            self.styles.width = width

    def on_click(self, event: events.Click) -> None:
        """Tell the board this pit was clicked."""
        event.stop()
        self.post_message(self.Clicked(self.bin))


class HouseKey(Static):
    """The key that chooses the house above it, under the player's own row."""

    def __init__(self, bin_number: int, label: str, width: int) -> None:
        super().__init__(label, id=f"key-{bin_number}", classes="house-key")
        self.bin = bin_number
        self.styles.width = width

    def on_click(self, event: events.Click) -> None:
        """A click on the key label chooses its house, as a click on the house does."""
        event.stop()
        self.post_message(Pit.Clicked(self.bin))


def bottom_row(variant: Variant, side: Side) -> list[int]:
    """Bins of `side`'s houses left to right, as seen by the player of `side`."""
    h = variant.houses
    first = 1 if side == Side.SOUTH else h + 2
    return list(range(first, first + h))


def top_row(variant: Variant, side: Side) -> list[int]:
    """Bins of the opponent's houses left to right, as seen by the player of `side`."""
    return list(reversed(bottom_row(variant, side.other)))


def store_bin(variant: Variant, side: Side) -> int:
    """Bin number of `side`'s store."""
    return variant.houses + 1 if side == Side.SOUTH else 2 * variant.houses + 2


class Board(Widget, can_focus=True):
    """A board drawn from `viewpoint`: that side's houses along the bottom, its store right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", "left", show=False),
        Binding("right", "cursor(1)", "right", show=False),
        Binding("enter", "choose_cursor", "sow", show=False),
        *(Binding(k, f"house({i})", f"house {i + 1}", show=False) for i, k in enumerate(HOUSE_KEYS)),
    ]

    position: reactive[Position | None] = reactive(None, layout=False)
    choosable: reactive[frozenset[int]] = reactive(frozenset())
    path: reactive[tuple[int, ...]] = reactive(())
    captured: reactive[tuple[int, ...]] = reactive(())
    cursor: reactive[int | None] = reactive(None)
    shown: reactive[int] = reactive(0)
    show_keys: reactive[bool] = reactive(False)
    """Whether to show the key of each house under the bottom row (for a player, not a spectator)."""

    def __init__(self, variant: Variant, viewpoint: Side = Side.SOUTH, *, animate: bool = True,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.variant = variant
        self.viewpoint = viewpoint
        self.animate_sowing = animate
        self._timer: Timer | None = None
        self._ready = False

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Opponent's store left, the two rows of houses, own store right; the house keys below."""
        v, me = self.variant, self.viewpoint
        width = house_width(v.houses, count_digits(v))
        with Horizontal(id="board-row"):
            yield Pit(store_bin(v, me.other), store=True)
            with Vertical(id="houses"):
                with Horizontal(classes="row top"):
                    for b in top_row(v, me):
                        yield Pit(b, width=width)
                with Horizontal(classes="row bottom"):
                    for b in bottom_row(v, me):
                        yield Pit(b, width=width)
            yield Pit(store_bin(v, me), store=True)
        with Horizontal(id="key-row"):
            yield Static("keys", classes="keys-label")
            for label, b in zip(KEY_LABELS, bottom_row(v, me), strict=False):
                yield HouseKey(b, label, width)

    def on_mount(self) -> None:
        """Draw whatever was set before mounting."""
        self.set_class(house_width(self.variant.houses, count_digits(self.variant)) < COMPACT_BELOW, "-compact")
        self._ready = True
        self._refresh_pits()

    def watch_show_keys(self) -> None:
        """Show or hide the line of house keys."""
        self._refresh_pits()

    def set_viewpoint(self, side: Side) -> None:
        """Redraw the board from another side (after a pie swap, for instance)."""
        if side != self.viewpoint:
            self.viewpoint = side
            self.refresh(recompose=True)
            self.call_after_refresh(self._refresh_pits)

    # --- watchers ----------------------------------------------------------------------

    def watch_position(self) -> None:
        """New seed counts."""
        self._refresh_pits()

    def watch_choosable(self, choosable: frozenset[int]) -> None:
        """Keep the cursor on a choosable pit."""
        if choosable and self.cursor not in choosable:
            order = bottom_row(self.variant, self.viewpoint) + top_row(self.variant, self.viewpoint)
            start = order.index(self.cursor) if self.cursor in order else 0
            rotated = order[start:] + order[:start]
            self.cursor = next(b for b in rotated if b in choosable)
        self._refresh_pits()

    def watch_cursor(self) -> None:
        """Move the cursor highlight."""
        self._refresh_pits()

    def watch_captured(self) -> None:
        """Mark captured houses."""
        self._refresh_pits()

    def watch_path(self, path: tuple[int, ...]) -> None:
        """Highlight a new sowing, seed by seed when animating."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.animate_sowing and path and self._ready:
            self.shown = 0
            self._timer = self.set_interval(ANIMATION_STEP, self._step, repeat=len(path))
        else:
            self.shown = len(path)

    def _step(self) -> None:
        """One more seed of the sowing animation."""
        self.shown = min(len(self.path), self.shown + 1)

    def watch_shown(self) -> None:
        """Redraw the animated highlight."""
        self._refresh_pits()

    # --- drawing -------------------------------------------------------------------------

    def _refresh_pits(self) -> None:
        """Set every pit's count and classes from the attributes."""
        if not self._ready:
            return
        pos = self.position
        sown = set(self.path[: self.shown])
        landed = self.path[self.shown - 1] if self.path and self.shown else None
        own = set(bottom_row(self.variant, self.viewpoint))
        interactive = bool(self.choosable)
        for pit in self.query(Pit):
            b = pit.bin
            pit.update("" if pos is None else str(pos.pits[b - 1]))
            pit.set_class(b in self.choosable, "-legal")
            pit.set_class(interactive and b in own and b not in self.choosable, "-unavailable")
            pit.set_class(interactive and b == self.cursor, "-cursor")
            pit.set_class(b in sown, "-sown")
            pit.set_class(b == landed, "-landed")
            pit.set_class(b in self.captured, "-captured")
        for key in self.query(HouseKey):
            key.set_class(key.bin in self.choosable, "-legal")
        for row in self.query("#key-row"):
            row.display = self.show_keys

    # --- choosing ----------------------------------------------------------------------

    def _ordered(self, bins: frozenset[int]) -> list[int]:
        """Bins in screen order: bottom row left to right, then top row left to right."""
        order = bottom_row(self.variant, self.viewpoint) + top_row(self.variant, self.viewpoint)
        return [b for b in order if b in bins]

    @on(Pit.Clicked)
    def _pit_clicked(self, event: Pit.Clicked) -> None:
        """A click on a pit chooses it, if it may be chosen."""
        event.stop()
        self.choose(event.bin)

    def choose(self, bin_number: int, key: str | None = None) -> None:
        """Post `PitChosen` if that pit may be chosen now, else `ChoiceRefused`."""
        if bin_number in self.choosable:
            self.cursor = bin_number
            self.post_message(PitChosen(bin_number))
        else:
            self.post_message(ChoiceRefused(bin_number, key))

    def action_cursor(self, step: int) -> None:
        """Move the cursor to the previous or next choosable pit."""
        order = self._ordered(self.choosable)
        if not order:
            return
        index = order.index(self.cursor) if self.cursor in order else -step
        self.cursor = order[(index + step) % len(order)]

    def action_choose_cursor(self) -> None:
        """Choose the pit under the cursor."""
        if self.cursor is not None and self.choosable:
            self.choose(self.cursor)
        else:
            self.post_message(ChoiceRefused(self.cursor, None))

    def action_house(self, index: int) -> None:
        """Choose the `index`-th house from the left of the bottom row (a key past the last: refused)."""
        row = bottom_row(self.variant, self.viewpoint)
        if index < len(row):
            self.choose(row[index], KEY_LABELS[index])
        else:
            self.post_message(ChoiceRefused(None, KEY_LABELS[index]))

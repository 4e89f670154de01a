"""The Kalah board widget: two rows of houses and two stores, drawn from one side.

Attributes down (position, viewpoint, choosable bins, the last sowing), messages up: a
clicked `Pit` posts `Pit.Clicked` to the board, which posts `PitChosen` when that pit may be
chosen now. The board holds no game state of its own: only its cursor and animation.
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

ANIMATION_STEP = 0.06
"""Seconds between two seeds of the sowing animation."""


class PitChosen(Message):
    """The user chose a pit (house) of the board."""

    def __init__(self, bin_number: int) -> None:
        super().__init__()
        self.bin = bin_number


class Pit(Static):
    """One house or store: its seed count, with the bin number as the border title."""

    class Clicked(Message):
        """The user clicked a pit (the board decides whether that chooses it)."""

        def __init__(self, pit: Pit) -> None:
            super().__init__()
            self.pit = pit

        @property
        def control(self) -> Pit:
            """The pit clicked."""
            return self.pit

    def __init__(self, bin_number: int, store: bool = False) -> None:
        super().__init__("", id=f"pit-{bin_number}", classes="store" if store else "house")
        self.bin = bin_number
        self.border_title = str(bin_number)

    def on_click(self, event: events.Click) -> None:
        """Tell the board this pit was clicked."""
        event.stop()
        self.post_message(self.Clicked(self))


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
        """Opponent's store left, the two rows of houses, own store right."""
        v, me = self.variant, self.viewpoint
        with Horizontal(id="board-row"):
            yield Pit(store_bin(v, me.other), store=True)
            with Vertical(id="houses"):
                with Horizontal(classes="row top"):
                    for b in top_row(v, me):
                        yield Pit(b)
                with Horizontal(classes="row bottom"):
                    for b in bottom_row(v, me):
                        yield Pit(b)
            yield Pit(store_bin(v, me), store=True)

    def on_mount(self) -> None:
        """Draw whatever was set before mounting."""
        self._ready = True
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

    # --- choosing ----------------------------------------------------------------------

    def _ordered(self, bins: frozenset[int]) -> list[int]:
        """Bins in screen order: bottom row left to right, then top row left to right."""
        order = bottom_row(self.variant, self.viewpoint) + top_row(self.variant, self.viewpoint)
        return [b for b in order if b in bins]

    @on(Pit.Clicked)
    def _pit_clicked(self, event: Pit.Clicked) -> None:
        """A click on a pit chooses it, if it may be chosen."""
        event.stop()
        self.choose(event.pit.bin)

    def choose(self, bin_number: int) -> None:
        """Post `PitChosen` if that pit may be chosen now."""
        if bin_number in self.choosable:
            self.cursor = bin_number
            self.post_message(PitChosen(bin_number))

    def action_cursor(self, step: int) -> None:
        """Move the cursor to the previous or next choosable pit."""
        order = self._ordered(self.choosable)
        if not order:
            return
        index = order.index(self.cursor) if self.cursor in order else -step
        self.cursor = order[(index + step) % len(order)]

    def action_choose_cursor(self) -> None:
        """Choose the pit under the cursor."""
        if self.cursor is not None:
            self.choose(self.cursor)

    def action_house(self, index: int) -> None:
        """Choose the `index`-th house from the left of the bottom row."""
        row = bottom_row(self.variant, self.viewpoint)
        if index < len(row):
            self.choose(row[index])

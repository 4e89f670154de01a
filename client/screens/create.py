"""The create-match form: every variant option, a time control, the seat and the opponent."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from client.opponents import BOT_LEVELS, DEFAULT_BOT_LEVEL, bot_label, bot_opponent
from client.widgets.flag_box import FlagBox
from protocol import Capture, KalahError, Leftover, TimeControl, Variant
from protocol.messages import CreateMatch
from protocol.variant import MAX_HOUSES, MAX_SEEDS


def build_variant(houses: str, seeds: str, capture: str, leftover: str, clock: str,
                  flags: dict[str, bool]) -> Variant:
    """The variant a filled-in form describes; raises `KalahError` naming the bad field."""
    try:
        h, s = int(houses), int(seeds)
    except ValueError:
        raise KalahError("houses and seeds must be whole numbers") from None
    tc = TimeControl.parse(clock.strip()) if clock.strip() else None
    return Variant(houses=h, seeds=s, capture=Capture(capture), leftover=Leftover(leftover),
                   time_control=tc, **flags)


def opponent_choices(bots_only: bool = False) -> list[tuple[str, str]]:
    """The form's opponents as (label, `opponent` value): an open seat (value "") unless `bots_only`, then the bots."""
    anyone = [] if bots_only else [("Anyone (open seat)", "")]
    return anyone + [(bot_label(n), bot_opponent(n)) for n in BOT_LEVELS]


FLAG_LABELS = {
    "extra_turn": "Extra turn (off: KalahAlt)",
    "clockwise": "Clockwise sowing",
    "relay": "Relay sowing",
    "majority_end": "Majority end",
    "pie": "Pie rule (North may swap)",
    "opening_transfer": "Opening transfer",
}


class CreateMatchScreen(ModalScreen[CreateMatch | None]):
    """Fill in a match; dismisses with the `CreateMatch` message, or None if cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "create", "Create", priority=True),
    ]

    def __init__(self, *, bots_only: bool = False) -> None:
        super().__init__()
        self.bots_only = bots_only
        """Offer only hosted bots as opponents (on a server no one else can reach, an open seat never fills)."""

    def compose(self) -> ComposeResult:
        """The form."""
        with VerticalScroll(id="create-form"):
            yield Static("[b]Create a match[/b]", id="create-title")
            with Grid(id="create-grid"):
                yield Label(f"Houses (1-{MAX_HOUSES})")
                yield Input("6", id="houses", restrict=r"\d*", max_length=2, compact=True)
                yield Label(f"Seeds (1-{MAX_SEEDS})")
                yield Input("4", id="seeds", restrict=r"\d*", max_length=len(str(MAX_SEEDS)), compact=True)
                yield Label("Capture")
                yield Select([(c.value, c.value) for c in Capture], value="standard", id="capture",
                             allow_blank=False, compact=True)
                yield Label("Leftover seeds go to")
                yield Select([(x.value, x.value) for x in Leftover], value="owner", id="leftover",
                             allow_blank=False, compact=True)
                yield Label("Clock (300+5 or 10/move)")
                yield Input("", id="clock", placeholder="none", compact=True)
                yield Label("Your seat")
                yield Select([("South (moves first)", "south"), ("North", "north"), ("Random", "random")],
                             value="south", id="seat", allow_blank=False, compact=True)
                yield Label("Opponent")
                yield Select(opponent_choices(self.bots_only), value=bot_opponent(DEFAULT_BOT_LEVEL),
                             id="opponent", allow_blank=False, compact=True)
            for key, label in FLAG_LABELS.items():
                yield FlagBox(label, value=key == "extra_turn", id=key, compact=True)
            yield Static(id="form-error")
            yield Static("Tab: next field · Space: toggle · Enter / ctrl+s: create · Esc: cancel", classes="hint")
            with Horizontal(id="form-buttons"):
                yield Button("Create", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def _value(self, widget_id: str) -> str:
        """Text of an input or select."""
        w = self.query_one(f"#{widget_id}")
        if isinstance(w, Input):
            return w.value
        assert isinstance(w, Select)
        return str(w.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Create or cancel."""
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self.action_create()

    def on_input_submitted(self) -> None:
        """Enter in a text field creates the match."""
        self.action_create()

    def action_create(self) -> None:
        """Check the form and dismiss with the `create` message, or show what is wrong."""
        flags = {key: self.query_one(f"#{key}", Checkbox).value for key in FLAG_LABELS}
        try:
            variant = build_variant(self._value("houses"), self._value("seeds"), self._value("capture"),
                                    self._value("leftover"), self._value("clock"), flags)
        except (KalahError, ValueError) as exc:
            self.query_one("#form-error", Static).update(f"⚠ {exc}")
            return
        seat = self._value("seat")
        opponent = self._value("opponent") or None
        self.dismiss(CreateMatch(variant=variant.text(), seat=seat,  # type: ignore[arg-type]
                                 opponent=opponent, rated=opponent is None))

    def action_cancel(self) -> None:
        """Close without creating."""
        self.dismiss(None)

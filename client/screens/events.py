"""The events screen: the server's events (arenas, Swiss, round-robins), one event's standings followed live,
entering and leaving, and the way to one's own game in it."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from client.ui_messages import ErrorReceived, EventListReceived, EventStateReceived, Outgoing
from protocol.event_messages import (
    EntrantRow,
    EventState,
    EventSummary,
    FetchEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
)
from protocol.messages import SyncMatch

EVENTS_SHOWN = 50
"""How many of the newest events the list asks for."""

EVENT_REQUESTS = frozenset({"events", "event", "event_join", "event_leave"})
"""Requests whose refusals this screen shows (as one line under its tables)."""


def event_cells(e: EventSummary) -> tuple[str, ...]:
    """One line of the event list: id, name, kind, status, round, entrants, variant."""
    rounds = f"{e.round}/{e.rounds}" if e.rounds else (str(e.round) if e.round else "-")
    return (e.event_id, e.name, e.kind.value, e.status, rounds, f"{e.entrants}/{e.max_entrants}", e.variant)


def entrant_cells(row: EntrantRow) -> tuple[str, ...]:
    """One line of an event's standings: rank, name, score (an arena's points), tiebreaks, W-D-L, paused."""
    score = f"{row.points}{' *' if row.on_fire else ''}" if row.points is not None else f"{row.score:g}"
    return (str(row.rank), row.name, row.kind, score, f"{row.buchholz:g}", f"{row.sonneborn_berger:g}",
            f"{row.wins}-{row.draws}-{row.losses}", "" if row.active else "left")


def my_game(state: EventState, name: str) -> str | None:
    """The match id of `name`'s game under way in the event, if any (the newest)."""
    games = [p.match_id for p in state.pairings if p.result == "*" and name in (p.south, p.north)]
    return games[-1] if games else None


class EventsScreen(Screen[None]):
    """Events of the server; Enter follows one's standings; keys enter, leave and open one's game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "join", "Enter event"),
        Binding("l", "leave_event", "Leave event"),
        Binding("m", "my_game", "My game"),
        Binding("g", "refresh", "Refresh"),
        Binding("escape", "back", "Lobby"),
    ]

    AUTO_FOCUS = "#events"

    def __init__(self, name: str) -> None:
        super().__init__()
        self.player_name = name
        """Who this session is (to find one's own line and game)."""
        self.events: list[EventSummary] = []
        self.chosen: str | None = None
        """The id of the event shown and followed (None: none chosen yet)."""
        self.state: EventState | None = None
        """The shown event as last sent by the server (None: not come yet)."""

    def compose(self) -> ComposeResult:
        """The event list, the chosen event's heading and standings, and the error line."""
        yield Static("[b]Kalah Arena[/b] · events", id="title")
        with VerticalScroll(id="tables"):
            yield Label("[b]Events[/b] — Enter to see the standings", classes="table-title")
            yield DataTable(id="events", cursor_type="row", zebra_stripes=True)
            yield Label("No event chosen.", id="event-heading", classes="table-title")
            yield DataTable(id="event-standings", cursor_type="row", zebra_stripes=True)
            yield Static(id="event-game", classes="hint")
            yield Static(id="event-error")
        yield Footer()

    def on_mount(self) -> None:
        """Set up the columns and ask for the list."""
        self.query_one("#events", DataTable).add_columns("event", "name", "kind", "status", "round", "entrants",
                                                         "variant")
        self.query_one("#event-standings", DataTable).add_columns("#", "entrant", "kind", "score", "buchholz",
                                                                  "s-b", "w-d-l", "")
        self.action_refresh()

    # --- from the server ---------------------------------------------------------------

    @on(EventListReceived)
    def _listed(self, event: EventListReceived) -> None:
        """The event list, newest first."""
        self.events = list(event.msg.events)
        table = self.query_one("#events", DataTable)
        row = table.cursor_row
        table.clear()
        for e in self.events:
            table.add_row(*event_cells(e), key=e.event_id)
        if self.events:
            table.move_cursor(row=min(row, len(self.events) - 1))

    @on(EventStateReceived)
    def _state(self, event: EventStateReceived) -> None:
        """The followed event changed (or was first sent): redraw its standings."""
        if event.msg.event_id != self.chosen:
            return
        self.state = event.msg
        self._draw_state()
        self.refresh_bindings()

    @on(ErrorReceived)
    def _refused(self, event: ErrorReceived) -> None:
        """A refused event request: one line naming why."""
        self._say(f"{event.msg.message} ({event.msg.code})")

    # --- drawing -------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        """Show (or clear) the error line."""
        self.query_one("#event-error", Static).update(text)

    def _draw_state(self) -> None:
        """The chosen event's heading, standings and the player's game under way."""
        st = self.state
        if st is None:
            return
        s = st.settings
        rounds = f", round {st.round}/{st.rounds}" if st.rounds else (f", round {st.round}" if st.round else "")
        self.query_one("#event-heading", Label).update(
            f"[b]{s.name}[/b] ({st.event_id}): {s.kind.value}, {st.status}{rounds}, {s.variant}, by {st.creator}"
            " — j enter, l leave")
        table = self.query_one("#event-standings", DataTable)
        table.clear()
        for row in st.standings:
            table.add_row(*entrant_cells(row), key=row.name)
        game = my_game(st, self.player_name)
        self.query_one("#event-game", Static).update(
            f"Your game under way: {game} (m opens it)" if game else
            ("You are entered." if any(r.name == self.player_name for r in st.standings) else "You are not entered."))

    # --- user actions -----------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on an event: follow it (and stop following the one shown before)."""
        event_id = event.row_key.value
        if event.data_table.id != "events" or event_id is None:
            return
        if self.chosen is not None and self.chosen != event_id:
            self.post_message(Outgoing(FetchEvent(event_id=self.chosen, follow=False)))
            self.state = None
            self.query_one("#event-standings", DataTable).clear()
            self.query_one("#event-game", Static).update("")
        if self.state is None:
            summary = next((e for e in self.events if e.event_id == event_id), None)
            self.query_one("#event-heading", Label).update(f"Loading {summary.name if summary else event_id}…")
        self.chosen = event_id
        self._say("")
        self.refresh_bindings()
        self.post_message(Outgoing(FetchEvent(event_id=event_id, follow=True)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter, leave and my game only once an event is chosen."""
        if action in ("join", "leave_event", "my_game"):
            return self.chosen is not None
        return True

    def action_join(self) -> None:
        """Enter the shown event."""
        if self.chosen is not None:
            self._say("")
            self.post_message(Outgoing(JoinEvent(event_id=self.chosen)))

    def action_leave_event(self) -> None:
        """Leave the shown event (an arena: a pause)."""
        if self.chosen is not None:
            self._say("")
            self.post_message(Outgoing(LeaveEvent(event_id=self.chosen)))

    def action_my_game(self) -> None:
        """Open this player's game under way in the shown event (the server sends its snapshot)."""
        game = None if self.state is None else my_game(self.state, self.player_name)
        if game is None:
            self._say("You have no game under way in this event.")
            return
        self.post_message(Outgoing(SyncMatch(match_id=game)))

    def on_screen_resume(self) -> None:
        """Back from a game: ask for the list again (the followed event's states keep coming)."""
        self.action_refresh()

    def action_refresh(self) -> None:
        """Ask for the event list again."""
        self.post_message(Outgoing(ListEvents(limit=EVENTS_SHOWN)))

    def action_back(self) -> None:
        """Back to the lobby, no longer following the shown event."""
        if self.chosen is not None:  # posted to the app: this screen is gone before it would pass it on
            self.app.post_message(Outgoing(FetchEvent(event_id=self.chosen, follow=False)))
        self.dismiss()

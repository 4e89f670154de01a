"""The lobby: your name, who seeks an opponent, open matches to join, live ones to watch, finished ones to replay,
standings."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Input, Label, Static

from client.screens.create import CreateMatchScreen
from client.screens.dialogs import HelpScreen
from client.screens.events import EventsScreen
from client.stored_game import REASONS, StoredGame
from client.ui_messages import (
    ConnectionChanged,
    GameListReceived,
    MatchListReceived,
    Outgoing,
    ReplayRequested,
    SeekingReceived,
    StandingsReceived,
    WelcomeReceived,
)
from protocol import Variant
from protocol.messages import (
    SEEK_VARIANT,
    CreateMatch,
    FindOpponent,
    HeadToHead,
    JoinMatch,
    ListGames,
    ListMatches,
    ListStandings,
    MatchSummary,
    SeekSummary,
    StandingRow,
    Standings,
)
from protocol.outcome import rating_text

LISTING_REFRESH_S = 5.0
"""Seconds between two automatic listing requests while the lobby is shown."""

LIBRARY_SIZE = 50
"""How many of the newest stored games the lobby lists for replay."""

STANDINGS_SIZE = 50
"""How many players the standings table shows."""

OFFLINE_NOTICE = "Offline: the stored games of a database file. Enter replays one (a: solver values)."


class WatchRequested(Message):
    """The user wants to watch a live match."""

    def __init__(self, match_id: str) -> None:
        super().__init__()
        self.match_id = match_id


class NameChanged(Message):
    """The user typed a new name."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


def _players(south: str | None, north: str | None) -> str:
    """`south - north` with open seats marked."""
    return f"{south or '(open)'} - {north or '(open)'}"


def match_cells(m: MatchSummary) -> tuple[str, ...]:
    """One line of a match table: id, variant, players, ply, spectators, result."""
    result = "" if m.result is None else f"{m.result:+d}"
    return (m.match_id, m.variant, _players(m.south, m.north), str(m.ply), str(m.spectators), result)


def seek_cells(seek: SeekSummary, me: str) -> tuple[str, ...]:
    """One line of the seeks table: who seeks (you, for your own) and the variant."""
    return (f"{seek.name} (you)" if seek.name == me else seek.name, seek.variant)


def stored_cells(g: StoredGame) -> tuple[str, ...]:
    """A stored game as a line of the finished table: id, variant, players, ply, who won, the score when the board
    decided it, and why it ended (`resignation`, `abandoned`…)."""
    return (g.match_id, g.variant.text(), _players(g.south, g.north), str(g.ply), g.winner_cell, g.score_cell,
            REASONS.get(g.reason or "", g.reason or ""))


def finished_cells(m: MatchSummary) -> tuple[str, ...]:
    """A finished match of the listing not yet among the stored games: the winner as far as its score says."""
    winner = "-" if m.result is None else "draw" if m.result == 0 else (m.south if m.result > 0 else m.north) or "-"
    return (m.match_id, m.variant, _players(m.south, m.north), str(m.ply), winner,
            "-" if m.result is None else f"{m.result:+d}", "")


def standing_cells(rank: int, row: StandingRow) -> tuple[str, ...]:
    """One line of the standings table: rank, name, rating ± 95% interval, games, W, D, L, score."""
    score = f"{100 * (row.wins + row.draws / 2) / row.games:.1f}%" if row.games else "-"
    return (str(rank), row.name, rating_text(row.rating, row.rd), str(row.games),
            str(row.wins), str(row.draws), str(row.losses), score)


def head_to_head_text(name: str, h2h: list[HeadToHead]) -> str:
    """A player's results against each opponent, as wins-draws-losses."""
    parts = [f"{h.opponent} {h.wins}-{h.draws}-{h.losses}" for h in h2h if h.player == name]
    return f"{name} against " + (", ".join(parts) if parts else "nobody yet") + " (W-D-L)"


class LobbyScreen(Screen[None]):
    """Where every session starts: pick a match or create one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "create", "Create match"),
        Binding("a", "seek", "Any opponent"),
        Binding("e", "events", "Events"),
        Binding("g", "refresh", "Refresh"),
        Binding("question_mark,f1", "help", "Rules"),
        Binding("q", "app.quit", "Quit"),
    ]

    AUTO_FOCUS = "#open"

    def __init__(self, name: str = "", library: tuple[StoredGame, ...] = (), *, offline: bool = False,
                 private: bool = False) -> None:
        super().__init__()
        self.player_name = name
        self.matches: list[MatchSummary] = []
        self.seeks: list[SeekSummary] = []
        """Who seeks an opponent on the server, in which variant (`a` seeks the default, Enter on one plays them)."""
        self.library: dict[str, StoredGame] = {g.match_id: g for g in library}
        """Stored games to replay, by match id: the server's finished ones, or a database file's (offline)."""
        self.standings: Standings = Standings(rows=[])
        self.offline = offline
        """Whether this session has no server, only the stored games it was given (nothing else is offered)."""
        self.private = private
        """Whether the server is this session's own (embedded, loopback): no one else comes to play, so
        neither pairing nor an open seat is offered."""
        self.connection_notice: str | None = OFFLINE_NOTICE if offline else "Connecting…"

    def compose(self) -> ComposeResult:
        """Name, the three match tables, the standings, and the create button."""
        server = "online"  # what only a server offers: hidden offline
        yield Static(id="connection", classes="banner")
        yield Static("[b]Kalah Arena[/b] · " + ("stored games" if self.offline else "lobby"), id="title")
        with Horizontal(id="name-row", classes=server):
            yield Label("Your name ")
            yield Input(self.player_name, id="name", max_length=32, restrict=r"[A-Za-z0-9_.:-]*")
            yield Button("Create match (c)", id="create", variant="primary")
        with VerticalScroll(id="tables"):
            seeking = f"{server} seeking" + (" private" if self.private else "")
            yield Label(f"[b]Seeking an opponent[/b] — Enter to play them; a seeks {SEEK_VARIANT}",
                        classes=f"table-title {seeking}")
            yield DataTable(id="seeks", cursor_type="row", zebra_stripes=True, classes=seeking)
            yield Static("Nobody is seeking a game right now.", id="no-seeks", classes=f"hint {seeking}")
            yield Label("[b]Open matches[/b] — Enter to join", classes=f"table-title {server}")
            yield DataTable(id="open", cursor_type="row", zebra_stripes=True, classes=server)
            yield Label("[b]Live matches[/b] — Enter to watch", classes=f"table-title {server}")
            yield DataTable(id="live", cursor_type="row", zebra_stripes=True, classes=server)
            finished = "Stored games" if self.offline else "Finished matches"
            yield Label(f"[b]{finished}[/b] — Enter to replay", classes="table-title")
            yield DataTable(id="finished", cursor_type="row", zebra_stripes=True)
            yield Label("[b]Standings[/b] — rated games; rating ± 95% interval", classes=f"table-title {server}")
            yield DataTable(id="standings", cursor_type="row", zebra_stripes=True, classes=server)
            yield Static(id="head-to-head", classes=f"hint {server}")
        yield Footer()

    def on_mount(self) -> None:
        """Set up the table columns, draw, and keep the listing fresh."""
        self.set_class(self.offline, "-offline")
        for widget in self.query(".private"):  # on this session's own server nobody else seeks
            widget.display = False
        self.query_one("#seeks", DataTable).add_columns("player", "variant")
        for table_id in ("open", "live"):
            table = self.query_one(f"#{table_id}", DataTable)
            table.add_columns("match", "variant", "players", "ply", "watching", "result")
        self.query_one("#finished", DataTable).add_columns("match", "variant", "players", "ply", "winner", "score",
                                                           "reason")
        self.query_one("#standings", DataTable).add_columns("#", "player", "rating", "games", "W", "D", "L",
                                                            "score")
        self._draw_banner()
        self._draw_tables()
        self._draw_standings()
        if self.offline:  # only the stored games can be used: start there (after the first focus)
            self.call_after_refresh(self.query_one("#finished", DataTable).focus)
        self.set_interval(LISTING_REFRESH_S, self._refresh_listing)

    def _refresh_listing(self) -> None:
        """Keep the listing fresh while the lobby is on screen."""
        if self.is_current and self.connection_notice is None:
            self.action_refresh()

    # --- from the server ---------------------------------------------------------------

    @on(WelcomeReceived)
    def _welcomed(self, event: WelcomeReceived) -> None:
        """Show the name the server knows us by, and ask for the listing."""
        self.player_name = event.msg.name
        self.query_one("#name", Input).value = event.msg.name
        self.action_refresh()

    @on(MatchListReceived)
    def _matches_listed(self, event: MatchListReceived) -> None:
        """The open and live matches."""
        self.matches = list(event.msg.matches)
        self.seeks = list(event.msg.seeks)
        self._draw_tables()

    @on(GameListReceived)
    def _games_listed(self, event: GameListReceived) -> None:
        """The server's finished stored games, to replay."""
        games = (StoredGame.from_info(g) for g in event.msg.games)
        self.library = {g.match_id: g for g in games if g.finished}
        self._draw_tables()

    @on(StandingsReceived)
    def _standings_listed(self, event: StandingsReceived) -> None:
        """The rating table."""
        self.standings = event.msg
        self._draw_standings()

    @on(SeekingReceived)
    def _seeking(self, event: SeekingReceived) -> None:
        """Say that the server looks for an opponent."""
        self.notify(f"Waiting for another player who wants {event.msg.variant}… Others see your seek in their "
                    "lobby; a seek listed here plays at once.", title="Pairing")

    @on(ConnectionChanged)
    def _connection_changed(self, event: ConnectionChanged) -> None:
        """Show or hide the connection banner."""
        self.connection_notice = None if event.connected else event.detail
        self._draw_banner()
        self._draw_head_to_head()

    # --- drawing -------------------------------------------------------------------------

    def _draw_banner(self) -> None:
        """The connection notice, if any."""
        banner = self.query_one("#connection", Static)
        banner.update(self.connection_notice or "")
        banner.display = bool(self.connection_notice)

    def _draw_tables(self) -> None:
        """Fill the three match tables: the listing, then the stored games it does not list."""
        rows: dict[str, list[tuple[str, ...]]] = {"open": [], "live": [], "finished": []}
        for m in self.matches:
            if m.status != "finished":
                rows[m.status].append(match_cells(m))
            elif m.match_id in self.library:
                rows["finished"].append(stored_cells(self.library[m.match_id]))
            else:
                rows["finished"].append(finished_cells(m))
        seeks = self.query_one("#seeks", DataTable)
        seeks.clear()
        for seek in self.seeks:
            seeks.add_row(*seek_cells(seek, self.player_name), key=seek.variant)
        self.query_one("#no-seeks", Static).display = not self.seeks and not self.private
        listed = {m.match_id for m in self.matches}
        rows["finished"] += [stored_cells(g) for g in self.library.values() if g.match_id not in listed]
        for status, lines in rows.items():
            table = self.query_one(f"#{status}", DataTable)
            table.clear()
            for cells in lines:
                table.add_row(*cells, key=cells[0])

    def _draw_standings(self) -> None:
        """Fill the standings table, keeping the cursor on the same player."""
        table = self.query_one("#standings", DataTable)
        row = table.cursor_row
        table.clear()
        for rank, line in enumerate(self.standings.rows, 1):
            table.add_row(*standing_cells(rank, line), key=line.name)
        if self.standings.rows:
            table.move_cursor(row=min(row, len(self.standings.rows) - 1))
        self._draw_head_to_head()

    def _draw_head_to_head(self) -> None:
        """The head-to-head results of the player under the standings cursor."""
        rows = self.standings.rows
        table = self.query_one("#standings", DataTable)
        if rows and 0 <= table.cursor_row < len(rows):
            text = head_to_head_text(rows[table.cursor_row].name, self.standings.head_to_head)
        else:
            text = "No rated games yet." if self.connection_notice is None else "Standings come from a server."
        self.query_one("#head-to-head", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Moving along the standings shows that player's head-to-head results."""
        if event.data_table.id == "standings":
            self._draw_head_to_head()

    # --- user actions -----------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only what works: nothing but replays offline (no events either), and no pairing on a private
        server."""
        if action in ("create", "refresh", "events"):
            return not self.offline
        if action == "seek":
            return not self.offline and not self.private
        return True

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Seek what a seeker seeks (which pairs the two), join an open match, watch a live one, replay a finished
        one."""
        match_id = event.row_key.value
        if match_id is None:
            return
        table_id = event.data_table.id
        if table_id == "seeks":
            self.post_message(Outgoing(FindOpponent(variant=match_id)))
        elif table_id == "open":
            self.post_message(Outgoing(JoinMatch(match_id=match_id)))
        elif table_id == "live":
            self.post_message(WatchRequested(match_id))
        elif table_id == "finished":
            self.post_message(ReplayRequested(match_id, self.library.get(match_id)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A new name takes effect on the next hello."""
        name = event.value.strip()
        if name and name != self.player_name:
            self.player_name = name
            self.post_message(NameChanged(name))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The create button."""
        if event.button.id == "create":
            self.action_create()

    def action_create(self) -> None:
        """Open the create-match form."""

        def created(msg: CreateMatch | None) -> None:
            if msg is not None:
                self.post_message(Outgoing(msg))

        if self.offline:
            return
        self.app.push_screen(CreateMatchScreen(bots_only=self.private), created)

    def on_screen_resume(self) -> None:
        """Back in the lobby: refresh the listing (once connected)."""
        if self.connection_notice is None:
            self.action_refresh()

    def action_events(self) -> None:
        """Open the events screen (tournaments: list, standings, enter, leave)."""
        if not self.offline:
            self.app.push_screen(EventsScreen(self.player_name))

    def action_seek(self) -> None:
        """Be paired with the next player asking for the default seek (the web lobby's default too)."""
        if self.offline or self.private:
            return
        self.post_message(Outgoing(FindOpponent(variant=SEEK_VARIANT)))

    def action_refresh(self) -> None:
        """Ask for the listing again: matches in play, stored finished games, and the standings."""
        self.post_message(Outgoing(ListMatches()))
        self.post_message(Outgoing(ListGames(limit=LIBRARY_SIZE)))
        self.post_message(Outgoing(ListStandings(limit=STANDINGS_SIZE)))

    def action_help(self) -> None:
        """Rules of the standard game."""
        self.app.push_screen(HelpScreen(Variant()))

"""The lobby and the create-match form: listing, join, watch, every variant option, bad input."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, DataTable, Input, Select, Static

from client.app import KalahApp, Launch
from client.opponents import BOT_LEVELS, bot_opponent
from client.screens.create import CreateMatchScreen, opponent_choices
from client.screens.lobby import LIBRARY_SIZE, STANDINGS_SIZE, LobbyScreen
from client.screens.replay import ReplayScreen
from client.stored_game import StoredGame
from client.ui_messages import ConnectionChanged, GameListReceived, MatchListReceived
from protocol import Variant
from protocol.messages import (
    CreateMatch,
    FindOpponent,
    GameInfo,
    GameList,
    JoinMatch,
    ListGames,
    ListMatches,
    ListStandings,
    MatchList,
    MatchSummary,
    SeekSummary,
)
from protocol.outcome import EndReason
from tests.helpers.client_hosts import ScreenHost, shown, until

SIZE = (100, 40)


def listing() -> MatchList:
    """One open, one live and one finished match."""
    return MatchList(matches=[
        MatchSummary(match_id="open1", variant="kalah(6,4)", south="ann", status="open"),
        MatchSummary(match_id="live1", variant="kalah(6,5)", south="bob", north="cy", status="live",
                     ply=7, spectators=2),
        MatchSummary(match_id="done1", variant="kalah(4,3)", south="bob", north="cy", status="finished",
                     ply=30, result=4),
    ])


async def test_listing_fills_tables_and_enter_joins() -> None:
    """Each match lands in its table; Enter on an open match asks to join it; `g` asks for everything again."""
    lobby = LobbyScreen("ann")
    app = ScreenHost(lobby)
    async with app.run_test(size=SIZE) as pilot:
        lobby.post_message(ConnectionChanged(True, "connected"))
        lobby.post_message(MatchListReceived(listing()))
        await pilot.pause()
        rows = {t.id: t.row_count for t in lobby.query(DataTable)}
        assert rows == {"seeks": 0, "open": 1, "live": 1, "finished": 1, "standings": 0}
        assert str(lobby.query_one("#head-to-head", Static).render()) == "No rated games yet."
        lobby.query_one("#open", DataTable).focus()
        await pilot.press("enter")
        assert JoinMatch(match_id="open1") in app.sent
        await pilot.press("g")
        assert {ListMatches(), ListGames(limit=LIBRARY_SIZE), ListStandings(limit=STANDINGS_SIZE)} <= set(app.sent)


async def test_finished_games_show_who_won_and_why() -> None:
    """The finished table names the winner and the reason of a resignation, an abandonment and a forfeit (no score
    decided them), and the winner of a listed match by its score (before: the result cell was blank)."""
    lobby = LobbyScreen("ann")
    app = ScreenHost(lobby)
    games = [GameInfo(match_id=mid, variant="kalah(4,3)", south="ann", north="bob", status="finished",
                      record=["1"], winner=winner, reason=reason, created_at="2026-01-01T00:00:00+00:00")
             for mid, winner, reason in (("r1", "bob", EndReason.RESIGN), ("a1", "ann", EndReason.ABANDONMENT),
                                         ("f1", "bob", EndReason.FORFEIT))]
    async with app.run_test(size=SIZE) as pilot:
        lobby.post_message(ConnectionChanged(True, "connected"))
        lobby.post_message(MatchListReceived(listing()))
        lobby.post_message(GameListReceived(GameList(games=games)))
        await pilot.pause()
        table = lobby.query_one("#finished", DataTable)
        row = {key: [str(c) for c in table.get_row(key)][4:] for key in ("r1", "a1", "f1", "done1")}
        assert row == {"r1": ["bob", "-", "resignation"], "a1": ["ann", "-", "abandoned"],
                       "f1": ["bob", "-", "the engine broke the protocol"], "done1": ["bob", "+4", ""]}


async def test_create_form_sends_every_option() -> None:
    """The form turns houses, seeds, options, clock, seat and opponent into one create message."""
    app = ScreenHost(LobbyScreen("ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        form = app.screen
        assert isinstance(form, CreateMatchScreen)
        form.query_one("#houses", Input).value = "4"
        form.query_one("#seeds", Input).value = "5"
        form.query_one("#capture", Select).value = "empty"
        form.query_one("#leftover", Select).value = "discard"
        form.query_one("#clock", Input).value = "60+2"
        form.query_one("#seat", Select).value = "north"
        form.query_one("#opponent", Select).value = bot_opponent(3)
        for key in ("clockwise", "pie", "opening_transfer", "majority_end"):
            form.query_one(f"#{key}", Checkbox).value = True
        form.query_one("#extra_turn", Checkbox).value = False
        await pilot.press("ctrl+s")
        await pilot.pause()
        sent = [m for m in app.sent if isinstance(m, CreateMatch)]
        assert sent == [CreateMatch(
            variant="kalah(4,5,capture=empty,extra=off,clockwise=on,majority=on,pie=on,transfer=on,"
                    "leftover=discard,clock=60+2)",
            seat="north", opponent="alphabeta:4", rated=False)]


async def test_create_form_flags_differ_by_glyph_not_only_by_colour() -> None:
    """An option that is off shows an empty box and one that is on an X, and toggling one changes its glyph
    (before: X in both, told apart by colour only)."""
    app = ScreenHost(LobbyScreen("ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        form = app.screen
        assert isinstance(form, CreateMatchScreen)
        on, off = form.query_one("#extra_turn", Checkbox), form.query_one("#pie", Checkbox)
        assert (on.value, off.value) == (True, False)
        assert str(on.render()).startswith("▐X▌") and str(off.render()).startswith("▐ ▌")
        off.focus()
        await pilot.press("space")
        await pilot.pause()
        assert off.value and str(off.render()).startswith("▐X▌")


async def test_create_form_names_bad_input() -> None:
    """An out-of-range board size is refused on the form with the reason; nothing is sent."""
    app = ScreenHost(LobbyScreen("ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        form = app.screen
        form.query_one("#houses", Input).value = "13"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, CreateMatchScreen)
        assert "houses" in str(form.query_one("#form-error").render())
        await pilot.press("escape")
        assert isinstance(app.screen, LobbyScreen)
        assert not any(isinstance(m, CreateMatch) for m in app.sent)


async def test_the_lobby_shows_the_seeks_and_seeks_what_the_web_lobby_seeks() -> None:
    """Who seeks what is listed (yours marked); Enter on a seek seeks its variant, which pairs the two; `a` seeks
    kalah(6,4,clock=300+5), the web lobby's default (before: no seek was shown, and `a` sought untimed kalah(6,4),
    which never met a web seeker)."""
    lobby = LobbyScreen("ann")
    app = ScreenHost(lobby)
    async with app.run_test(size=SIZE) as pilot:
        lobby.post_message(ConnectionChanged(True, "connected"))
        await pilot.pause()
        assert lobby.query_one("#no-seeks", Static).display
        seeks = [SeekSummary(variant="kalah(6,4,clock=300+5)", name="bob"), SeekSummary(variant="kalah(4,3)",
                                                                                        name="ann")]
        lobby.post_message(MatchListReceived(MatchList(matches=[], seeks=seeks)))
        await pilot.pause()
        table = lobby.query_one("#seeks", DataTable)
        assert [table.get_row_at(i) for i in range(table.row_count)] == [["bob", "kalah(6,4,clock=300+5)"],
                                                                         ["ann (you)", "kalah(4,3)"]]
        assert not lobby.query_one("#no-seeks", Static).display
        table.focus()
        await pilot.press("enter")
        assert app.sent[-1] == FindOpponent(variant="kalah(6,4,clock=300+5)")
        before = len(app.sent)
        await pilot.press("a")
        assert app.sent[before:] == [FindOpponent(variant="kalah(6,4,clock=300+5)")]


async def test_offline_lobby_offers_only_the_stored_games() -> None:
    """Offline there is no create, pairing, refresh, events, name or standings: only the stored games, to
    replay."""
    stored = StoredGame("m1", Variant.parse("kalah(3,3)"), ("1", "3"), "ann", "bob")
    app = KalahApp(Launch(offline=True, library=(stored,), animate=False))
    async with app.run_test(size=SIZE) as pilot:
        lobby = app.lobby
        await until(pilot, lambda: app.screen is lobby and lobby.query_one("#finished", DataTable).has_focus)
        offered = {b.binding.action for b in lobby.active_bindings.values()}
        assert not offered & {"create", "seek", "refresh", "events"}
        visible = {w.id for w in lobby.query("DataTable, #name-row, #head-to-head") if w.display}
        assert visible == {"finished"}
        await pilot.press("c", "a", "g")
        assert app.screen is lobby
        await pilot.press("enter")
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)


async def test_private_server_offers_bots_only() -> None:
    """On this session's own embedded server nobody else comes: no pairing key, no open seat in the form."""
    lobby = LobbyScreen("ann", private=True)
    app = ScreenHost(lobby)
    async with app.run_test(size=SIZE) as pilot:
        offered = {b.binding.action for b in lobby.active_bindings.values()}
        assert "create" in offered and "seek" not in offered
        assert not any(w.display for w in lobby.query("#seeks, #no-seeks"))
        await pilot.press("a")
        assert app.sent == []
        await pilot.press("c")
        form = app.screen
        assert isinstance(form, CreateMatchScreen) and form.bots_only
    assert [value for _, value in opponent_choices(bots_only=True)] == [bot_opponent(n) for n in BOT_LEVELS]
    assert opponent_choices()[0][1] == ""


async def test_local_server_that_cannot_start_is_reported(tmp_path: Path) -> None:
    """`kalah play` with an unusable database file exits with status 1 and says why, instead of crashing."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    app = KalahApp(Launch(db_path=blocker / "arena.sqlite3", start="bot", animate=False))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.return_code is not None)
        said = [str(r) for r in app._exit_renderables]  # what Textual prints once the screen is restored
    assert app.return_code == 1
    assert len(said) == 1 and said[0].startswith("kalah: could not start the local server: ")

"""The app passes server traffic, as Textual messages, to the screen it is for; the stylesheet ships."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch

import pytest
from textual.message import Message
from textual.widgets import Input, Static

from client.app import KalahApp, Launch
from client.match_state import MatchState
from client.screens.game import GameScreen
from client.screens.replay import ReplayScreen
from client.stored_game import StoredGame
from client.styles import STYLESHEET
from client.ui_messages import RECEIVED, ConnectionChanged, Received, ReplayRequested, received
from protocol import Game, Side, Variant
from protocol.messages import Ack, Analysis, ErrorMessage, GameInfo, GameRecord, Presence, Welcome
from tests.helpers.client_hosts import ScreenHost, make_snapshot, shown, until
from tests.helpers.paths import ROOT_DIR

SIZE = (100, 30)
ROOT = ROOT_DIR


def offline_app(monkeypatch: pytest.MonkeyPatch) -> tuple[KalahApp, list[str]]:
    """An app without a network (server traffic is posted to it by the test) and the notifications it shows."""
    app = KalahApp(Launch(offline=True, animate=False))
    notes: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **_: notes.append(message))
    return app, notes


async def test_match_traffic_reaches_its_own_game_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot opens a game screen; that match's presence and refusals reach it, others' are notified."""
    app, notes = offline_app(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(received(make_snapshot("3 6")))
        await until(pilot, lambda: shown(app, GameScreen) is not None)
        screen = app.screen
        assert isinstance(screen, GameScreen) and screen.state.record == ["3", "6"]
        app.post_message(received(Presence(match_id="m1", spectators=4, south_connected=True)))
        app.post_message(received(Ack(match_id="m1", ply=1, seq=4)))
        app.post_message(received(ErrorMessage(code="out_of_turn", message="not your turn", request="move",
                                               match_id="m1")))
        app.post_message(received(ErrorMessage(code="unknown_match", message="no match 'zz'", request="join",
                                               match_id="zz")))
        # the app notifies at once; the screen handles what reaches it in its own queue, so wait for both
        await until(pilot, lambda: bool(notes) and screen.error is not None)
        assert screen.state.spectators == 4 and screen.state.away == frozenset({Side.NORTH})
        assert screen.error == "not your turn" and notes == ["no match 'zz'"]
        assert "⚠ not your turn" in str(screen.query_one("#notice", Static).render())
        app.post_message(received(make_snapshot("3 6 9")))
        await until(pilot, lambda: screen.state.record == ["3", "6", "9"])
        assert [s for s in app.screen_stack if isinstance(s, GameScreen)] == [screen]


async def test_welcome_and_connection_news_reach_the_lobby(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lobby shows the name the server gave and the connection banner the app passes on."""
    app, _ = offline_app(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(received(Welcome(player_id="p1", name="ann-2", token="t" * 32)))
        app.post_message(ConnectionChanged(False, "Connection lost. Reconnecting (attempt 1)…"))
        name = app.lobby.query_one("#name", Input)
        banner = app.lobby.query_one("#connection", Static)
        await until(pilot, lambda: name.value == "ann-2" and "attempt 1" in str(banner.render()))
        assert banner.display
        app.post_message(ConnectionChanged(True, "connected"))
        await until(pilot, lambda: not banner.display)


async def test_solver_answers_and_stored_records_open_and_reach_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored game's record opens its replay; answers and refusals of `analyse` go to the replay screens."""
    app, notes = offline_app(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        info = GameInfo(match_id="g1", variant="kalah(3,3)", south="ann", north="bob", status="finished",
                        record=["1", "3"], created_at="2024-05-01T12:00:00+00:00")
        app.post_message(received(GameRecord(game=info)))
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and screen.stored == StoredGame.from_info(info)
        start = screen.current_fen()
        screen.asked.append(start)  # as if the screen had asked the server
        app.post_message(received(ErrorMessage(code="bad_field", message="no value here", request="analyse")))
        await until(pilot, lambda: start in screen.refused)
        fen = Game(Variant.parse("kalah(3,3)")).position.fen()
        app.post_message(received(Analysis(position=fen, value=2, exact=True, depth=9)))
        await until(pilot, lambda: fen in screen.analyses)
        assert screen.refused == {start: "no value here"} and screen.asked == [] and notes == []


async def test_replay_key_of_a_finished_game_asks_the_app() -> None:
    """`v` on a finished game asks for its replay with a message up, not by opening a screen itself."""
    seen: list[ReplayRequested] = []

    class Host(ScreenHost):
        def on_replay_requested(self, event: ReplayRequested) -> None:
            """Record the request."""
            seen.append(event)

    state = MatchState.from_snapshot(make_snapshot("3 6", status="finished", reason="resign", winner="north"))
    screen = GameScreen(state, animate=False)
    app = Host(screen)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await until(pilot, lambda: bool(seen))
        assert seen[0].match_id == "m1" and seen[0].stored is None
        assert app.screen is screen


def test_server_messages_never_bubble_back_to_the_app() -> None:
    """What the app posts on to a screen must not bubble back up to the app (it would go round forever)."""
    kinds: list[type[Message]] = [Received, ConnectionChanged, *RECEIVED.values()]
    assert not any(kind.bubble for kind in kinds)
    assert type(received(Ack(match_id="m1", ply=0, seq=1))) is Received


def test_stylesheet_is_a_file_the_package_ships() -> None:
    """The client's styles are a .tcss file inside the package, and pyproject's package-data includes it."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert STYLESHEET.is_file() and STYLESHEET.parent == ROOT / "client"
    assert any(fnmatch(STYLESHEET.name, pattern) for pattern in data["client"])


async def test_a_stored_game_whose_id_is_no_match_id_replays_without_a_review() -> None:
    """Offline, a finished game stored by hand under an id outside the match-id pattern (`a:b`) opens its replay,
    which says why there is no review instead of failing on the review request."""
    stored = StoredGame(match_id="a:b", variant=Variant.parse("kalah(3,3)"), record=("1", "3"), status="finished")
    app = KalahApp(Launch(offline=True, animate=False, stored=stored))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        summary = screen.query_one("#review-summary", Static)
        await until(pilot, lambda: summary.display)
        assert "Review: none ('a:b' is not a match id (1 to 64 letters, digits, '-' or '_'))" in str(summary.render())

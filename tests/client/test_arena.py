"""The client against a real server: standings and stored games in the lobby, solver values in replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from client.app import KalahApp, Launch
from client.screens import replay as replay_screen
from client.screens.replay import ReplayScreen, analysis_text
from client.stored_game import StoredGame
from protocol import Game, Variant
from protocol.messages import Analysis
from server.assembly import start_server
from tests.client.test_e2e import SIZE, launch
from tests.helpers.client_hosts import shown, until
from tests.helpers.wire import OPERATOR, Client

SMALL = "kalah(3,3)"


async def play_exhibitions(url: str, count: int) -> None:
    """Play `count` rated games of alphabeta:3 (South) against random and wait until all are over."""
    host = await Client.open(url, "host")
    for i in range(count):
        await host.send(type="exhibition", variant=SMALL, south="alphabeta:3", north="random", match_id=f"x{i + 1}",
                        rated=True, operator_token=OPERATOR)
        await host.expect("snapshot")
    while sum(1 for m in host.seen if m["type"] == "event" and m["kind"] == "game_over") < count:
        await host.next(timeout=20)
    await host.close()


def cells(table: DataTable[str], key: str) -> list[str]:
    """The cells of one row of a table, as text."""
    return [str(c) for c in table.get_row(key)]


async def test_lobby_shows_standings_of_rated_bot_games(tmp_path: Path) -> None:
    """After two rated bot games the lobby's standings list both bots with rating ± interval and W/D/L."""
    server = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)
    try:
        await play_exhibitions(server.url, 2)
        app = launch(server.url, "ann")
        async with app.run_test(size=SIZE) as pilot:
            table = app.lobby.query_one("#standings", DataTable)
            await until(pilot, lambda: table.row_count == 2)
            bot = cells(table, "bot:alphabeta:3")
            rnd = cells(table, "bot:random")
            assert {bot[0], rnd[0]} == {"1", "2"} and "±" in bot[2] and "±" in rnd[2]
            games, wins, draws, losses = map(int, bot[3:7])
            assert games == wins + draws + losses == 2
            assert rnd[3:7] == [str(games), str(losses), str(draws), str(wins)]
            assert bot[7] == f"{100 * (wins + draws / 2) / 2:.1f}%"
            table.focus()
            await pilot.pause()
            h2h = str(app.lobby.query_one("#head-to-head", Static).render())
            expected = (f"bot:alphabeta:3 against bot:random {wins}-{draws}-{losses}" if bot[0] == "1"
                        else f"bot:random against bot:alphabeta:3 {losses}-{draws}-{wins}")
            assert expected in h2h
    finally:
        await server.close()


async def test_lobby_lists_stored_games_of_the_server_and_replays_them(tmp_path: Path) -> None:
    """A server restarted on its database still lists its finished games; Enter replays one from the listing."""
    first = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)
    try:
        await play_exhibitions(first.url, 1)
    finally:
        await first.close()
    server = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)  # nothing in memory: only stored games
    try:
        app = launch(server.url, "ann")
        async with app.run_test(size=SIZE) as pilot:
            table = app.lobby.query_one("#finished", DataTable)
            await until(pilot, lambda: table.row_count == 1)
            assert cells(table, "x1")[:3] == ["x1", SMALL, "bot:alphabeta:3 - bot:random"]
            assert "x1" in app.lobby.library
            table.focus()
            await pilot.press("enter")
            await until(pilot, lambda: shown(app, ReplayScreen) is not None)
            screen = app.screen
            assert isinstance(screen, ReplayScreen) and screen.game.over
            assert len(screen.stored.record) == int(cells(table, "x1")[3])
            assert screen.stored.verdict and "unfinished" not in screen.stored.verdict
    finally:
        await server.close()


async def test_replay_shows_solver_values_asked_lazily(tmp_path: Path) -> None:
    """`a` shows the value and best move of each replayed position, asked once per position: exact where the search
    proved it in its budget (Kalah(3,3) is +2), else an estimate with its depth (a loaded machine may not prove it)."""
    server = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)
    try:
        await play_exhibitions(server.url, 1)
        app = launch(server.url, "ann", start="replay", match_id="x1")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: shown(app, ReplayScreen) is not None)
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            line = screen.query_one("#notice", Static)  # the solver line takes the place of the keys line
            assert "Solver" not in str(line.render()) and "a solver value" in str(line.render())
            await pilot.press("a")
            start = screen.current_fen()
            await until(pilot, lambda: start in screen.analyses)
            text, first = str(line.render()).splitlines()[-1], screen.analyses[start]
            if first.exact:
                assert "South wins by 2 with best play · best move" in text  # RULES.md: Kalah(3,3) is +2
            else:
                assert text.startswith("Solver: ≈ ") and f"(search depth {first.depth})" in text and "best move" in text
            await pilot.press("right")
            await until(pilot, lambda: screen.current_fen() in screen.analyses)
            await pilot.press("left")
            assert len(screen.analyses) == 2 and screen.asked == [] and str(line.render()).splitlines()[-1] == text
            await pilot.press("end")
            await until(pilot, lambda: screen.current_fen() in screen.analyses)
            final = screen.analyses[screen.current_fen()]
            assert final.exact and final.best == [] and final.value == screen.game.position.margin
            await pilot.press("left")
            screen.asked.append(screen.current_fen())  # as if the answer was lost with the connection
            assert app.connection is not None
            await app.connection.drop()
            await until(pilot, lambda: screen.current_fen() in screen.analyses and not screen.asked)
            await pilot.press("a")
            assert "Solver" not in str(line.render())
    finally:
        await server.close()


async def test_replay_says_why_a_position_has_no_value(tmp_path: Path) -> None:
    """A position the server cannot analyse (opening transfer due) says why; the next one has its value."""
    stored = StoredGame("t1", Variant.parse("kalah(3,3,transfer=on)"), ("t-", "1"), "ann", "bob")
    server = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)
    try:
        app = launch(server.url, "ann")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.connection is not None and app.connection.connected)
            screen = app.replay_screen(stored)
            await app.push_screen(screen)
            await pilot.press("a")
            line = screen.query_one("#notice", Static)
            await until(pilot, lambda: bool(screen.refused))
            assert "no value" in str(line.render())
            await pilot.press("right")
            await until(pilot, lambda: screen.current_fen() in screen.analyses)
            await pilot.press("left")
            assert "no value" in str(line.render()) and screen.asked == []
    finally:
        await server.close()


async def test_offline_replay_asks_the_local_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaying from a database file, `a` gets each position's value from the solver in this process."""
    monkeypatch.setattr(replay_screen, "ANALYSIS_BUDGET_MS", 5000)  # exact even on a machine busy elsewhere
    stored = StoredGame("t1", Variant.parse("kalah(3,3,transfer=on)"), ("t-", "1"), "ann", "bob")
    app = KalahApp(Launch(offline=True, stored=stored, library=(stored,), animate=False))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        line = screen.query_one("#notice", Static)
        await pilot.press("a")
        await until(pilot, lambda: bool(screen.refused))  # a transfer is due: no value, and why
        assert "Solver: no value" in str(line.render())
        await pilot.press("right")
        await until(pilot, lambda: screen.current_fen() in screen.analyses)
        assert "South wins by 2 with best play · best move" in str(line.render())  # Kalah(3,3) is +2
        assert screen.asked == [] and app.analyst is not None


def test_solver_line_marks_bounded_values() -> None:
    """Exact values read as a result with best play; bounded ones carry ≈ and the search depth."""
    fen = Game().position.fen()
    exact = Analysis(position=fen, value=-3, best=[9], exact=True, depth=30)
    bounded = Analysis(position=fen, value=4, best=[3], exact=False, depth=12)
    assert analysis_text(exact) == "Solver: North wins by 3 with best play · best move 9"
    assert analysis_text(bounded) == "Solver: ≈ South ahead by 4 (search depth 12) · best move 3"
    assert analysis_text(Analysis(position=fen, value=0, exact=True, depth=0)) == "Solver: a draw"

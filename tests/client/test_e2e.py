"""The Textual client against a real server on a loopback port: play, spectate, pie swap, replay, reconnect."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select

from cli.stored_games import get_game
from client.app import KalahApp, Launch
from client.screens.create import CreateMatchScreen
from client.screens.dialogs import ResumeScreen
from client.screens.game import GameScreen
from client.screens.replay import ReplayScreen
from client.widgets.board import HOUSE_KEYS, Board, bottom_row
from client.widgets.panels import PlayerBar
from protocol import Game, Side, Variant, parse_action
from server.assembly import RunningServer, start_server
from tests.helpers.client_hosts import shown, until

SIZE = (100, 30)
SMALL = Variant.parse("kalah(3,2)")


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    """A real server with a fresh database on a free loopback port."""
    running = await start_server(tmp_path / "arena.sqlite3")
    try:
        yield running
    finally:
        await running.close()


def game_screen(app: KalahApp) -> GameScreen | None:
    """The game screen on top, if that is what is shown."""
    return shown(app, GameScreen)


def launch(url: str, name: str, **kw: object) -> KalahApp:
    """A client app for `url` with fast reconnection and no animation."""
    return KalahApp(Launch(url=url, name=name, animate=False, retry_delays=(0.05, 0.1), **kw))  # type: ignore[arg-type]


async def play_out(pilot: Pilot[None], app: KalahApp,
                   on_turn: Callable[[GameScreen], bool] | None = None) -> GameScreen:
    """Play the first legal house with its key on every turn until the game is over."""
    await until(pilot, lambda: game_screen(app) is not None)
    screen = game_screen(app)
    assert screen is not None
    while not screen.state.over:
        await until(pilot, lambda: screen.state.over or (screen.state.my_turn and not screen.pending))
        if screen.state.over:
            break
        if on_turn is not None and on_turn(screen):
            continue
        st = screen.state
        row = bottom_row(st.variant, st.viewpoint)
        await pilot.press(HOUSE_KEYS[row.index(st.position.legal_bins()[0])])
        await until(pilot, lambda: screen.pending is False)
    return screen


async def test_play_a_bot_to_the_end_with_keys(server: RunningServer) -> None:
    """Create a match against a bot, play it to the end with house keys, see the game-over panel."""
    app = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await play_out(pilot, app)
        assert screen.query_one("#game-over").display
        st = screen.state
        game = Game.from_record(SMALL, " ".join(st.record))
        assert game.over and st.position.fen() == game.position.fen()
        assert "GAME OVER" in str(screen.query_one("#game-over").render())
        await pilot.press("v")
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.stored.record == tuple(st.record)


async def test_a_second_client_spectates_every_move(server: RunningServer) -> None:
    """A spectator opened on the match receives every move the player makes, read-only."""
    player = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=2)
    async with player.run_test(size=SIZE) as p1:
        await until(p1, lambda: game_screen(player) is not None)
        mine = game_screen(player)
        assert mine is not None
        watcher = launch(server.url, "eve", start="watch", match_id=mine.match_id)
        async with watcher.run_test(size=SIZE) as p2:
            await until(p2, lambda: game_screen(watcher) is not None)
            theirs = game_screen(watcher)
            assert theirs is not None and theirs.spectating
            await until(p1, lambda: mine.state.spectators == 1)
            await play_out(p1, player)
            await until(p2, lambda: theirs.state.over)
            assert theirs.state.record == mine.state.record
            assert theirs.state.position.fen() == mine.state.position.fen()
            assert theirs.query_one(Board).choosable == frozenset()


async def test_pie_swap_offered_and_taken(server: RunningServer) -> None:
    """Seated North against a bot, the client is offered the swap, takes it and plays on as South."""
    variant = Variant.parse("kalah(3,2,pie=on)")
    app = launch(server.url, "ann", start="bot", variant=variant, bot_level=1, seat="north")
    offered: list[str] = []

    def swap_once(screen: GameScreen) -> bool:
        if screen.state.position.swap_offered and not offered:
            offered.append(str(screen.query_one("#notice").render()))
            screen.action_swap()
            return True
        return False

    async with app.run_test(size=SIZE) as pilot:
        screen = await play_out(pilot, app, swap_once)
        assert offered and "Pie rule" in offered[0]
        st = screen.state
        assert "swap" in st.record
        assert st.you == Side.SOUTH and st.south == "ann"
        assert screen.query_one(Board).viewpoint == Side.SOUTH
        await pilot.press("v")
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        assert (replay.stored.south, replay.stored.north) == ("bot:random", "ann")
        await pilot.press("end")
        assert replay.query_one("#bottom-player", PlayerBar).player == "ann"


async def test_replay_steps_through_a_stored_game(server: RunningServer, tmp_path: Path) -> None:
    """A stored game replays from the database file or over the wire; left/right/home/end step through it."""
    app = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1)
    async with app.run_test(size=SIZE) as pilot:
        match_id = (await play_out(pilot, app)).match_id
    stored = get_game(str(tmp_path / "arena.sqlite3"), match_id)
    assert stored is not None and stored.verdict
    game = Game.from_record(SMALL, [parse_action(t) for t in stored.record])
    viewer = KalahApp(Launch(offline=True, stored=stored, library=(stored,), animate=False))
    remote = launch(server.url, "eve", start="replay", match_id=match_id)
    async with remote.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(remote, ReplayScreen) is not None)
        assert isinstance(remote.screen, ReplayScreen) and remote.screen.game.actions == game.actions
    async with viewer.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(viewer, ReplayScreen) is not None)
        screen = viewer.screen
        assert isinstance(screen, ReplayScreen)
        board = screen.query_one(Board)
        assert board.position == game.positions[0]
        await pilot.press("right", "right")
        assert screen.index == 2 and board.position == game.positions[2]
        await pilot.press("end")
        assert board.position == game.position and screen.query_one("#game-over").display
        await pilot.press("left")
        assert board.position == game.positions[-2]
        await pilot.press("home")
        assert screen.index == 0


async def test_reconnects_with_last_seq_and_carries_on(server: RunningServer) -> None:
    """When the connection drops the client says so on screen, reconnects by itself and plays on."""
    app = KalahApp(Launch(url=server.url, name="ann", start="bot", variant=SMALL, bot_level=1,
                          animate=False, retry_delays=(0.5,)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: game_screen(app) is not None)
        found = game_screen(app)
        assert found is not None and app.connection is not None
        screen: GameScreen = found
        await until(pilot, lambda: screen.state.my_turn)
        seq = screen.state.seq
        await app.connection.drop()
        banner = screen.query_one("#connection")
        await until(pilot, lambda: bool(banner.display), timeout=5)
        assert "Reconnecting" in str(banner.render())
        assert screen.query_one(Board).choosable == frozenset()
        await until(pilot, lambda: not banner.display, timeout=5)
        assert app.connection.followed[screen.match_id].seq == seq
        screen = await play_out(pilot, app)
        assert Game.from_record(SMALL, " ".join(screen.state.record)).over


async def test_open_match_created_in_lobby_and_joined_by_another(server: RunningServer) -> None:
    """Ann creates an open match with the form; Bob sees it in his lobby, joins, and they play."""
    ann = launch(server.url, "ann")
    bob = launch(server.url, "bob")
    async with ann.run_test(size=SIZE) as p1, bob.run_test(size=SIZE) as p2:
        await until(p1, lambda: ann.connection is not None and ann.connection.connected)
        await p1.press("c")
        form = ann.screen
        assert isinstance(form, CreateMatchScreen)
        form.query_one("#houses", Input).value = "3"
        form.query_one("#seeds", Input).value = "2"
        form.query_one("#opponent", Select).value = ""
        await p1.press("ctrl+s")
        await until(p1, lambda: game_screen(ann) is not None)
        mine = game_screen(ann)
        assert mine is not None and mine.state.status == "open"
        assert "Waiting for an opponent" in str(mine.query_one("#notice").render())
        table = bob.lobby.query_one("#open", DataTable)
        await until(p2, lambda: bob.connection is not None and bob.connection.connected)
        await p2.press("g")
        await until(p2, lambda: table.row_count == 1)
        table.focus()
        await p2.press("enter")
        await until(p2, lambda: game_screen(bob) is not None)
        theirs = game_screen(bob)
        assert theirs is not None and theirs.state.you == Side.NORTH
        await until(p1, lambda: mine.state.status == "live" and mine.state.north == "bob")
        await p1.press("1")
        await until(p2, lambda: theirs.state.record == ["1"])
        assert theirs.state.position.fen() == mine.state.position.fen()


async def test_pairing_then_opponent_leaves_and_claim_is_refused_within_grace(server: RunningServer) -> None:
    """Two players pair with `a`; when one goes, the other sees it and a claim waits for the grace period."""
    ann = launch(server.url, "ann")
    async with ann.run_test(size=SIZE) as p1:
        await until(p1, lambda: ann.connection is not None and ann.connection.connected)
        await p1.press("a")
        bob = launch(server.url, "bob")
        async with bob.run_test(size=SIZE) as p2:
            await until(p2, lambda: bob.connection is not None and bob.connection.connected)
            await p2.press("a")
            await until(p2, lambda: game_screen(bob) is not None)
            await until(p1, lambda: game_screen(ann) is not None)
            mine, theirs = game_screen(ann), game_screen(bob)
            assert mine is not None and theirs is not None
            assert {mine.state.you, theirs.state.you} == {Side.SOUTH, Side.NORTH}
        assert mine.state.you is not None
        await until(p1, lambda: mine.state.you is not None and mine.state.you.other in mine.state.away)
        assert "disconnected" in str(mine.query_one("#notice").render())
        await p1.press("w")
        await until(p1, lambda: mine.error is not None)
        assert "claim" in (mine.error or "")
        assert not mine.state.over


async def test_next_session_resumes_the_unfinished_game(server: RunningServer, tmp_path: Path) -> None:
    """The token is remembered: quitting mid-game and starting again offers the game back, and `r` reopens it."""
    identities = tmp_path / "identities.json"
    first = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1, identity_file=identities)
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: game_screen(first) is not None)
        screen = game_screen(first)
        assert screen is not None
        await until(pilot, lambda: screen.state.my_turn and screen.query_one(Board).position is not None)
        match_id, record = screen.match_id, list(screen.state.record)
    assert identities.stat().st_mode & 0o077 == 0
    again = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1, identity_file=identities)
    async with again.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(again.screen, ResumeScreen))
        await pilot.press("r")
        await until(pilot, lambda: game_screen(again) is not None)
        resumed = game_screen(again)
        assert resumed is not None and resumed.match_id == match_id
        assert resumed.state.record == record and resumed.state.you == Side.SOUTH



async def test_next_session_can_start_a_new_game_instead(server: RunningServer, tmp_path: Path) -> None:
    """Offered an unfinished game, `n` starts the new game the launch asked for; the old one stays unfinished."""
    identities = tmp_path / "identities.json"
    first = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1, identity_file=identities)
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: game_screen(first) is not None)
        old = game_screen(first)
        assert old is not None
        old_id = old.match_id
    again = launch(server.url, "ann", start="bot", variant=SMALL, bot_level=1, identity_file=identities)
    async with again.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(again.screen, ResumeScreen))
        await pilot.press("n")
        await until(pilot, lambda: game_screen(again) is not None)
        new = game_screen(again)
        assert new is not None and new.match_id != old_id and new.state.record == []
    assert server.arena.rooms[old_id].match.status == "live"

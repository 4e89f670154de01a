"""The terminal client's events screen against a real server: list, open, enter, standings, refusals, my game."""

from __future__ import annotations

from functools import partial

from textual.widgets import DataTable, Static

from client.app import KalahApp, Launch
from client.screens.events import EventsScreen
from client.screens.game import GameScreen
from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.client_hosts import shown, until
from tests.helpers.wire import Client, FirstLegal

SIZE = (110, 40)
QUICK = "kalah(1,1,clock=60+1)"
"""One house, one seed: a game that a single sowing ends."""


def names(table: DataTable[object]) -> list[str]:
    """The entrant names in the standings table, in rank order."""
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_list_open_enter_see_standings_and_go_to_my_game(arena: RunningServer) -> None:
    """`e` in the lobby lists the server's events; Enter shows one's standings; `j` enters (the standings
    show you), `j` again is refused in one line; once the event starts the game opens, and after `escape`
    `m` opens it again."""
    bob = await Client.open(arena.url, "bob")
    try:
        settings = {"name": "Tuesday", "kind": "swiss", "rounds": 1, "variant": QUICK, "min_entrants": 2,
                    "max_entrants": 4}
        eid = (await bob.request("event_state", type="event_create", settings=settings))["event_id"]
        app = KalahApp(Launch(url=arena.url, name="ann", animate=False, retry_delays=(0.05, 0.1)))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.lobby.player_name == "ann" and app.lobby.connection_notice is None)
            assert "events" in {b.binding.action for b in app.lobby.active_bindings.values()}  # in the footer
            await pilot.press("e")
            await until(pilot, lambda: shown(app, EventsScreen) is not None)
            screen = shown(app, EventsScreen)
            assert screen is not None
            listed = screen.query_one("#events", DataTable)
            await until(pilot, lambda: listed.row_count == 1)
            assert str(listed.get_row_at(0)[1]) == "Tuesday"
            listed.focus()
            await pilot.press("enter")
            await until(pilot, lambda: screen.state is not None and screen.state.event_id == eid)
            standings = screen.query_one("#event-standings", DataTable)
            assert standings.row_count == 0
            await pilot.press("j")
            await until(pilot, lambda: names(standings) == ["ann"])
            assert str(screen.query_one("#event-game", Static).render()) == "You are entered."
            await pilot.press("j")
            error = screen.query_one("#event-error", Static)
            await until(pilot, lambda: "already entered" in str(error.render()))
            assert str(error.render()).endswith("(not_eligible)") and "\n" not in str(error.render())
            await bob.request("event_state", type="event_join", event_id=eid)
            await until(pilot, lambda: shown(app, GameScreen) is not None)
            game = shown(app, GameScreen)
            assert game is not None and game.match_id == f"{eid}-r1-t1"
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen)
            await until(pilot, lambda: sorted(names(standings)) == ["ann", "bob"])
            assert f"{eid}-r1-t1" in str(screen.query_one("#event-game", Static).render())
            await pilot.press("m")
            await until(pilot, lambda: shown(app, GameScreen) is not None)
            again = shown(app, GameScreen)
            assert again is not None and again.match_id == f"{eid}-r1-t1" and not again.spectating
    finally:
        await bob.close()


async def test_an_arena_shows_one_game_screen_at_a_time(serve: Serve) -> None:
    """In an arena against a hosted bot each new game replaces the finished one (before: each opened on top of the
    last, and after three games Escape had to be pressed three times); Escape from the game returns to the event."""
    running = await serve(bot_factory=FirstLegal.make)
    host = await Client.open(running.url, "host")
    try:
        settings = {"name": "Blitz", "kind": "arena", "duration_s": 120, "variant": QUICK, "min_entrants": 2}
        eid = (await host.request("event_state", type="event_create", settings=settings, bots=["first"]))["event_id"]
        app = KalahApp(Launch(url=running.url, name="ann", animate=False, retry_delays=(0.05, 0.1)))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.lobby.player_name == "ann" and app.lobby.connection_notice is None)
            await pilot.press("e")
            await until(pilot, lambda: shown(app, EventsScreen) is not None)
            events = shown(app, EventsScreen)
            assert events is not None
            listed = events.query_one("#events", DataTable)
            await until(pilot, lambda: listed.row_count == 1)
            listed.focus()
            await pilot.press("enter")
            await until(pilot, lambda: events.state is not None and events.state.event_id == eid)
            await pilot.press("j")
            played: set[str] = set()
            while len(played) < 3:
                await until(pilot, lambda: _game_to_play(app, played) is not None, timeout=20)
                game = _game_to_play(app, played)
                assert game is not None
                await until(pilot, partial(_my_turn_or_over, game))
                if not game.state.over:
                    await pilot.press("1")
                await until(pilot, partial(_over, game))
                played.add(game.match_id)
                assert sum(isinstance(s, GameScreen) for s in app.screen_stack) == 1
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is events)
            assert not any(isinstance(s, GameScreen) for s in app.screen_stack)
    finally:
        await host.close()


def _my_turn_or_over(game: GameScreen) -> bool:
    """Whether the game waits for the player's move, or is over."""
    return game.state.over or (game.state.my_turn and not game.pending)


def _over(game: GameScreen) -> bool:
    """Whether the game is over."""
    return game.state.over


def _game_to_play(app: KalahApp, played: set[str]) -> GameScreen | None:
    """The game screen on top if it shows a game not yet played in the test."""
    game = shown(app, GameScreen)
    return game if game is not None and game.match_id not in played else None

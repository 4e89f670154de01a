"""The board and game screen without a server: keys, mouse, pie swap, transfer, resign; snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from textual.screen import Screen

from client.match_state import MatchState
from client.screens.dialogs import HelpScreen
from client.screens.game import GameScreen
from client.screens.replay import ReplayScreen
from client.screens.terminal_size import GAME_PANEL_LINES, REPLAY_PANEL_LINES, needed_size
from client.stored_game import StoredGame
from client.ui_messages import EventReceived
from client.widgets.board import (
    HOUSE_KEYS,
    KEY_LABELS,
    Board,
    HouseKey,
    Pit,
    board_width,
    bottom_row,
    house_width,
    keys_text,
)
from client.widgets.panels import PlayerBar
from protocol import Game, Side, Variant
from protocol.messages import Clocks, MakeMove, Resign, SwapSides, TransferSeed
from tests.client_hosts import ScreenHost, make_snapshot, until
from tests.test_client_match_state import action

SIZE = (100, 26)


def host(record: str = "", variant: str = "kalah(6,4)", you: str | None = "south", **kw: object) -> ScreenHost:
    """A host app showing the game screen of `record`, without animation."""
    state = MatchState.from_snapshot(make_snapshot(record, variant, you, **kw))  # type: ignore[arg-type]
    return ScreenHost(GameScreen(state, animate=False))


async def test_house_keys_arrows_and_enter_send_moves() -> None:
    """Key 3 sows bin 3; after an extra turn, arrows and Enter choose another house."""
    app = host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        assert app.sent == [MakeMove(match_id="m1", ply=0, bin=3)]
        await pilot.press("4")  # waiting for the move to come back: nothing more is sent
        assert len(app.sent) == 1


async def test_cursor_keys_and_click() -> None:
    """Right, right, Enter sows the third legal house; a click on a house, or on its key, sows it."""
    app = host("3")  # South moves again after the extra turn; bin 3 is empty
    async with app.run_test(size=SIZE) as pilot:
        board = app.screen.query_one(Board)
        assert 3 not in board.choosable and board.cursor == 1
        await pilot.press("right", "right", "enter")
        assert app.sent == [MakeMove(match_id="m1", ply=1, bin=4)]
    app = host("3")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#pit-6")
        await pilot.click("#pit-3")
        assert app.sent == [MakeMove(match_id="m1", ply=1, bin=6)]
    app = host("1", you="north")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#key-9")  # the key label under North's second house
        assert app.sent == [MakeMove(match_id="m1", ply=1, bin=9)]


async def test_illegal_and_opponent_houses_are_unavailable() -> None:
    """Empty own houses are marked unavailable; nothing is choosable on the opponent's turn."""
    app = host("3")
    async with app.run_test(size=SIZE):
        pit = app.screen.query_one("#pit-3", Pit)
        assert pit.has_class("-unavailable") and not pit.has_class("-legal")
    app = host("3 6")
    async with app.run_test(size=SIZE) as pilot:
        assert app.screen.query_one(Board).choosable == frozenset()
        await pilot.press("1")
        assert app.sent == []


async def test_pie_swap_offered_to_north() -> None:
    """North sees the swap offer on its first turn and `s` sends the swap."""
    app = host("3 6", variant="kalah(6,4,pie=on)", you="north")
    async with app.run_test(size=SIZE) as pilot:
        assert "Pie rule" in str(app.screen.query_one("#notice").render())
        await pilot.press("s")
        assert app.sent == [SwapSides(match_id="m1", ply=2)]


async def test_swap_names_who_took_it_and_leaves_the_footer() -> None:
    """After bob (North) swaps, the notice says he took over South, and `s` is no longer offered."""
    pie = "kalah(6,4,pie=on)"
    app = host("3 6", variant=pie, you="north")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        assert "swap" in {b.binding.action for b in screen.active_bindings.values()}
        await pilot.press("s")
        screen.post_message(EventReceived(action(5, "swap", "north", variant=pie, record="3 6")))
        await until(pilot, lambda: screen.state.record == ["3", "6", "swap"])
        notice = str(screen.query_one("#notice").render())
        assert "Pie swap: bob took over South" in notice and "ann now plays North" in notice
        assert "North played" not in notice and "Waiting for ann" in notice
        assert "swap" not in {b.binding.action for b in screen.active_bindings.values()}
        assert screen.query_one(Board).viewpoint == Side.SOUTH


async def test_opening_transfer_two_choices_or_none() -> None:
    """North picks a source and a destination house, or declines with n."""
    app = host("", variant="kalah(6,4,transfer=on)", you="north")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#pit-8")
        await pilot.click("#pit-2")
        assert app.sent == [TransferSeed(match_id="m1", ply=0, src=8, dst=2)]
    app = host("", variant="kalah(6,4,transfer=on)", you="north")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        assert app.sent == [TransferSeed(match_id="m1", ply=0)]


async def test_resign_asks_first() -> None:
    """r asks for confirmation; n keeps playing, y resigns."""
    app = host("3 6 9")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", "n")
        assert app.sent == []
        await pilot.press("r", "y")
        assert app.sent == [Resign(match_id="m1")]


def test_snapshot_south_after_capture(snap_compare: object) -> None:
    """Board from South after North's capture, sowing highlighted, clocks stopped."""
    clocks = Clocks(south_ms=181_000, north_ms=9_400)
    app = host("1 11 2 1", clocks=clocks, spectators=3)
    assert snap_compare(app, terminal_size=SIZE)  # type: ignore[operator]


def test_snapshot_north_pie_offer_light(snap_compare: object) -> None:
    """Board from North with the pie swap offered, in the light theme."""
    state = MatchState.from_snapshot(make_snapshot("3 6", "kalah(6,4,pie=on)", "north"))
    app = ScreenHost(GameScreen(state, animate=False), light=True)
    assert snap_compare(app, terminal_size=SIZE)  # type: ignore[operator]


def test_snapshot_spectator_game_over(snap_compare: object) -> None:
    """A spectator's read-only board with the game-over panel."""
    app = host("3 6", you=None, status="finished", result=None, reason="resign", winner="north")
    assert snap_compare(app, terminal_size=SIZE)  # type: ignore[operator]


def test_snapshot_replay_midgame(snap_compare: object) -> None:
    """The replay screen two steps back from the end of a short record."""
    stored = StoredGame("m9", Variant.parse("kalah(4,3)"), ("1", "6", "2", "7", "3"), "ann", "bob")
    app = ScreenHost(ReplayScreen(stored, animate=False))
    assert snap_compare(app, press=["end", "left", "left"], terminal_size=SIZE)  # type: ignore[operator]


async def test_twelve_houses_keys_reach_every_house() -> None:
    """On Kalah(12,s) the keys 0, - and = choose houses 10, 11 and 12."""
    for key, bin_number in (("0", 10), ("minus", 11), ("equals_sign", 12)):
        app = host("", variant="kalah(12,2)")
        async with app.run_test(size=(130, 26)) as pilot:
            await pilot.press(key)
            assert app.sent == [MakeMove(match_id="m1", ply=0, bin=bin_number)]


def test_snapshot_narrow_terminal(snap_compare: object) -> None:
    """On an 80x24 terminal the move list goes under the board, wrapped."""
    app = host("3 6 9 10 1", clocks=Clocks(south_ms=300_000, north_ms=295_500))
    assert snap_compare(app, terminal_size=(80, 24))  # type: ignore[operator]


def north_to_move(variant: str) -> str:
    """A one-move record after which North is to move with seeds in every house."""
    start = Game(Variant.parse(variant)).position
    for b in start.legal_bins():
        after = start.play(b)
        if after.to_move == Side.NORTH and not after.over and all(after.pits[i - 1] for i in
                                                                     after.house_bins(Side.NORTH)):
            return str(b)
    raise AssertionError(f"no such move in {variant}")


@pytest.mark.parametrize("houses", [1, 8, 12])
async def test_each_key_shown_sows_the_house_above_it(houses: int) -> None:
    """At 80x24, from either seat, the board fits and the key shown under each house is the key that sows it."""
    variant = f"kalah({houses},5)"
    for seat, record in (("south", ""), ("north", north_to_move(variant))):
        app = host(record, variant=variant, you=seat)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = app.screen
            assert isinstance(screen, GameScreen)
            board = screen.query_one(Board)
            assert board.region.right <= 80 and screen.query_one("#bottom-player").region.bottom <= 23
            row = bottom_row(Variant.parse(variant), Side.SOUTH if seat == "south" else Side.NORTH)
            labels = list(screen.query(HouseKey))
            assert [str(k.render()) for k in labels] == list(KEY_LABELS[:houses])
            for index, label in enumerate(labels):
                pit = screen.query_one(f"#pit-{label.bin}", Pit)
                assert label.bin == row[index] and pit.region.x <= label.region.x < pit.region.right
                await pilot.press(HOUSE_KEYS[index])
                assert app.sent[-1] == MakeMove(match_id="m1", ply=len(record.split()), bin=label.bin)
                screen.pending = False  # as if the move had been refused: the next key may be tried
                screen.refresh_view()
            assert screen.hint is None


async def test_a_wrong_key_or_click_says_why() -> None:
    """A key past the last house, an empty house, the opponent's house and a stray letter each get a hint."""
    app = host("3", you="south")  # South moves again; house 3 is empty
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        hint = screen.query_one("#hint")
        await pilot.press("8")
        assert screen.hint == "Key 8 is not one of your houses: use 1 to 6, shown under your houses."
        assert hint.display and "Key 8" in str(hint.render())
        await pilot.press("3")
        assert screen.hint == "House 3 is empty: choose a house with seeds."
        await pilot.click("#pit-10")
        assert screen.hint == "Bin 10 is not one of your houses: sow from your own row, at the bottom."
        await pilot.press("x")
        assert screen.hint is not None and screen.hint.startswith("Key x does nothing here")
        await pilot.press("4")
        assert app.sent == [MakeMove(match_id="m1", ply=1, bin=4)] and not hint.display
    app = host("3 6", you="south")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await pilot.press("1")
        assert screen.hint == "Not your turn: waiting for bob." and app.sent == []


@pytest.mark.parametrize("seat", ["south", "north"])
@pytest.mark.parametrize("variant", ["kalah(1,5)", "kalah(6,4)", "kalah(12,4)"])
def test_snapshot_board_at_80x24(snap_compare: object, variant: str, seat: str) -> None:
    """Boards of 1, 6 and 12 houses from either seat at 80x24: whole, bin numbers on, keys under the own row."""
    record = "" if seat == "south" else north_to_move(variant)
    app = host(record, variant=variant, you=seat, clocks=Clocks(south_ms=300_000, north_ms=300_000))
    assert snap_compare(app, terminal_size=(80, 24))  # type: ignore[operator]


def test_snapshot_wrong_key_hint(snap_compare: object) -> None:
    """North presses 8, the bin number of its first house: the hint names the keys that work."""
    app = host("1", you="north")
    assert snap_compare(app, press=["8"], terminal_size=(80, 24))  # type: ignore[operator]


def test_every_board_fits_78_columns_and_names_its_keys() -> None:
    """Houses narrow as they grow in number so 1 to 12 houses fit 78 columns; the keys read as words."""
    assert [house_width(h) for h in (1, 7, 8, 9, 10, 11, 12)] == [8, 8, 7, 6, 6, 5, 5]
    assert max(board_width(h) for h in range(1, 13)) == 78
    largest = [needed_size(Variant(houses=h, seeds=s), keys=True, panel=GAME_PANEL_LINES, wide=False, columns=80)
               for h in range(1, 13) for s in (1, 200)]
    assert max(largest) == (80, 19)  # every board, up to 200 seeds a house, in 80x24, the game-over panel too
    sizes = {h: needed_size(Variant(houses=h, seeds=4), keys=True, panel=GAME_PANEL_LINES, wide=False)
             for h in range(1, 13)}
    assert [sizes[h] for h in range(1, 7)] == [(42, 21), (42, 21), (44, 21), (52, 21), (60, 21), (68, 19)]
    assert min(sizes[h][0] for h in range(7, 13)) == 74 and {sizes[h][1] for h in range(7, 13)} == {19}  # documented
    assert [keys_text(h) for h in (1, 6, 10, 12)] == ["1", "1 to 6", "1 to 9 and 0", "1 to 9, 0, - and ="]


@pytest.mark.parametrize(("variant", "you"), [("kalah(6,4)", "south"), ("kalah(12,3)", "south"), ("kalah(2,3)", None)])
async def test_a_terminal_too_small_for_the_board_says_what_it_needs(variant: str, you: str | None) -> None:
    """At 40x12 the game screen shows one line naming the size its variant needs instead of a cut-off board; keys
    work meanwhile and the game goes on; at that size the whole board column shows (in focus), one column or line
    less brings the line back, and so on a wide terminal."""
    parsed = Variant.parse(variant)
    app = host("", variant=variant, you=you)
    async with app.run_test(size=(40, 12)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        line = screen.query_one("#too-small")
        width, height = needed_size(parsed, keys=you is not None, panel=GAME_PANEL_LINES, wide=False)
        assert line.display and not screen.query_one("#game-body").display
        assert str(line.render()) == (f"This terminal is 40 columns by 12 lines: {variant} needs at least {width} by "
                                      f"{height}. Enlarge the window and the board comes back as it was (nothing is "
                                      "lost meanwhile; q quits).")
        await pilot.press("question_mark")  # the keys still work
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        south_move = Game(parsed).position.legal_bins()[0]
        screen.post_message(EventReceived(action(3, str(south_move), "south", variant=variant)))
        await until(pilot, lambda: screen.state.ply == 1)  # the game went on while the board was hidden
        await pilot.resize_terminal(width, height)
        column, body = screen.query_one("#board-column"), screen.query_one("#game-body")
        await until(pilot, lambda: not line.display and body.display)  # the screen handles the resize in its turn
        await pilot.pause()  # and lays the board out
        assert app.focused is screen.query_one(Board)
        assert column.region.right <= width and screen.query_one("#notice").region.bottom <= height - 1  # the footer
        assert screen.query_one(Board).position == screen.state.position
        for size in ((width - 1, height), (width, height - 1)):
            await pilot.resize_terminal(*size)
            await until(pilot, lambda: line.display and not body.display)
        wide_width, wide_height = needed_size(parsed, keys=you is not None, panel=GAME_PANEL_LINES, wide=True)
        await pilot.resize_terminal(100, wide_height)
        await until(pilot, lambda: not line.display)
        await pilot.pause()
        assert screen.query_one("#notice").region.bottom <= wide_height - 1
        assert wide_width <= 100
        await pilot.resize_terminal(100, wide_height - 1)
        await until(pilot, lambda: line.display)


LONG_VARIANT = "kalah(6,4,capture=empty,extra=off,relay=on,majority=on,pie=on,leftover=emptier,clock=5+3)"
"""A Kalah(6,4) with many options: its name is longer than a title has room for."""


def shown_whole(screen: Screen[Any], widget_id: str) -> bool:
    """Whether every line of the widget `widget_id` is on `screen`: none under the footer, none past its edge."""
    widget = screen.query_one(widget_id)
    region = widget.region
    hits = [screen.get_widget_at(region.x + 1, y)[0] for y in range(region.y, region.bottom)]
    return region.height > 0 and region.right <= screen.size.width and all(
        hit is widget or widget in hit.ancestors for hit in hits)


@pytest.mark.parametrize(("variant", "you", "wide"), [
    ("kalah(6,4)", "south", False), ("kalah(6,4)", None, False), ("kalah(3,3)", "south", False),
    ("kalah(6,4)", "south", True), (LONG_VARIANT, "south", False), (LONG_VARIANT, None, True),
])
async def test_the_game_over_panel_is_whole_at_the_least_size(variant: str, you: str | None, wide: bool) -> None:
    """At exactly the size the too-small line asks for (on a narrow and on a wide terminal), a finished game shows the
    board and every line of the game-over panel, unwrapped (a long name in the result is cut with `…`); one line
    less shows the size line instead."""
    parsed = Variant.parse(variant)
    width, height = needed_size(parsed, keys=you is not None, panel=GAME_PANEL_LINES, wide=wide)
    size = (100 if wide else width, height)
    app = host(north_to_move(variant), variant=variant, you=you, north="n" * 32, status="finished", result=-12,
               reason="majority", winner="north")
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        body, line = screen.query_one("#game-body"), screen.query_one("#too-small")
        await until(pilot, lambda: body.display and screen.query_one("#game-over").display)
        await pilot.pause()
        over = screen.query_one("#game-over")
        drawn = [over.render_line(y).text.strip() for y in range(GAME_PANEL_LINES - 2)]  # inside the border
        assert drawn[0] == "GAME OVER" and drawn[1].startswith("nnnn") and drawn[1].endswith("…")
        assert drawn[2].startswith("Stores: South ") and drawn[3] == "v: replay · Esc: lobby · q: quit"
        assert over.region.height == GAME_PANEL_LINES
        assert all(shown_whole(screen, part) for part in ("#title", "#board", "#notice", "#game-over"))
        await pilot.resize_terminal(size[0], height - 1)
        await until(pilot, lambda: line.display and not body.display)


@pytest.mark.parametrize("wide", [False, True])
async def test_a_long_variant_name_is_cut_in_the_title(wide: bool) -> None:
    """A Kalah(6,4) with many options keeps the title to one line at the least size: the name cut with `…`, what
    follows it kept, the board right under it."""
    width, height = needed_size(Variant.parse(LONG_VARIANT), keys=True, panel=GAME_PANEL_LINES, wide=wide)
    size = (100 if wide else width, height)
    app = host(north_to_move(LONG_VARIANT), variant=LONG_VARIANT, you="north")
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        title = screen.query_one("#title")
        await until(pilot, lambda: title.display)
        await pilot.pause()
        text = str(title.render())
        assert title.region.height == 1 and len(text) == size[0] - 2
        assert text.startswith("Kalah Arena · match m1 · kalah(6,4,") and text.endswith("… · Playing North · ply 1")
        assert screen.query_one("#top-player").region.y == (2 if wide else 1)
        assert all(shown_whole(screen, part) for part in ("#board", "#bottom-player", "#notice"))


async def test_the_end_of_a_replay_is_whole_at_the_least_size() -> None:
    """At the end of a record, at exactly the size the replay asks for, its panel is whole under the notice."""
    stored = StoredGame("m9", Variant.parse(LONG_VARIANT), ("1",), "ann", "bob")
    app = ScreenHost(ReplayScreen(stored, animate=False))
    size = needed_size(stored.variant, keys=False, panel=REPLAY_PANEL_LINES, wide=False)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("end")
        await until(pilot, lambda: screen.query_one("#game-over").display)
        await pilot.pause()
        assert str(screen.query_one("#title").render()).endswith("… · position 1 of 1")
        assert all(shown_whole(screen, part) for part in ("#title", "#board", "#notice", "#game-over"))


async def test_the_replay_too_says_what_size_its_board_needs() -> None:
    """The replay screen on a terminal too small for its board shows the same line, and the board once it fits."""
    stored = StoredGame("m9", Variant.parse("kalah(4,3)"), ("1", "6"), "ann", "bob")
    app = ScreenHost(ReplayScreen(stored, animate=False))
    async with app.run_test(size=(50, 20)) as pilot:
        line = app.screen.query_one("#too-small")
        assert str(line.render()).startswith("This terminal is 50 columns by 20 lines: kalah(4,3) needs at least 52 "
                                             "by 20.")
        await pilot.resize_terminal(*needed_size(stored.variant, keys=False, panel=REPLAY_PANEL_LINES, wide=False))
        await until(pilot, lambda: not line.display and app.screen.query_one(Board).display)


async def test_a_small_board_plays_in_a_terminal_narrower_than_the_bars() -> None:
    """Kalah(3,3) plays in 50 columns and in the fewer it needs: the bars and the notice narrow to the terminal (a
    long name is cut, the clock and `(you)` stay), every part stays on screen and a house key sows; one column less
    brings the line back, and Kalah(6,4) still shows it one column below its 68."""
    long_name = "n" * 32
    clocks = Clocks(south_ms=300_000, north_ms=295_500)
    app = host("", variant="kalah(3,3)", north=long_name, clocks=clocks)
    async with app.run_test(size=(50, 21)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        line, body = screen.query_one("#too-small"), screen.query_one("#game-body")
        width, height = needed_size(screen.state.variant, keys=True, panel=GAME_PANEL_LINES, wide=False)
        assert width < 66
        for size in ((50, 21), (width, height)):
            await pilot.resize_terminal(*size)
            await until(pilot, lambda: not line.display and body.display)
            await pilot.pause()
            parts = [screen.query_one(f"#{part}") for part in ("top-player", "bottom-player", "notice", "board")]
            assert all(part.region.right <= size[0] for part in parts)
            assert screen.query_one("#notice").region.bottom <= size[1] - 1  # above the footer
            top, bottom = (str(screen.query_one(f"#{bar}", PlayerBar).render()) for bar in ("top-player",
                                                                                            "bottom-player"))
            assert "4:55" in top and "…" in top and long_name not in top and len(top) <= size[0] - 4
            assert "ann" in bottom and "(you)" in bottom and "5:00" in bottom
        await pilot.press("1")
        assert app.sent == [MakeMove(match_id="m1", ply=0, bin=1)]
        await pilot.resize_terminal(width - 1, height)
        await until(pilot, lambda: line.display and not body.display)
    app = host("", variant="kalah(6,4)")
    async with app.run_test(size=(67, 24)) as pilot:
        line = app.screen.query_one("#too-small")
        await until(pilot, lambda: line.display)
        assert "kalah(6,4) needs at least 68 by 19." in str(line.render())

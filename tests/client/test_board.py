"""The board and game screen without a server: keys, mouse, pie swap, transfer, resign; snapshots."""

from __future__ import annotations

import pytest

from client.match_state import MatchState
from client.screens.game import GameScreen
from client.screens.replay import ReplayScreen
from client.stored_game import StoredGame
from client.ui_messages import EventReceived
from client.widgets.board import (
    HOUSE_KEYS,
    KEY_LABELS,
    Board,
    HouseKey,
    Pit,
    bottom_row,
)
from protocol import Game, Side, Variant
from protocol.messages import Clocks, MakeMove, Resign, SwapSides, TransferSeed
from tests.client.test_match_state import action
from tests.helpers.client_hosts import ScreenHost, make_snapshot, until

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
        notice = screen.query_one("#notice")
        await pilot.press("8")
        assert screen.hint == "Key 8 is not one of your houses: use 1 to 6, shown under your houses."
        assert "Key 8" in str(notice.render()) and "Your move" not in str(notice.render())  # in the prompt's place
        await pilot.press("3")
        assert screen.hint == "House 3 is empty: choose a house with seeds."
        await pilot.click("#pit-10")
        assert screen.hint == "Bin 10 is not one of your houses: sow from your own row, at the bottom."
        await pilot.press("x")
        assert screen.hint is not None and screen.hint.startswith("Key x does nothing here")
        await pilot.press("4")
        assert app.sent == [MakeMove(match_id="m1", ply=1, bin=4)] and "Key" not in str(notice.render())
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

"""The board screens at small terminal sizes: the least size each board needs, what shows below it, and at exactly
that size every line whole (the game-over panel, hints and errors, the replay's solver line, the title)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.screen import Screen

from client.screens.dialogs import HelpScreen
from client.screens.game import GameScreen
from client.screens.replay import ReplayScreen
from client.screens.terminal_size import needed_size
from client.stored_game import REASONS, StoredGame
from client.ui_messages import AnalysisReceived, ErrorReceived, EventReceived
from client.widgets.board import (
    Board,
    board_width,
    house_width,
    keys_text,
)
from client.widgets.panels import PlayerBar
from protocol import EndReason, Game, Variant
from protocol.messages import Analysis, Clocks, ErrorMessage, GameOverEvent, MakeMove, Resign
from tests.client.test_board import host, north_to_move
from tests.client.test_match_state import action
from tests.helpers.client_hosts import ScreenHost, until


def test_every_board_fits_78_columns_and_names_its_keys() -> None:
    """Houses narrow as they grow in number so 1 to 12 houses fit 78 columns; the keys read as words."""
    assert [house_width(h) for h in (1, 7, 8, 9, 10, 11, 12)] == [8, 8, 7, 6, 6, 5, 5]
    assert max(board_width(h) for h in range(1, 13)) == 78
    largest = [needed_size(Variant(houses=h, seeds=s), wide=False, columns=80) for h in range(1, 13) for s in (1, 200)]
    assert max(largest) == (80, 14)  # every board, up to 200 seeds a house, in 80x24, the game-over panel too
    sizes = {h: needed_size(Variant(houses=h, seeds=4), wide=False) for h in range(1, 13)}
    assert [sizes[h] for h in range(1, 7)] == [(42, 16), (42, 16), (44, 16), (52, 16), (60, 16), (68, 14)]
    assert min(sizes[h][0] for h in range(7, 13)) == 74 and {sizes[h][1] for h in range(7, 13)} == {14}  # documented
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
        width, height = needed_size(parsed, wide=False)
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
        wide_width, wide_height = needed_size(parsed, wide=True)
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


def panel_lines(screen: Screen[Any]) -> list[str]:
    """The lines the game-over panel of `screen` shows, without its border."""
    over = screen.query_one("#game-over")
    lines = [over.render_line(y).text.strip(" ║╔╗╚╝═") for y in range(over.region.height)]
    return [line for line in lines if line]


@pytest.mark.parametrize(("variant", "you", "wide"), [
    ("kalah(6,4)", "south", False), ("kalah(6,4)", None, False), ("kalah(3,3)", "south", False),
    ("kalah(6,4)", "south", True), (LONG_VARIANT, "south", False), (LONG_VARIANT, None, True),
])
async def test_the_game_over_panel_is_whole_at_the_least_size(variant: str, you: str | None, wide: bool) -> None:
    """At exactly the size the too-small line asks for (on a narrow and on a wide terminal), a finished game shows the
    board and the compact game-over panel whole, without its border: the result with its reason (a long name cut with
    `…`), then the keys; one line less shows the size line instead."""
    parsed = Variant.parse(variant)
    width, height = needed_size(parsed, wide=wide)
    size = (100 if wide else width, height)
    app = host(north_to_move(variant), variant=variant, you=you, north="n" * 32, status="finished", result=-12,
               reason="majority", winner="north")
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        body, line = screen.query_one("#game-body"), screen.query_one("#too-small")
        await until(pilot, lambda: body.display and screen.query_one("#game-over").display)
        await pilot.pause()
        drawn = panel_lines(screen)
        assert screen.query_one("#game-over").region.height == 2 and len(drawn) == 2
        if parsed.houses == 6:  # 64 columns hold the result and its reason on one line
            assert drawn[0].startswith("nnnnnnnnn") and drawn[0].endswith("… (North) wins by 12 (a store holds the "
                                                                         "majority)")
            assert drawn[1] == "v: replay · Esc: lobby · q: quit"
        else:  # 40 do not: the reason takes the keys' line (the footer has them)
            assert drawn == [drawn[0], "(a store holds the majority)"] and drawn[0].endswith("… (North) wins by 12")
        assert all(shown_whole(screen, part) for part in ("#title", "#board", "#notice", "#game-over"))
        await pilot.resize_terminal(size[0], height - 1)
        await until(pilot, lambda: line.display and not body.display)


@pytest.mark.parametrize("reason", [*REASONS, "forfeit"])
@pytest.mark.parametrize(("variant", "size"), [("kalah(6,4)", (80, 24)), ("kalah(6,4)", (68, 14)),
                                               ("kalah(3,3)", (44, 16)), ("kalah(3,3)", (44, 21))])
async def test_the_result_always_says_who_won_by_how_much_and_why(variant: str, size: tuple[int, int],
                                                                  reason: str) -> None:
    """With the longest names the server allows, every reason's wording is whole in the game-over panel, in full (80x24,
    44x21) and compact (the least sizes): the winner's name is cut first, and where even that leaves no room the reason
    takes a line of its own; an abort, which no one wins, says so."""
    aborted = reason == "aborted"
    app = host(north_to_move(variant), variant=variant, south="s" * 32, north="n" * 32, status="finished",
               result=None if aborted else -12, reason=reason, winner=None if aborted else "north")
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await until(pilot, lambda: screen.query_one("#game-body").display and screen.query_one("#game-over").display)
        await pilot.pause()
        drawn = panel_lines(screen)
        why = f"({REASONS.get(reason, reason)})"
        assert any(line.endswith(why) for line in drawn), drawn
        if aborted:
            assert "Game over (aborted by the operator)" in drawn
        else:
            assert any(line.startswith("nnnnnnnnn") and " (North) wins by 12" in line for line in drawn), drawn
        assert shown_whole(screen, "#game-over") and shown_whole(screen, "#notice")


async def test_play_keeps_its_least_size_and_a_resignation_fits_it() -> None:
    """68 by 14 shows a Kalah(6,4) board in play, as it did before the end of a game was counted; resigning there
    (`r`, `y`) ends in the compact panel, whole under the notice, saying who won and why; 4 lines more show the panel
    in full, and 3 the compact one again."""
    app = host("3 6", north="n" * 32)
    async with app.run_test(size=(68, 14)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await until(pilot, lambda: screen.query_one("#game-body").display)
        assert not screen.query_one("#too-small").display and shown_whole(screen, "#board")
        await pilot.press("r", "y")
        assert app.sent == [Resign(match_id="m1")]
        screen.post_message(EventReceived(GameOverEvent(match_id="m1", seq=screen.state.seq + 1, result=None,
                                                        reason=EndReason.RESIGN, winner="north", player="ann",
                                                        position=screen.state.position.fen())))
        over = screen.query_one("#game-over")
        await until(pilot, lambda: over.display)
        await pilot.pause()
        assert panel_lines(screen) == ["nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn (North) wins (resignation)",
                                       "v: replay · Esc: lobby · q: quit"]
        assert all(shown_whole(screen, part) for part in ("#board", "#bottom-player", "#notice", "#game-over"))
        await pilot.resize_terminal(68, 18)
        await until(pilot, lambda: over.region.height == 6)
        assert panel_lines(screen)[0] == "GAME OVER" and shown_whole(screen, "#game-over")
        await pilot.resize_terminal(68, 17)
        await until(pilot, lambda: over.region.height == 2)
        assert shown_whole(screen, "#game-over")


@pytest.mark.parametrize(("variant", "record", "wide"), [("kalah(6,4)", "3", False), ("kalah(6,4)", "3", True),
                                                         ("kalah(3,3)", "1", False)])
async def test_a_hint_or_an_error_takes_the_prompts_line_at_the_least_size(variant: str, record: str,
                                                                         wide: bool) -> None:
    """At exactly the least size (68 by 14 for Kalah(6,4)), in play and once the game is over, a hint or an error
    shows whole in the notice in place of the prompt (the newer of them), and the board, the bars and the game-over
    panel stay whole above the footer; so on a narrow board, where the notice's lines wrap."""
    width, height = needed_size(Variant.parse(variant), wide=wide)
    assert variant != "kalah(6,4)" or (width, height) == ((70, 16) if wide else (68, 14))
    app = host(record, variant=variant)  # South moves again
    async with app.run_test(size=(100 if wide else width, height)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        notice = screen.query_one("#notice")
        parts = ("#title", "#top-player", "#board", "#bottom-player", "#notice")
        await pilot.press("8")
        assert "Key 8 is not one of your houses" in str(notice.render()) and "Your move" not in str(notice.render())
        assert all(shown_whole(screen, part) for part in parts)
        refused = ErrorMessage(code="out_of_turn", message="not your turn [ply 1]", request="move", match_id="m1")
        screen.post_message(ErrorReceived(refused))
        await until(pilot, lambda: screen.error is not None)
        await pilot.pause()
        assert str(notice.render()).endswith("⚠ not your turn [ply 1]") and "Key 8" not in str(notice.render())
        assert all(shown_whole(screen, part) for part in parts)
        await pilot.press("x")
        assert str(notice.render()).endswith("Key x does nothing here: the keys are in the footer.")
        screen.post_message(EventReceived(GameOverEvent(match_id="m1", seq=screen.state.seq + 1, result=None,
                                                        reason=EndReason.TIME, winner="north", player="bob",
                                                        position=screen.state.position.fen())))
        await until(pilot, lambda: screen.query_one("#game-over").display)
        for key in ("1", "x"):
            await pilot.press(key)
            await pilot.pause()
            assert screen.hint is not None and str(notice.render()).endswith(screen.hint)
            assert all(shown_whole(screen, part) for part in (*parts, "#game-over"))
        assert panel_lines(screen)[0] == "bob (North) wins (time ran out)"


async def test_a_hint_from_play_goes_when_the_game_ends() -> None:
    """At 68 by 14 a two-line hint shown in play is cleared by the end of the game (a resignation: no move), so the
    compact panel stays whole above the footer."""
    app = host("3")
    async with app.run_test(size=(68, 14)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await pilot.press("8")
        assert screen.hint is not None and screen.query_one("#notice").region.height == 3  # the hint wraps
        screen.post_message(EventReceived(GameOverEvent(match_id="m1", seq=screen.state.seq + 1, result=None,
                                                        reason=EndReason.RESIGN, winner="north", player="ann",
                                                        position=screen.state.position.fen())))
        await until(pilot, lambda: screen.query_one("#game-over").display)
        await pilot.pause()
        assert screen.hint is None and str(screen.query_one("#notice").render()) == "South sowed bin 3."
        assert panel_lines(screen) == ["bob (North) wins (resignation)", "v: replay · Esc: lobby · q: quit"]
        assert all(shown_whole(screen, part) for part in ("#board", "#notice", "#game-over"))


@pytest.mark.parametrize("record", ["3 6", "3"])
async def test_an_absent_opponent_is_said_in_the_prompts_line_at_the_least_size(record: str) -> None:
    """At 68 by 14, with the opponent disconnected, the notice is whole above the footer: the prompt's line says the
    win may be claimed, in place of waiting for them (`3 6`) or of asking for a move (`3`: the keys are shown)."""
    app = host(record)
    async with app.run_test(size=(68, 14)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        screen.state.apply_presence(0, True, False)
        screen.refresh_view()
        await pilot.pause()
        notice = str(screen.query_one("#notice").render())
        assert notice.splitlines()[-1] == ("Your opponent is disconnected: press w to claim the win once the grace "
                                           "period is over.") and len(notice.splitlines()) == 2
        assert all(shown_whole(screen, part) for part in ("#board", "#bottom-player", "#notice"))
        assert "(disconnected)" in str(screen.query_one("#top-player").render())
        assert "claim" in {b.binding.action for b in screen.active_bindings.values()}


@pytest.mark.parametrize(("variant", "wide"), [("kalah(6,4)", False), ("kalah(6,4)", True), ("kalah(3,3)", False)])
async def test_the_replays_solver_line_takes_the_keys_line_at_the_least_size(variant: str, wide: bool) -> None:
    """At exactly the least size the replay's solver line shows whole in the notice in place of its keys line, mid
    game and at the end of the record, with the compact panel under it; so on a narrow board, where the lines
    wrap."""
    record = ("3", "1") if variant == "kalah(6,4)" else ("1", "2")  # South sows twice: an extra turn
    stored = StoredGame("m9", Variant.parse(variant), record, "a" * 32, "bob", result=-4, winner="bob", reason="time")
    app = ScreenHost(ReplayScreen(stored, animate=False))
    width, height = needed_size(stored.variant, wide=wide)
    async with app.run_test(size=(100 if wide else width, height)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        notice = screen.query_one("#notice")
        parts = ("#title", "#top-player", "#board", "#bottom-player", "#notice")
        await pilot.press("right", "a")
        assert str(notice.render()).startswith(f"Ply 1: South sowed bin {record[0]}.")
        assert str(notice.render()).endswith("\nSolver: thinking…")
        screen.post_message(AnalysisReceived(Analysis(position=screen.current_fen(), value=8, best=[1], exact=True,
                                                      depth=-1)))
        await until(pilot, lambda: "Solver: South wins by 8" in str(notice.render()))
        assert all(shown_whole(screen, part) for part in parts)
        await pilot.press("end")
        await until(pilot, lambda: screen.query_one("#game-over").display)
        await pilot.pause()
        assert str(notice.render()).endswith("Solver: thinking…")
        assert panel_lines(screen)[0] == "bob wins by 4 (time ran out)"
        assert panel_lines(screen)[1].startswith("Stores: South ")
        assert all(shown_whole(screen, part) for part in (*parts, "#game-over"))
        await pilot.press("a")
        assert str(notice.render()).endswith("←/→ step · Home/End jump · a solver value · Esc back")


@pytest.mark.parametrize("wide", [False, True])
async def test_a_long_variant_name_is_cut_in_the_title(wide: bool) -> None:
    """A Kalah(6,4) with many options keeps the title to one line at the least size: the name cut with `…`, what
    follows it kept, the board right under it."""
    width, height = needed_size(Variant.parse(LONG_VARIANT), wide=wide)
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


@pytest.mark.parametrize("variant", ["kalah(3,3)", "kalah(2,4)", "kalah(3,3,capture=empty,clock=5+3)"])
async def test_a_narrow_title_keeps_the_role_and_the_ply(variant: str) -> None:
    """On the narrowest terminal a small board allows, the title gives up the match, then the lead, before the
    variant's name, and keeps the role and the ply (it kept only "Kalah Arena · match m1 · kalah(…")."""
    size = needed_size(Variant.parse(variant), wide=False)
    app = host(north_to_move(variant), variant=variant, you="north")
    async with app.run_test(size=size) as pilot:
        title = app.screen.query_one("#title")
        await until(pilot, lambda: title.display)
        await pilot.pause()
        text = str(title.render())
        assert title.region.height == 1 and len(text) <= size[0]
        assert text.endswith(" · Playing North · ply 1")
        name = text.removesuffix(" · Playing North · ply 1").split(" · ")[-1]
        assert name == variant or (name.endswith("…") and variant.startswith(name[:-1]))


async def test_the_end_of_a_replay_is_whole_at_the_least_size() -> None:
    """At the end of a record, at exactly the size the replay asks for, its panel is whole under the notice."""
    stored = StoredGame("m9", Variant.parse(LONG_VARIANT), ("1",), "ann", "bob")
    app = ScreenHost(ReplayScreen(stored, animate=False))
    size = needed_size(stored.variant, wide=False)
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
                                             "by 16.")
        await pilot.resize_terminal(*needed_size(stored.variant, wide=False))
        await until(pilot, lambda: not line.display and app.screen.query_one(Board).display)


async def test_a_small_board_plays_in_a_terminal_narrower_than_the_bars() -> None:
    """Kalah(3,3) plays in 50 columns and in the fewer it needs: the bars and the notice narrow to the terminal (a
    long name is cut, the clock and `(you)` stay), every part stays on screen and a house key sows; one column less
    brings the line back, and Kalah(6,4) still shows it one column below its 68."""
    long_name = "n" * 32
    clocks = Clocks(south_ms=300_000, north_ms=295_500)
    app = host("", variant="kalah(3,3)", north=long_name, clocks=clocks)
    async with app.run_test(size=(50, 16)) as pilot:
        screen = app.screen
        assert isinstance(screen, GameScreen)
        line, body = screen.query_one("#too-small"), screen.query_one("#game-body")
        width, height = needed_size(screen.state.variant, wide=False)
        assert width < 66
        for size in ((50, 16), (width, height)):
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
        assert "kalah(6,4) needs at least 68 by 14." in str(line.render())

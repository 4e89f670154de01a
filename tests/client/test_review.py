"""The terminal replay's review: marks beside the moves, each player's summary, what the move played at the position
shown cost, and `n` to the next marked move; from a server, and offline from this process."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from client.app import KalahApp, Launch
from client.screens.replay import ReplayScreen
from client.stored_game import StoredGame
from client.widgets.panels import MoveList
from protocol import Variant
from server.assembly import start_server
from tests.client.test_e2e import SIZE, launch
from tests.helpers.client_hosts import shown, until
from tests.helpers.stored_games import store_finished
from tests.helpers.wire import OPERATOR

SMALL = Variant.parse("kalah(2,3)")
RECORD = "1 5 1 4 2 4 5"
"""Its losses: 0, 10 (North's 5, a blunder: 4 was best), 2, 0, 4, 2, 0."""


async def check_review(app: KalahApp) -> None:
    """The replay on screen shows the review of RECORD: marks, summaries, and `n` to the blunder with its best move."""
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: shown(app, ReplayScreen) is not None)
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await until(pilot, lambda: screen.review is not None, timeout=30)
        moves = str(screen.query_one(MoveList).render())
        assert "  2. N 5 ??" in moves and "  3. S 1 ?" in moves and "  5. S 2 ??" in moves
        assert "  1. S 1\n" in moves  # a perfect move carries no mark
        summary = str(screen.query_one("#review-summary", Static).render())
        assert "alice: 1/3 perfect, 6 seeds lost, worst move 5 (4)" in summary
        assert "bob: 2/4 perfect, 12 seeds lost, worst move 2 (10)" in summary
        await pilot.press("n")
        assert screen.index == 1
        summary = str(screen.query_one("#review-summary", Static).render())
        assert "Review: bob played 5 here, blunder, 10 seeds lost · best 4" in summary
        await pilot.press("n")
        assert screen.index == 2


async def test_the_replay_shows_the_servers_review(tmp_path: Path) -> None:
    """From a server: the review it makes and stores marks the moves of the replay."""
    await store_finished(tmp_path / "x.sqlite3", {"g1": (SMALL, RECORD)})
    server = await start_server(tmp_path / "x.sqlite3", operator_token=OPERATOR)
    try:
        await check_review(launch(server.url, "ann", start="replay", match_id="g1"))
        assert server.reviews.made == 1
    finally:
        await server.close()


async def test_an_offline_replay_makes_its_review_here(tmp_path: Path) -> None:
    """Offline (a database file with no review stored), the review is made in this process, the same one."""
    await store_finished(tmp_path / "x.sqlite3", {"g1": (SMALL, RECORD)})
    stored = StoredGame("g1", SMALL, tuple(RECORD.split()), "alice", "bob")
    await check_review(KalahApp(Launch(offline=True, stored=stored, library=(stored,), animate=False,
                                       db_path=tmp_path / "x.sqlite3")))

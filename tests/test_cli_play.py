"""`kalah play` starts what its flags say (`--resume` reopens), and `kalah watch` is always spectating."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli.main import main
from client.app import KalahApp
from client.screens.game import GameScreen
from client.screens.lobby import LobbyScreen
from protocol import Side


@dataclass
class Seen:
    """What a headless session showed when it stopped: the screen's kind and, in a game, the match."""

    screen: str
    match_id: str | None = None
    variant: str | None = None
    you: Side | None = None
    moved: bool = False
    """Whether pressing house key 1 made a move."""


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Seen]:
    """Run every `KalahApp` headless until a game screen shows (or a while passes); record what it showed."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # identities.json of these tests only
    seen: list[Seen] = []

    def headless(app: KalahApp) -> None:
        async def session() -> None:
            async with app.run_test(size=(100, 32)) as pilot:
                for _ in range(60):  # a game screen comes within 3 s, or none is coming
                    await pilot.pause(0.05)
                    if isinstance(app.screen, GameScreen) and app.screen.state.variant is not None:
                        break
                await pilot.pause(0.3)  # anything that would follow the first screen has come
                screen = app.screen
                if isinstance(screen, GameScreen):
                    before = screen.state.ply
                    await pilot.press("1")  # a house key: a move if (and only if) the viewer is seated
                    await pilot.pause(0.5)
                    st = screen.state
                    seen.append(Seen("game", st.match_id, st.variant.text(), st.you, st.ply > before))
                else:
                    seen.append(Seen("lobby" if isinstance(screen, LobbyScreen) else type(screen).__name__))
                app.exit()

        asyncio.run(session())

    monkeypatch.setattr(KalahApp, "run", headless)
    return seen


def test_flags_start_a_new_game_and_resume_is_explicit(sessions: list[Seen], tmp_path: Path) -> None:
    """An unfinished game is not reopened by a command with flags; `--resume` reopens the newest one."""
    db = ["--db", str(tmp_path / "arena.sqlite3"), "--name", "ann"]
    assert main(["play", *db, "--bot", "1", "-H", "4", "-s", "3"]) == 0
    first = sessions[-1]
    assert (first.screen, first.variant, first.you) == ("game", "kalah(4,3)", Side.SOUTH)
    assert main(["play", *db, "--bot", "1", "--seat", "north", "-H", "4", "-s", "5"]) == 0
    second = sessions[-1]
    assert second.screen == "game" and second.match_id != first.match_id
    assert (second.variant, second.you) == ("kalah(4,5)", Side.NORTH)
    assert main(["play", *db, "--resume"]) == 0
    assert (sessions[-1].screen, sessions[-1].match_id) == ("game", second.match_id)
    assert main(["play", *db, "--lobby"]) == 0
    assert sessions[-1].screen == "lobby"


def test_resume_takes_no_game_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """`--resume` with a flag that chooses a game is refused in one line before any screen opens."""
    assert main(["play", "--resume", "--bot", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalah play: --resume") and err.count("\n") == 1


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A `kalah serve` process on a free port; its URL."""
    with subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", "0", "--db",
                           str(tmp_path / "served.sqlite3"), "--log-level", "error"],
                          stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            yield proc.stdout.readline().split(" on ")[1].split()[0]
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_watch_under_a_players_identity_is_spectating(sessions: list[Seen], server: str) -> None:
    """`kalah watch` by the seated player shows the match as a spectator: keys make no move, nothing is reopened."""
    assert main(["play", "--server", server, "--name", "ann", "--bot", "1"]) == 0
    played = sessions[-1]
    assert played.you == Side.SOUTH and played.moved  # ann is seated: her key sows
    assert main(["watch", played.match_id or "", "--server", server, "--name", "ann"]) == 0
    watched = sessions[-1]
    assert (watched.screen, watched.match_id, watched.you) == ("game", played.match_id, None)
    assert not watched.moved  # watching: the same key makes no move
    assert main(["watch", "--server", server, "--name", "ann"]) == 0
    assert sessions[-1].screen == "lobby"

"""`kalah play` starts what its flags say (`--resume` reopens), and `kalah watch` is always spectating."""

from __future__ import annotations

import asyncio
import io
import os
import shlex
import signal
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static
from websockets.sync.client import connect

from cli.main import main
from client.app import KalahApp
from client.screens.dialogs import HelpScreen
from client.screens.game import GameScreen
from client.screens.lobby import LobbyScreen
from client.screens.replay import ReplayScreen
from protocol import Side
from protocol.messages import Hello, decode_server, encode
from tests.helpers.client_hosts import until
from tests.helpers.processes import kalah_serve


@dataclass
class Seen:
    """What a headless session showed when it stopped: the screen's kind and, in a game, the match."""

    screen: str
    match_id: str | None = None
    variant: str | None = None
    you: Side | None = None
    moved: bool = False
    """Whether pressing house key 1 made a move."""
    player: str | None = None
    """The identity the server welcomed: `name player_id`."""
    port: int | None = None
    """The port of the embedded server (None: a server was named)."""
    notes: tuple[str, ...] = ()
    """The notifications the session showed."""


def first_screen_shown(app: KalahApp) -> bool:
    """Whether the session shows the screen it opens with: the game (or replay) screen its launch asks for (a bot
    game, a watch, a replay, `--resume` with a seat to reopen), or else the lobby, once the server's welcome came."""
    if isinstance(app.screen, ReplayScreen):
        return True
    if isinstance(app.screen, GameScreen):
        return app.screen.state.variant is not None
    welcome = app.connection.welcome if app.connection is not None else None
    if welcome is None:
        return False
    launch = app.launch
    return launch.start == "lobby" and not (launch.resume and welcome.seats and not launch.spectate)


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Seen]:
    """Run every `KalahApp` headless until the screen it opens with shows; record what it showed."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # identities.json of these tests only
    seen: list[Seen] = []

    def headless(app: KalahApp) -> None:
        notes: list[str] = []
        notify = app.notify

        def noted(message: str, **kwargs: Any) -> None:
            notes.append(message)
            notify(message, **kwargs)

        monkeypatch.setattr(app, "notify", noted)

        async def session() -> None:
            async with app.run_test(size=(100, 32)) as pilot:
                # a game (or replay) screen comes if the launch asks for one; else the welcome ends the wait
                await until(pilot, lambda: first_screen_shown(app), timeout=60)
                await pilot.pause(0.3)  # anything that would follow the first screen has come
                screen = app.screen
                welcome = app.connection.welcome if app.connection is not None else None
                player = None if welcome is None else f"{welcome.name} {welcome.player_id}"
                port = None if app.embedded is None else app.embedded.port
                if isinstance(screen, GameScreen):
                    before, hint = screen.state.ply, screen.hint
                    await pilot.press("1")  # a house key: a move if (and only if) the viewer is seated
                    # the move shows, or the server refuses it, or the screen says why the key made none
                    await until(pilot, lambda: screen.state.ply > before or screen.error is not None
                                or (not screen.pending and screen.hint not in (None, hint)), timeout=30)
                    st = screen.state
                    seen.append(Seen("game", st.match_id, st.variant.text(), st.you, st.ply > before, player,
                                     port, tuple(notes)))
                else:
                    seen.append(Seen("lobby" if isinstance(screen, LobbyScreen) else type(screen).__name__,
                                     player=player, port=port, notes=tuple(notes)))
                app.exit()

        asyncio.run(session())

    monkeypatch.setattr(KalahApp, "run", headless)
    return seen


def test_flags_start_a_new_game_and_resume_is_explicit(sessions: list[Seen], tmp_path: Path) -> None:
    """An unfinished game is not reopened by a command with flags; `--resume` reopens the newest one."""
    db = ["--db", str(tmp_path / "arena.sqlite3"), "--name", "ann"]
    assert main(["play", *db, "--resume"]) == 0  # nothing to resume yet: the lobby, and a note naming what to do
    assert sessions[-1].screen == "lobby" and [n for n in sessions[-1].notes if "nothing to resume" in n] == [
        "ann holds no seat in an unfinished match on this server: nothing to resume. c creates a game here (`kalah "
        "play` starts one against a bot); is yours under another --name or --db?"]
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


def test_play_listens_where_the_last_one_on_its_database_did(sessions: list[Seen], tmp_path: Path) -> None:
    """`kalah play` takes the port the last local server on the same database had, so a `kalah watch` of it finds the
    resumed game; while that port is busy it takes a fresh one and says so in one line."""
    db = ["--db", str(tmp_path / "arena.sqlite3"), "--name", "ann"]
    assert main(["play", *db, "--bot", "1", "-H", "3", "-s", "2"]) == 0
    first = sessions[-1]
    assert first.port is not None and not [n for n in first.notes if "Port" in n]
    assert main(["play", *db, "--resume"]) == 0
    assert (sessions[-1].match_id, sessions[-1].port) == (first.match_id, first.port)
    with socket.socket() as holder:  # someone else listens there now
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the last one's connections may linger
        holder.bind(("127.0.0.1", first.port))
        holder.listen()
        assert main(["play", *db, "--resume"]) == 0
    moved = sessions[-1]
    assert moved.match_id == first.match_id and moved.port not in (None, first.port)
    said = [n for n in moved.notes if "Port" in n]
    assert said == [f"Port {first.port} of the last local server on this database is busy: this one is at "
                    f"ws://127.0.0.1:{moved.port}, so a `kalah watch` of the last one needs the new address."]
    assert main(["play", *db, "--resume"]) == 0  # the new port is the one kept now
    assert sessions[-1].port == moved.port


def test_the_lobby_names_the_server_to_resume_on_and_quitting_it_says_the_game_is_kept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], server: str) -> None:
    """`kalah play --server http://…` (the web page's address) plays on the server's ws address; back in the lobby with
    the game unfinished, the hint names the command with the server, and `q` in the lobby says the game is kept and
    how to take it up, which does (before: http was refused, the hint was `kalah play --resume`, which takes up
    nothing on a named server, and quitting the lobby said nothing)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    notes: list[str] = []
    opened: list[str | None] = []

    def headless(app: KalahApp) -> None:
        notify = app.notify

        def noted(message: str, **kwargs: Any) -> None:
            notes.append(message)
            notify(message, **kwargs)

        monkeypatch.setattr(app, "notify", noted)

        async def session() -> None:
            async with app.run_test(size=(100, 32)) as pilot:
                await until(pilot, lambda: first_screen_shown(app), timeout=60)
                await pilot.pause(0.3)
                screen = app.screen
                opened.append(screen.match_id if isinstance(screen, GameScreen) else None)
                if isinstance(screen, GameScreen):
                    app.exit()
                else:
                    await pilot.press("q")

        asyncio.run(session())

    monkeypatch.setattr(KalahApp, "run", headless)
    web = server.replace("ws://", "http://")
    assert main(["play", "--server", web, "--name", "ann", "--bot", "1", "-H", "3", "-s", "2"]) == 0
    match_id = opened[-1]
    assert match_id is not None and capsys.readouterr().out == ""
    assert main(["play", "--server", web, "--name", "ann", "--lobby"]) == 0
    assert opened[-1] is None
    resume = f"kalah play --server {server} --name ann --resume"
    assert f"You hold a seat in 1 unfinished match: `{resume}` reopens the newest, or find it in the lobby." in notes
    assert capsys.readouterr().out == (f"kalah play: you hold a seat in an unfinished game {match_id}, kept on the "
                                       f"server: `{resume}` takes it up again.\n")
    assert main(shlex.split(resume)[1:]) == 0
    assert opened[-1] == match_id


def test_resume_takes_no_game_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """`--resume` with a flag that chooses a game is refused in one line before any screen opens."""
    assert main(["play", "--resume", "--bot", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalah play: --resume") and err.count("\n") == 1


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A `kalah serve` process on a free port; its URL."""
    with kalah_serve(tmp_path / "served.sqlite3") as url:
        yield url


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


def test_my_name_works_on_a_server_over_my_own_database(sessions: list[Seen], tmp_path: Path) -> None:
    """`kalah play` (embedded), then `kalah serve` on the same file and `kalah play --server`: the same identity, not
    "name taken"; `kalah watch` (and `kalah replay`) under a name another identity holds (or a bot's) come in as a
    guest."""
    db = tmp_path / "mine.sqlite3"
    assert main(["play", "--db", str(db), "--name", "root", "--bot", "1", "-H", "3", "-s", "2"]) == 0
    embedded = sessions[-1]
    assert embedded.screen == "game" and embedded.player is not None and embedded.player.startswith("root ")
    with kalah_serve(db) as url:
        assert main(["play", "--server", url, "--name", "root", "--lobby"]) == 0
        assert (sessions[-1].screen, sessions[-1].player) == ("lobby", embedded.player)
        with connect(url) as ws:  # another person takes the name bob
            ws.send(encode(Hello(name="bob")))
            assert decode_server(ws.recv(timeout=10)).type == "welcome"
        for name in ("bob", "bot:greedy"):
            assert main(["watch", embedded.match_id or "", "--server", url, "--name", name]) == 0
            watched = sessions[-1]
            assert (watched.screen, watched.match_id, watched.you) == ("game", embedded.match_id, None)
            assert watched.player is not None and watched.player.startswith("guest-")
        assert main(["replay", embedded.match_id or "", "--server", url, "--name", "bob"]) == 0
        assert sessions[-1].screen == "ReplayScreen" and (sessions[-1].player or "").startswith("guest-")
        assert main(["play", "--server", url, "--name", "root", "--resume"]) == 0  # the guest took nothing of root's
        assert (sessions[-1].match_id, sessions[-1].you, sessions[-1].player) == (
            embedded.match_id, Side.SOUTH, embedded.player)


def test_a_key_from_the_web_page_plays_in_the_terminal(sessions: list[Seen], server: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The key a browser shows (the token of its hello) given to `kalah play --token`, or in $KALAH_TOKEN, plays
    as that identity, whatever --name says."""
    with connect(server) as ws:  # the web page's guest
        ws.send(encode(Hello(name="webby")))
        welcome = decode_server(ws.recv(timeout=10))
    assert welcome.type == "welcome" and welcome.token is not None
    assert main(["play", "--server", server, "--name", "ann", "--token", welcome.token, "--lobby"]) == 0
    assert (sessions[-1].screen, sessions[-1].player) == ("lobby", f"webby {welcome.player_id}")
    monkeypatch.setenv("KALAH_TOKEN", welcome.token)
    assert main(["play", "--server", server, "--lobby"]) == 0
    assert sessions[-1].player == f"webby {welcome.player_id}"


def test_a_guest_registered_in_the_terminal_plays_signed_in_as_itself(sessions: list[Seen], server: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`kalah register` makes the guest identity remembered for the name an account, and `kalah play --server`
    then says hello with the stored session: the same player, whatever --name says."""
    assert main(["play", "--server", server, "--name", "gil", "--lobby"]) == 0
    guest = sessions[-1].player
    monkeypatch.setattr("sys.stdin", io.StringIO("a long password\n"))
    assert main(["register", "gil", "--server", server, "--password-stdin"]) == 0
    assert main(["play", "--server", server, "--name", "someone", "--lobby"]) == 0
    assert sessions[-1].player == guest

def test_q_mid_game_says_the_game_is_kept_and_how_to_resume(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`q` in an unfinished game quits with a line naming `kalah play`, saying the game is kept and the command that
    takes it up again, which does; Ctrl-C does the same; a SIGINT ends with status 130 and `kalah play: interrupted`
    and the same note; `?` lists the swap key only in a variant with the pie rule."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    seen: list[tuple[str | None, str]] = []
    leave = ["q", "ctrl+c", "SIGINT", "q"]

    def headless(app: KalahApp) -> None:
        async def session() -> None:
            async with app.run_test(size=(100, 32)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, GameScreen) and app.screen.state.variant is not None)
                screen = app.screen
                assert isinstance(screen, GameScreen)
                await pilot.press("question_mark")
                await until(pilot, lambda: isinstance(app.screen, HelpScreen))
                seen.append((screen.match_id, str(app.screen.query_one("#rules", Static).render())))
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is screen)
                key = leave.pop(0)
                if key == "SIGINT":
                    os.kill(os.getpid(), signal.SIGINT)
                    await until(pilot, lambda: app.return_code is not None)
                else:
                    await pilot.press(key)

        asyncio.run(session())

    monkeypatch.setattr(KalahApp, "run", headless)
    caught: list[int] = []  # a SIGINT the app did not take would end up here, not end the test run
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        db = tmp_path / "arena.sqlite3"
        assert main(["play", "--db", str(db), "--name", "ann", "--bot", "1", "-H", "3", "-s", "2"]) == 0
        match_id, rules = seen[-1]
        out = capsys.readouterr().out
        assert out.startswith(f"kalah play: your game {match_id} is kept on the server (bot:") and out.count("\n") == 1
        assert "waits for you" in out and "person" not in out
        assert out.endswith(" takes it up again.\n")
        assert "s: swap" not in rules and "q: quit (an unfinished game is kept" in rules
        resume = shlex.split(out.split("`")[1])
        assert resume == ["kalah", "play", "--db", str(db), "--name", "ann", "--resume"]
        assert main(resume[1:]) == 0  # left with Ctrl-C
        assert seen[-1][0] == match_id  # taken up again, and quit again with the same note
        assert capsys.readouterr().out == out
        assert main(resume[1:]) == 130  # left by SIGINT
        said = capsys.readouterr()
        assert said.out == "" and said.err == out.replace("kalah play: ", "kalah play: interrupted; ")
        assert caught == []
    finally:
        signal.signal(signal.SIGINT, previous)
    assert main(["play", "--db", str(db), "--name", "ann", "--bot", "1", "-H", "3", "-s", "2", "--pie"]) == 0
    assert "s: swap" in seen[-1][1]

"""`kalah play`, `kalah watch` and `kalah replay`: flags and the refusals that happen before any screen."""

from __future__ import annotations

import asyncio
import errno
import socket
import sys
from pathlib import Path

import pytest

from cli.client_args import default_name
from cli.main import build_parser, main
from tests.helpers.processes import kalah_serve, run


def test_client_subcommands_are_registered() -> None:
    """play, watch and replay parse their documented arguments."""
    parser, _ = build_parser()
    args = parser.parse_args(["play", "--bot", "3", "--seat", "north", "--pie", "-H", "4"])
    assert (args.bot, args.seat, args.pie, args.houses, args.server) == (3, "north", True, 4, None)
    args = parser.parse_args(["watch", "m1", "--server", "ws://h:1"])
    assert (args.server, args.match) == ("ws://h:1", "m1")
    args = parser.parse_args(["replay", "m1", "--server", "ws://h:1"])
    assert (args.server, args.match) == ("ws://h:1", "m1")


def test_replay_refuses_ambiguous_targets_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two match ids, a server with --db, or a database file that does not exist: exit 2 with a reason."""
    assert main(["replay", "m1", "m2"]) == 2
    assert main(["replay", "--server", "ws://h:1", "--db", str(tmp_path / "x.sqlite3")]) == 2
    assert main(["replay", "--db", str(tmp_path / "missing.sqlite3")]) == 2
    assert "no arena database" in capsys.readouterr().err


def test_play_refuses_a_bad_variant(capsys: pytest.CaptureFixture[str]) -> None:
    """An out-of-range board is refused before the client opens."""
    assert main(["play", "-H", "13"]) == 2
    assert "houses" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "said"), [
    (["play", "--token", "garbage", "--server", "ws://127.0.0.1:1"], "--token: that is not a whole key"),
    (["play", "--name", "x" * 100], "is not a player name: 1 to 32"),
    (["watch", "m1", "--name", "bob smith", "--server", "ws://127.0.0.1:1"], "'bob smith' is not a player name"),
    (["replay", "m1", "--name", "é"], "'é' is not a player name"),
    (["bridge", "--server", "ws://127.0.0.1:1", "--engine", "true", "--token", "short"], "not a whole key"),
    (["event", "create", "Cup", "--name", "", "--server", "ws://127.0.0.1:1"], "'' is not a player name"),
])
def test_a_name_or_key_the_server_would_refuse_is_one_line_before_any_screen(
        argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A name or a key the wire's rules refuse is refused by the flag itself (exit 2, one line naming what a name
    or key is), not by the hello's validation inside the opened screen (a traceback of the message model)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert "garbage" not in err and "short" not in err  # a key, even a wrong one, is not echoed


def test_a_key_from_the_environment_is_checked_like_the_flag(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """$KALAH_TOKEN with a cut key is refused in one line naming the variable."""
    monkeypatch.setenv("KALAH_TOKEN", "cut-short")
    assert main(["play", "--lobby", "--server", "ws://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "$KALAH_TOKEN" in err and len(err.strip().splitlines()) == 1, err


def test_default_name() -> None:
    """The default name fits the wire's name rules."""
    name = default_name()
    assert 1 <= len(name) <= 32 and all(c.isalnum() or c in "_.:-" for c in name)


@pytest.mark.parametrize("argv", [["--help"], ["record", "--help"]])
def test_help_loads_no_server_or_network_library(argv: list[str]) -> None:
    """`kalah --help` and `kalah record --help` import neither the server, websockets, aiosqlite nor textual."""
    code = (f"import sys\nfrom cli.main import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "heavy = ('server', 'websockets', 'aiosqlite', 'textual')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    done = run([sys.executable, "-c", code])
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_play_without_a_server_exits_1_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah play --server ws://…` (and `kalah watch`) with nothing listening gives up after its bounded retries:
    status 1, one reason naming the command that was run and ending with the fix."""
    from client.app import KalahApp

    def headless(app: KalahApp) -> None:
        app.launch.retry_delays = (0.01,)
        asyncio.run(app.run_async(headless=True, size=(80, 24)))

    monkeypatch.setattr(KalahApp, "run", headless)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{s.getsockname()[1]}"
    for command in ("play", "watch"):
        assert main([command, "--server", url, "--name", "ann"]) == 1
        err = " ".join(capsys.readouterr().err.split())  # Rich wraps it at the terminal's width
        assert err.startswith(f"kalah {command}: Could not reach a Kalah Arena server at {url} (connection refused")
        assert err.endswith("start one there with `kalah serve`, or name another with --server.")
        assert "validation" not in err and "Traceback" not in err


def test_a_local_server_that_cannot_start_is_one_line_naming_play_and_the_fix(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`kalah play` whose local server cannot start (its database's folder cannot be made, another process serves
    the database) exits 1 with one line starting `kalah play:` and ending with the fix."""
    from client.app import KalahApp

    def headless(app: KalahApp) -> None:
        asyncio.run(app.run_async(headless=True, size=(80, 24)))

    monkeypatch.setattr(KalahApp, "run", headless)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["play", "--db", str(blocker / "arena.sqlite3"), "--name", "ann"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert err == (f"kalah play: could not start the local server: cannot make the folder {blocker} for its database "
                   "(File exists): name another file with --db")
    db = tmp_path / "served.sqlite3"
    with kalah_serve(db):
        assert main(["play", "--db", str(db), "--name", "ann"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("kalah play: could not start the local server: another kalah server (process ")
    assert err.endswith(f"is using {db}: play on that one (--server), stop it, or name another file with --db")


@pytest.mark.parametrize(("failure", "said"), [
    (OSError(errno.EMFILE, "Too many open files"), "(OSError: [Errno 24] Too many open files): close other programs "
     "or raise the limit on open files (ulimit -n), then run it again"),
    (OSError(errno.ENOSPC, "No space left on device"), "(OSError: [Errno 28] No space left on device): free some "
     "disk space, or name a database file on another disk with --db"),
    (RuntimeError(), "(RuntimeError): run it again (KALAH_DEBUG=1 shows where it fails), or play on a running "
     "server with --server"),
], ids=["out-of-file-descriptors", "disk-full", "any-other"])
def test_an_unexpected_failure_of_the_local_server_is_one_line_saying_what_to_do(
        failure: Exception, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    """`kalah play` whose local server fails to start in a way nobody foresaw (out of file descriptors, a full disk,
    any exception) exits 1 with one line naming the command, what failed and what to do, and no traceback."""
    import server.assembly
    from client.app import KalahApp

    async def failing(*args: object, **kwargs: object) -> None:
        raise failure

    def headless(app: KalahApp) -> None:
        asyncio.run(app.run_async(headless=True, size=(80, 24)))

    monkeypatch.delenv("KALAH_DEBUG", raising=False)
    monkeypatch.setattr(server.assembly, "start_server", failing)
    monkeypatch.setattr(KalahApp, "run", headless)
    assert main(["play", "--db", str(tmp_path / "arena.sqlite3"), "--name", "ann"]) == 1
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())  # Rich wraps it at the terminal's width
    assert err == f"kalah play: could not start the local server {said}."
    assert "Traceback" not in captured.out + captured.err


def test_kalah_debug_shows_where_the_local_server_failed(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With KALAH_DEBUG=1, an unexpected failure of the local server ends `kalah play` with status 1 and the
    traceback of where it failed, as it does for any command."""
    import server.assembly
    from client.app import KalahApp

    async def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the cause")

    def headless(app: KalahApp) -> None:
        asyncio.run(app.run_async(headless=True, size=(80, 24)))

    monkeypatch.setenv("KALAH_DEBUG", "1")
    monkeypatch.setattr(server.assembly, "start_server", failing)
    monkeypatch.setattr(KalahApp, "run", headless)
    assert main(["play", "--db", str(tmp_path / "arena.sqlite3"), "--name", "ann"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError" in err and "the cause" in err and "failing" in err

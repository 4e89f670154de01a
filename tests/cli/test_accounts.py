"""`kalah register`, `login`, `logout`, `sessions` and `admin reset` against a `kalah serve` process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.processes import KALAH, kalah_serve
from tests.helpers.wire import OPERATOR

PASSWORD = "a very good password"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A `kalah serve` process on a free port (with the tests' operator token); its URL."""
    with kalah_serve(tmp_path / "served.sqlite3", "--operator-token", OPERATOR) as url:
        yield url


def kalah(tmp_path: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run one `kalah` command with this test's config folder, `stdin` as its standard input."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), KALAH_OPERATOR_TOKEN=OPERATOR)
    return subprocess.run([*KALAH, *argv], input=stdin, capture_output=True, text=True, env=env, timeout=60,
                          check=False)


def session_file(tmp_path: Path) -> Path:
    """Where the commands keep their sessions."""
    return tmp_path / "config" / "kalah-arena" / "sessions.json"


def test_register_keeps_a_session_only_its_owner_reads_and_prints_recovery_codes(server: str, tmp_path: Path) -> None:
    """`kalah register --password-stdin` signs in, prints eight codes once, and keeps the session in a 0600 file
    that holds no password."""
    done = kalah(tmp_path, "register", "ann", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    codes = [line.strip() for line in done.stdout.splitlines() if line.startswith("  ")]
    assert len(codes) == 8
    path = session_file(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert PASSWORD not in path.read_text() and json.loads(path.read_text())["servers"][server]["name"] == "ann"
    listed = kalah(tmp_path, "sessions", "--server", server)
    assert listed.returncode == 0 and "this one" in listed.stdout and "terminal" in listed.stdout


def test_a_wrong_password_is_one_line_and_keeps_no_session(server: str, tmp_path: Path) -> None:
    """A wrong password fails with one line naming the refusal and the way out; nothing is stored."""
    kalah(tmp_path, "register", "bob", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    session_file(tmp_path).unlink()
    done = kalah(tmp_path, "login", "bob", "--server", server, "--password-stdin", stdin="wrong password\n")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "sign_in_failed" in done.stderr and "--recovery-code" in done.stderr
    assert not session_file(tmp_path).exists()


def test_no_terminal_and_no_password_stdin_is_a_clear_error(server: str, tmp_path: Path) -> None:
    """Without a terminal to ask at, `kalah login` says to use --password-stdin; a password is never a flag."""
    done = kalah(tmp_path, "login", "cal", "--server", server)
    assert done.returncode == 2 and "--password-stdin" in done.stderr and "Traceback" not in done.stderr
    flag = kalah(tmp_path, "login", "cal", "--server", server, "--password", "x")
    assert flag.returncode == 2


def test_sessions_revoke_one_then_all_and_logout(server: str, tmp_path: Path) -> None:
    """A second sign-in is listed; `--revoke ID` ends it; `--all` signs out here too; `logout` forgets the file's."""
    kalah(tmp_path, "register", "dee", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    first = json.loads(session_file(tmp_path).read_text())["servers"][server]["session_id"]
    other = tmp_path / "other"
    kalah(other, "login", "dee", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    second = json.loads(session_file(other).read_text())["servers"][server]["session_id"]
    listed = kalah(tmp_path, "sessions", "--server", server).stdout
    assert first in listed and second in listed
    assert kalah(tmp_path, "sessions", "--server", server, "--revoke", second).returncode == 0
    refused = kalah(other, "sessions", "--server", server)
    assert refused.returncode == 1 and "bad_session" in refused.stderr and "kalah login" in refused.stderr
    kalah(other, "login", "dee", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    ended = kalah(tmp_path, "sessions", "--server", server, "--all")
    assert ended.returncode == 0 and "ended 2 sessions" in ended.stdout
    assert server not in json.loads(session_file(tmp_path).read_text())["servers"]
    out = kalah(other, "logout", "--server", server)
    assert out.returncode == 0 and server not in json.loads(session_file(other).read_text())["servers"]


def test_the_operators_reset_code_signs_in_once(server: str, tmp_path: Path) -> None:
    """`kalah admin reset` gives a code; `kalah login --recovery-code` signs in with it and a new password; the
    code does not work twice."""
    kalah(tmp_path, "register", "eli", "--server", server, "--password-stdin", stdin=PASSWORD + "\n")
    reset = kalah(tmp_path, "admin", "reset", "eli", "--server", server, "--reason", "lost the password")
    assert reset.returncode == 0, reset.stderr
    code = reset.stdout.split(": ", 1)[1].split()[0]
    first = kalah(tmp_path, "login", "eli", "--server", server, "--recovery-code", "--password-stdin",
                  stdin=f"{code}\nthe new password\n")
    assert first.returncode == 0, first.stderr
    again = kalah(tmp_path, "login", "eli", "--server", server, "--recovery-code", "--password-stdin",
                  stdin=f"{code}\nanother password\n")
    assert again.returncode == 1 and "sign_in_failed" in again.stderr
    assert kalah(tmp_path, "login", "eli", "--server", server, "--password-stdin",
                 stdin="the new password\n").returncode == 0

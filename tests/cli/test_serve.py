"""`kalah serve` as a process: a busy port or a bad one (or a limit out of range), a database it cannot write or one
that fails SQLite's integrity check, fails at once in one line; Ctrl-C stops it cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bots import book as book_mod
from bots import egdb
from bots.book import Book, Completion
from bots.core import implementation
from cli import serve as serve_cli
from cli.main import main
from protocol import Capture, Variant
from tests.helpers.certs import make_certificate
from tests.helpers.kalah_process import kalah
from tests.helpers.processes import KALAH, first_line, run, started
from tests.helpers.wire import Client

SERVE = [*KALAH, "serve", "--log-level", "error"]


def test_busy_port_exits_1_at_once_with_one_line(tmp_path: Path) -> None:
    """A port another process listens on: status 1 and one line naming the address, without hanging."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run([*SERVE, "--port", str(port), "--db", str(tmp_path / "a.sqlite3")], timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"kalah serve: cannot listen on 127.0.0.1:{port}: address already in use "
                           "(another server there? --port 0 takes any free port)\n")


def test_ports_are_validated(tmp_path: Path) -> None:
    """--port 99999 (or -1, or a word) is refused with status 2 in one line, before anything is bound."""
    bad_ports = ("99999", "-1", "http")
    with ThreadPoolExecutor(len(bad_ports)) as pool:  # three processes at once
        runs = pool.map(lambda bad: run([*SERVE, "--port", bad, "--db", str(tmp_path / "a.sqlite3")], timeout=30),
                        bad_ports)
        for bad, done in zip(bad_ports, runs, strict=True):
            assert done.returncode == 2 and done.stderr.count("\n") == 1
            assert f"argument --port: {bad!r} is not a port number 0..65535" in done.stderr
    assert not (tmp_path / "a.sqlite3").exists()


@pytest.mark.parametrize(("flag", "bad", "said"), [
    ("--max-connections", "0", "a whole number of at least 1"),
    ("--max-per-address", "-3", "a whole number of at least 1"),
    ("--burst", "-5", "a whole number of at least 1"),
    ("--burst", "\N{FULLWIDTH DIGIT SIX}0", "a whole number of at least 1"),
    ("--rate", "0", "a number of more than 0"),
    ("--rate", "nan", "a number of more than 0"),
    ("--hello-timeout", "inf", "a number of more than 0"),
    ("--grace", "-1", "a number of at least 0"),
    ("--idle-limit", "-60", "a number of at least 0"),
    ("--gc-freeze", "-1", "a number of at least 0"),
    ("--stall-trace", "-1", "a number of at least 0"),
    ("--trusted-proxy", "10.0.0.0/33", "a network address/prefix (e.g. 127.0.0.1/32 or 10.0.0.0/8)"),
    ("--trusted-proxy", "proxy.local", "a network address/prefix (e.g. 127.0.0.1/32 or 10.0.0.0/8)"),
])
def test_limits_out_of_range_are_refused_before_anything_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 flag: str, bad: str, said: str) -> None:
    """A limit that would make a server refuse every connection or message (or never close a silent one) is
    refused in one line naming its range, status 2, before any database is made (it started and served before)."""
    db = tmp_path / "a.sqlite3"
    assert main(["serve", flag, bad, "--port", "0", "--db", str(db)]) == 2
    assert capsys.readouterr().err == f"kalah serve: argument {flag}: {bad!r} is not {said} (see kalah serve --help)\n"
    assert not db.exists()


def test_a_database_path_that_cannot_be_one_fails_in_one_line(tmp_path: Path) -> None:
    """--db naming a folder, a file of something else, or a path under a file: status 1 and one line naming the path
    and the fix (before: a folder gave a traceback of aiosqlite's thread and 'failed: OperationalError', the others
    'failed: DatabaseError' or a bare 'File exists')."""
    (tmp_path / "notes.txt").write_text("not a database\n" * 100)
    bad = {tmp_path: "unable to open database file", tmp_path / "notes.txt": "file is not a database",
           tmp_path / "notes.txt" / "a.sqlite3": "File exists"}
    with ThreadPoolExecutor(len(bad)) as pool:  # three processes at once
        runs = pool.map(lambda db: run([*SERVE, "--port", "0", "--db", str(db)], timeout=30), bad)
        for (db, reason), done in zip(bad.items(), runs, strict=True):
            assert done.returncode == 1
            assert done.stderr == (f"kalah serve: cannot use {db} as the arena database ({reason}): name another "
                                   "file with --db\n")


def test_a_second_server_on_one_sqlite_file_is_refused_until_the_first_is_gone(tmp_path: Path) -> None:
    """While one `kalah serve` runs on a file, a second one on it is refused in one line naming the first's process
    (two would both run the same live matches' clocks and bots, each unaware of the other's moves), the offline
    tools still read it, and once the first is killed with SIGKILL a new server starts on it (it started beside the
    first before)."""
    db = tmp_path / "a.sqlite3"
    with started([*SERVE, "--port", "0", "--db", str(db)], stdout=subprocess.PIPE, text=True) as first:
        assert "listening on ws://127.0.0.1:" in first_line(first)
        second = run([*SERVE, "--port", "0", "--db", str(db)], timeout=30)
        assert second.returncode == 1
        assert second.stderr == (f"kalah serve: another kalah server (process {first.pid}) is using {db}: play on "
                                 "that one (--server), stop it, or name another file with --db\n")
        assert main(["games", "--db", str(db)]) == 0
        first.send_signal(signal.SIGKILL)
        first.wait()
    with started([*SERVE, "--port", "0", "--db", str(db)], stdout=subprocess.PIPE, text=True) as again:
        assert "listening on ws://127.0.0.1:" in first_line(again)


def _served_once(db: Path) -> None:
    """Make `db` as a server leaves it (migrated, in WAL mode) with a few thousand players, its log folded in."""
    with started([*SERVE, "--port", "0", "--db", str(db)], stdout=subprocess.PIPE, text=True) as server:
        assert "listening on ws://127.0.0.1:" in first_line(server)
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.executemany("INSERT INTO players (id, name, name_key, created_at) VALUES (?, ?, ?, 0)",
                         [(f"id{i:05}", f"p{i}", f"p{i}") for i in range(3000)])
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` made unwritable for this process: mode 0444, and immutable (`chattr +i`) for root, whom modes do not
    stop; the test is skipped where neither can be done."""
    os.chmod(path, 0o444)
    immutable = False
    try:
        if os.access(path, os.W_OK):
            immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        if os.access(path, os.W_OK):
            pytest.skip("this process can write any file here (root, and no chattr +i on this filesystem)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        os.chmod(path, 0o644)


def test_a_database_it_cannot_write_is_refused_before_listening(tmp_path: Path) -> None:
    """A database file this server cannot write (read-only for its user; immutable for root): status 1 and one line
    naming the file and the fix, before it listens (before: it said "listening", then answered every hello with
    "try again shortly", which never worked)."""
    db = tmp_path / "a.sqlite3"
    _served_once(db)
    with read_only(db):
        done = run([*SERVE, "--port", "0", "--db", str(db)], timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"kalah serve: cannot write the arena database {db} (attempt to write a readonly "
                           "database): make the file and its folder writable by the user running kalah serve, or "
                           "name another file with --db\n")


def _damage_an_index(db: Path) -> None:
    """Point a cell of the file's last index leaf page past the page's end (a damage SQLite can still open)."""
    page_size = 4096
    data = bytearray(db.read_bytes())
    last_leaf = max(page for page in range(1, len(data) // page_size) if data[page * page_size] == 0x0A)
    cell_pointer = last_leaf * page_size + 8 + 2 * 2  # the leaf's header is 8 bytes; its third cell's pointer
    data[cell_pointer : cell_pointer + 2] = (0x0FF0).to_bytes(2, "big")
    db.write_bytes(bytes(data))


def test_a_database_that_fails_the_integrity_check_is_refused_at_start(tmp_path: Path) -> None:
    """A file SQLite opens but whose `PRAGMA quick_check` finds damaged: status 1 and one line naming the problem and
    the fix, before it listens (before: served silently until a read or write hit the damage)."""
    db = tmp_path / "a.sqlite3"
    _served_once(db)
    _damage_an_index(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]
    done = run([*SERVE, "--port", "0", "--db", str(db)], timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"kalah serve: the arena database {db} fails SQLite's integrity check (")
    assert done.stderr.endswith(f"): restore a backup (kalah restore BACKUP --db {db} --replace) or name another "
                                "file with --db\n")
    assert done.stderr.count("\n") == 1


def test_ctrl_c_stops_the_server_cleanly(tmp_path: Path) -> None:
    """SIGINT after start-up: a graceful shutdown, status 0, no traceback."""
    with started([*SERVE, "--port", "0", "--db", str(tmp_path / "a.sqlite3")],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert "listening on ws://127.0.0.1:" in first_line(proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err


def test_a_held_event_loop_is_logged_with_how_long_and_what_held_it(tmp_path: Path) -> None:
    """The server's process held 2 s (stopped, as a starved machine or a debugger holds it), past `--stall-trace
    0.5`: one `loop_stalled` warning once it runs again, held at least 1.5 s, neither running nor waiting for a core
    most of it (blocked), with the stacks the watchdog took."""
    with started([*KALAH, "serve", "--port", "0", "--db", str(tmp_path / "a.sqlite3"), "--log-level", "warning",
                  "--log-format", "json", "--stall-trace", "0.5"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert "listening on ws://127.0.0.1:" in first_line(proc)
        time.sleep(0.5)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(2.0)
        proc.send_signal(signal.SIGCONT)
        time.sleep(1.0)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    stalls = [json.loads(line) for line in err.splitlines() if '"loop_stalled"' in line]
    held = [stall for stall in stalls if stall["held_ms"] >= 1500]  # a loaded machine may hold it at start too
    assert len(held) == 1, err
    stall = held[0]
    assert stall["level"] == "warning" and stall["blocked_ms"] > stall["ran_ms"]
    assert isinstance(stall["stack"], list) and isinstance(stall["other_threads"], list)


def test_on_an_empty_cache_the_server_says_what_its_bots_have(tmp_path: Path) -> None:
    """`kalah serve` with no database built: per rule set the book and no databases, what that means for
    `perfect`, and the commands that build the small databases in seconds. The server is killed on every path."""
    with kalah(["serve", "--log-level", "error", "--port", "0", "--db", str(tmp_path / "a.sqlite3")],
               tmp_path) as server:
        server.wait_for("h6-empty-extra-owner's small databases in seconds (a server started in a terminal "
                        "builds them itself)\n")
        assert server.stop(signal.SIGINT) == 0
        text = server.text()
    assert f"bots: endgame databases in {tmp_path / 'egdb'}" in text
    for rules in ("h6-standard-extra-owner", "h6-empty-extra-owner"):
        assert re.search(f"{rules}: a book of [0-9,]+ proved positions, databases up to 0 seeds", text)
    assert "perfect: not perfect in Kalah(6,4) without databases" in text
    assert "`kalah egdb build --seeds 24`" in text
    assert "builds h6-standard-extra-owner's small databases in seconds" in text
    assert "--capture empty` builds h6-empty-extra-owner's small databases" in text
    assert "Traceback" not in text
    assert not (tmp_path / "egdb").exists()  # nothing built when not started in a terminal


def test_the_server_says_perfect_in_kalah_6_5_only_where_a_complete_book_has_its_databases(tmp_path: Path) -> None:
    """`kalah serve` with both rule sets' databases up to 5 seeds and, in $KALAH_BOOK_DIR, an empty-capture book
    recording a complete Kalah(6,5) build with them: "perfect" there; the standard book (the shipped one) is "not
    perfect", in one line naming the build that finishes it, or the databases' if it is complete with 30 levels."""
    for capture in Capture.STANDARD, Capture.EMPTY:
        egdb.load(Variant(capture=capture), 5, implementation("c"), tmp_path / "egdb")
    rules = Variant(capture=Capture.EMPTY)
    book = Book(egdb.rule_key(rules))
    book.record(Completion("kalah(6,5,capture=empty)", 5, 2_000_000, 20))
    book.save(tmp_path / "books" / book_mod.file_name(rules))
    with kalah(["serve", "--log-level", "error", "--port", "0", "--db", str(tmp_path / "a.sqlite3")],
               tmp_path) as server:
        server.wait_for("(logged, docs/bots.md)\n")
        assert server.stop(signal.SIGINT) == 0
        text = server.text()
    lines = text.splitlines()
    assert any(line.startswith("perfect in Kalah(6,5) empty capture: its book is complete for the databases up to 5 "
                               "seeds and the bots use 5") for line in lines), text
    [standard] = [line for line in lines if "Kalah(6,5) standard" in line]
    shipped = book_mod.load(Variant(), [book_mod.PACKAGE_DIR])
    assert shipped is not None
    if shipped.completions(Variant(seeds=5)):  # complete with more levels than the 5 on disk: their build is named
        assert standard.startswith("not perfect in Kalah(6,5) standard: its book is complete for the databases up to "
                                   "30 seeds, 5 on disk: `kalah egdb build --seeds 30` ("), standard
    else:
        assert standard.startswith("not perfect in Kalah(6,5) standard: its book's build is not finished ("), standard
        assert "`kalah book build -H 6 -s 5 --egdb-seeds 30 --node-limit 2000000`" in standard
    assert "Traceback" not in text


def metrics_status(url: str, token: str) -> int:
    """The HTTP status of `GET /metrics` on the server at ws `url` with `token` as the bearer."""
    request = urllib.request.Request(url.replace("ws://", "http://") + "/metrics",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_operator_token_is_read_from_a_file_and_kept_out_of_the_command_line(tmp_path: Path) -> None:
    """`--operator-token-file FILE`: the server takes the secret on the file's first line, no local user sees it in
    the process's command line, and no warning is written; `--operator-token SECRET` still works but warns in one
    line naming the file flag and the environment."""
    secret = "s3cret-" + os.urandom(8).hex()
    (tmp_path / "token").write_text(secret + "\n")
    argv = [*SERVE, "--port", "0", "--db", str(tmp_path / "a.sqlite3")]
    with started([*argv, "--operator-token-file", str(tmp_path / "token")],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        url = first_line(proc).split(" on ")[1].split()[0]
        assert metrics_status(url, secret) == 200 and metrics_status(url, "guess") == 401
        assert secret not in Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace")
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "warning" not in err, err
    with started([*argv, "--operator-token", secret], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True) as proc:
        url = first_line(proc).split(" on ")[1].split()[0]
        assert metrics_status(url, secret) == 200
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert err.startswith("kalah serve: warning: --operator-token shows the secret to every user"), err
    assert "--operator-token-file" in err.splitlines()[0] and "$KALAH_OPERATOR_TOKEN" in err.splitlines()[0]


def test_an_operator_token_in_a_config_file_is_not_warned_about(tmp_path: Path) -> None:
    """`operator-token` in a `--config` file is not on the process's command line: the server takes it without the
    command-line warning."""
    secret = "s3cret-" + os.urandom(8).hex()
    config = tmp_path / "serve.toml"
    config.write_text(f'operator-token = "{secret}"\nport = 0\ndb = "{tmp_path / "a.sqlite3"}"\n')
    with started([*SERVE, "--config", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True) as proc:
        url = first_line(proc).split(" on ")[1].split()[0]
        assert metrics_status(url, secret) == 200
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "warning" not in err, err


def test_an_operator_token_file_it_cannot_use_is_one_line(tmp_path: Path) -> None:
    """A missing or empty token file: status 2 and one line naming the file, before anything starts."""
    (tmp_path / "empty").write_text("\n")
    for name, says in (("missing", "cannot read the operator token from"), ("empty", "is empty: write the secret")):
        done = run([*SERVE, "--port", "0", "--db", str(tmp_path / "a.sqlite3"), "--operator-token-file",
                    str(tmp_path / name)], timeout=30)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
        assert str(tmp_path / name) in done.stderr


def test_an_allowed_origin_that_is_not_one_is_refused_in_one_line(tmp_path: Path) -> None:
    """`--allowed-origin` takes `http(s)://host[:port]`; a path, `null` or another scheme is refused (status 2)."""
    for bad in ("https://play.example.org/lobby", "null", "ftp://play.example.org"):
        done = run([*SERVE, "--port", "0", "--db", str(tmp_path / "a.sqlite3"), "--allowed-origin", bad], timeout=30)
        assert done.returncode == 2 and f"{bad!r} is not an origin http(s)://host[:port]" in done.stderr


def test_tls_flags_serve_wss_or_are_refused_in_one_line(tmp_path: Path) -> None:
    """`--tls-cert` and `--tls-key` together: the server says it listens on wss:// and serves its pages on https://;
    one without the other, or a file that is not a certificate: status 1, one line naming the fix, nothing made."""
    cert = make_certificate(tmp_path / "tls")
    db = tmp_path / "a.sqlite3"
    alone = run([*SERVE, "--port", "0", "--db", str(db), "--tls-cert", str(cert.cert)], timeout=30)
    assert (alone.returncode, alone.stderr) == (1, "kalah serve: give --tls-cert and --tls-key together (the "
                                                   "certificate and its private key)\n")
    swapped = run([*SERVE, "--port", "0", "--db", str(db), "--tls-cert", str(cert.key), "--tls-key", str(cert.key)],
                  timeout=30)
    assert swapped.returncode == 1 and swapped.stderr.count("\n") == 1 and "give the PEM certificate" in swapped.stderr
    assert not db.exists()
    with started([*SERVE, "--port", "0", "--db", str(db), "--tls-cert", str(cert.cert), "--tls-key", str(cert.key)],
                 stdout=subprocess.PIPE, text=True) as proc:
        url = first_line(proc).split(" on ")[1].split()[0]
        assert url.startswith("wss://127.0.0.1:")
        assert first_line(proc).startswith("web pages on https://127.0.0.1:")
        games = run([*KALAH, "games", "--server", url], timeout=60, env={**os.environ, "SSL_CERT_FILE": str(cert.ca)})
        assert games.returncode == 0, games.stderr
        proc.terminate()
        proc.wait(timeout=30)


def open_files_limit(soft: int, hard: int) -> Callable[[], None]:
    """A child's set-up that gives it these open-files limits."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def soft_open_files(pid: int) -> int:
    """The soft open-files limit of process `pid`."""
    line = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if line.startswith("Max open files"))
    return int(line.split()[3])


def test_the_connection_caps_are_checked_against_the_open_files_limit(tmp_path: Path) -> None:
    """At the usual limit of 1,024 open files, `kalah serve` (10,000 connections by default) raises its soft limit
    up to the hard one when it may and starts; when the hard limit is too low it refuses in one line naming the
    limit and --max-connections (before: it started, and failed every handshake past 1,024 files)."""
    argv = [*SERVE, "--port", "0", "--db", str(tmp_path / "a.sqlite3")]
    done = run(argv, timeout=30, preexec_fn=open_files_limit(1024, 1024))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "may open only 1024" in done.stderr and "ulimit -n" in done.stderr and "--max-connections" in done.stderr
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 12_000:
        pytest.skip(f"this machine's hard open-files limit ({hard}) is below what the default caps need")
    with started(argv, stdout=subprocess.PIPE, text=True, preexec_fn=open_files_limit(1024, hard)) as proc:
        assert " on ws://" in first_line(proc)
        assert soft_open_files(proc.pid) >= 11_256


def test_password_cost_sets_argon2s_parameters_or_is_refused_in_one_line(tmp_path: Path) -> None:
    """`--password-cost PASSES,KIB,LANES` hashes account passwords with those argon2id parameters (before, only a
    Python caller of `start_server` could set them); a value out of bounds or not three numbers is refused (status
    2) in one line."""
    db = tmp_path / "a.sqlite3"
    with started([*SERVE, "--port", "0", "--db", str(db), "--password-cost", "1,8192,1"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        url = first_line(proc).split(" on ")[1].split()[0]
        asyncio.run(_register(url, "ann"))
        proc.terminate()
        proc.communicate(timeout=30)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        hashes = [row[0] for row in conn.execute("SELECT secret FROM credentials WHERE kind = 'password'")]
    assert len(hashes) == 1 and hashes[0].startswith("$argon2id$v=19$m=8192,t=1,p=1$"), hashes
    for bad in ("3,65536", "0,65536,4", "3,4,4", "3,65536,64", "a,b,c"):
        done = run([*SERVE, "--port", "0", "--db", str(db), "--password-cost", bad], timeout=30)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (bad, done.stderr)
        assert "--password-cost" in done.stderr and repr(bad) in done.stderr, done.stderr


async def _register(url: str, name: str) -> None:
    """Register `name` with a password over the wire."""
    client = await Client.open(url, None)
    await client.request("signed_in", type="register", name=name, password="correct horse battery")
    await client.close()


def test_the_server_prints_each_line_in_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kalah serve`'s lines on standard output go out in one write each: the log lines, written by a thread of their
    own to standard error, cannot land inside one in a terminal (`print` writes the text and the newline apart)."""
    writes: list[str] = []

    class Recorder(io.StringIO):
        """Standard output that records each write."""

        def write(self, text: str) -> int:
            """Record the write."""
            writes.append(text)
            return len(text)

    monkeypatch.setattr(sys, "stdout", Recorder())
    serve_cli.say("kalah server listening on ws://127.0.0.1:1 (database a.sqlite3)")
    assert writes == ["kalah server listening on ws://127.0.0.1:1 (database a.sqlite3)\n"]

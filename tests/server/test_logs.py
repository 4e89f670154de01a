"""Structured logs: text lines or one JSON object a line, with the event name and its fields."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import threading
from pathlib import Path

import pytest

from server.log_writer import QueuedLogs
from server.logs import LOGGER_NAME, JsonFormatter, TextFormatter, configure, event
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, gateway, port_of
from tests.helpers.processes import KALAH, spawn
from tests.helpers.wire import Client, FirstLegal, Json, is_game_over, live_match


def test_json_lines_carry_event_and_fields() -> None:
    """A logged event formats as JSON with its level, name and fields kept as data."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            """Keep the record."""
            records.append(record)

    logger = logging.getLogger(LOGGER_NAME)
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        event("match_finished", match="m1", result=-2, winner_seat=1)
        event("noise", level=logging.DEBUG)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(records) == 1
    data = json.loads(JsonFormatter().format(records[0]))
    assert data["event"] == "match_finished" and data["level"] == "info"
    assert (data["match"], data["result"], data["winner_seat"]) == ("m1", -2, 1)



async def test_a_failing_bot_turn_is_logged_with_its_traceback(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """A hosted bot's turn that fails (here: started when the bot is not to move) is logged as `bot_failed`, a
    warning with the traceback that shows where it failed."""
    server = await serve(bot_factory=FirstLegal.make)
    alice = await Client.open(server.url, "alice")
    mid = (await alice.request("snapshot", type="create", variant="kalah(4,3)", seat="south",
                               opponent="first"))["match_id"]
    room = server.arena.rooms[mid]
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        await server.arena.bot_turns.turn(room, 1, "first")
    [record] = [r for r in caplog.records if r.getMessage() == "bot_failed"]
    data = json.loads(JsonFormatter().format(record))
    assert data["level"] == "warning" and data["error"].startswith("OutOfTurnError")
    assert data["traceback"].startswith("Traceback") and "prepare_action" in data["traceback"]


def test_json_and_text_lines_carry_the_node_and_the_keyed_fields() -> None:
    """Every JSON line has time, level, event, match, player and node (null when they do not apply); a text line
    names only the fields that have a value, quoting those with spaces."""
    record = logging.LogRecord(LOGGER_NAME, logging.WARNING, __file__, 1, "match_expired", None, None)
    record.fields = {"match": "m1", "why": "idle too long"}
    data = json.loads(JsonFormatter(node="n2").format(record))
    assert list(data)[:6] == ["time", "level", "event", "match", "player", "node"]
    assert (data["match"], data["player"], data["node"], data["why"]) == ("m1", None, "n2", "idle too long")
    assert data["time"].endswith("Z") and "T" in data["time"]
    line = TextFormatter().format(record)
    assert line.split(" ", 3)[1:] == ["warning", "match_expired", 'match=m1 why="idle too long"']


HOSTILE = "\x1b[31mred\x1b[0m \x1b]0;owned\x07 \rfake line\x7f\x9b2J\u202etxt\u2028"
"""What a client may write in a logged value: ESC colour codes, an OSC title, a carriage return, DEL, a C1 CSI, a
bidirectional override and a line separator."""


def test_log_values_carry_no_raw_control_character() -> None:
    """Every control character in a logged value, key or traceback is escaped in text and JSON lines alike, and
    a text line's quoted value reads back with its control characters as JSON."""
    try:
        raise ValueError(HOSTILE)
    except ValueError:
        exc_info = sys.exc_info()
    record = logging.LogRecord(LOGGER_NAME, logging.INFO, __file__, 1, "kgp_engine_account", None, exc_info)
    record.fields = {"authors": HOSTILE, "plain\x1bkey": "x\x1by"}
    for line in (TextFormatter().format(record), JsonFormatter().format(record)):
        assert not [c for c in line if c != "\n" and not c.isprintable() and c != " "], line
    text = TextFormatter().format(record)
    assert json.loads(text.split("authors=", 1)[1].split(" plain", 1)[0]) == HOSTILE
    assert json.loads(JsonFormatter().format(record))["authors"] == HOSTILE


async def test_an_engine_cannot_write_control_characters_into_the_text_log(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """A KGP engine whose `info:authors` holds terminal control characters is logged with them escaped (a value
    without spaces was written raw)."""
    server = await gateway(serve)
    agent = await KgpClient.open(port_of(server))
    try:
        await agent.expect("kgp")
        await agent.command(f'set info:authors "{HOSTILE.replace(" ", "")}"')
        await agent.command('set info:name "hostile"')
        with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
            await agent.command("mode freeplay")
            await agent.until_game()
    finally:
        await agent.close()
    [record] = [r for r in caplog.records if r.getMessage() == "kgp_engine_account"]
    line = TextFormatter().format(record)
    assert "authors=" in line and not [c for c in line if not c.isprintable()], line


async def serve_and_play(tmp_path: Path, *flags: str, db: str | None = None) -> tuple[list[str], Json, str]:
    """Run `kalah serve FLAGS` (on `db`, else a new SQLite file) in a child process, play a match to a
    resignation, stop it; its log lines, the creator's welcome and the match id."""
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        proc = await spawn(*KALAH, "serve", "--port", "0", "--db", db or str(tmp_path / "arena.sqlite3"),
                           "--log-level", "info", *flags, stdout=asyncio.subprocess.PIPE, stderr=log)
    try:
        assert proc.stdout is not None
        url = re.findall(r"ws://\S+", (await asyncio.wait_for(proc.stdout.readline(), 60)).decode())[0]
        south, north, match_id = await live_match(url)
        await south.send(type="resign", match_id=match_id)
        await north.expect("event", where=is_game_over)
        await south.close()
        await north.close()
    finally:
        if proc.returncode is None:
            proc.terminate()
        status = await asyncio.wait_for(proc.wait(), 15)
    assert status == 0
    return log_path.read_text().splitlines(), south.welcome, match_id


async def test_a_server_started_with_log_format_json_writes_one_object_a_line(tmp_path: Path) -> None:
    """`kalah serve --log-format json`: every line of a real server's standard error is one JSON object with the
    keyed fields; the hello names the player and the match's events name the match."""
    lines, welcome, match_id = await serve_and_play(tmp_path, "--log-format", "json")
    entries = [json.loads(line) for line in lines]
    assert all({"time", "level", "event", "match", "player", "node"} <= set(e) for e in entries)
    events = {(e["event"], e["match"] or e["player"]) for e in entries}
    assert {("hello", welcome["player_id"]), ("match_created", match_id), ("match_finished", match_id)} <= events
    assert [e["event"] for e in entries][-1] == "shutdown_done"


async def test_text_stays_the_default_log_format(tmp_path: Path) -> None:
    """Without --log-format a server's log lines are text: time, level, event and its fields."""
    lines, _, match_id = await serve_and_play(tmp_path)
    assert any(line.split()[2:4] == ["match_finished", f"match={match_id}"] for line in lines)
    assert not any(line.startswith("{") for line in lines)


async def test_a_cluster_node_names_itself_on_every_json_line(tmp_path: Path, pg_url: str, bus_url: str) -> None:
    """A node started with `--node-id n7 --log-format json` writes `"node": "n7"` on every line, from the first."""
    lines, _, match_id = await serve_and_play(tmp_path, "--log-format", "json", "--bus", bus_url, "--node-id", "n7",
                                              db=pg_url)
    entries = [json.loads(line) for line in lines]
    assert entries and all(e["node"] == "n7" for e in entries)
    assert ("match_finished", match_id) in {(e["event"], e["match"]) for e in entries}


def test_a_standard_error_nobody_reads_never_holds_the_server_and_the_lines_lost_are_told(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With standard error a pipe nobody reads, 20,000 events (some 3 MiB, past the pipe's 64 KiB) are all logged
    without waiting (before, the 400th or so write blocked until the reader read); once the reader reads, the lines
    that did not fit the queue are told in a `log_lines_dropped` line and the server's last line is written."""
    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stderr", os.fdopen(write_end, "w"))
    root = logging.getLogger("kalah")
    saved = (root.handlers[:], root.level, root.propagate)
    logged = threading.Event()

    def flood() -> None:
        """Log as a flooded server does, then a last line."""
        for i in range(20_000):
            event("connection_refused", remote=f"127.2.{i % 250}.1", reason="per_address", padding="x" * 100)
        event("shutdown_done")
        logged.set()

    try:
        configure("info", "json")
        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        assert logged.wait(60), "logging waited on a standard error nobody reads"
        [handler] = root.handlers
        assert isinstance(handler, QueuedLogs) and handler.dropped_in_all > 0
        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(read_end, 1 << 16), b"")))
        reader.start()
        handler.close()  # what waits is written, then the drops since the last line written are told
        sys.stderr.close()
        reader.join(60)
        lines = [json.loads(line) for line in b"".join(chunks).decode().splitlines()]
        told = [line for line in lines if line["event"] == "log_lines_dropped"]
        assert told and sum(line["lines"] for line in told) == handler.dropped_in_all
        assert len(lines) - len(told) + handler.dropped_in_all == 20_001
    finally:
        if not logged.is_set():  # the writes blocked: read what they wait to write, so that they end
            threading.Thread(target=lambda: list(iter(lambda: os.read(read_end, 1 << 16), b"")), daemon=True).start()
            logged.wait(60)
        for handler in root.handlers:
            handler.close()
        root.handlers[:], root.level, root.propagate = saved
        if not sys.stderr.closed:
            sys.stderr.close()
        os.close(read_end)

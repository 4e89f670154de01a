"""Mutated frames against a real server, websocket and KGP: every one gets a typed answer or none, never
`internal_error`, a logged fault or a stall (a probe after each batch must be answered).

`KALAH_FUZZ_FRAMES` sets how many frames of each kind (default 3,000 for CI time; 100,000 for a long run).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import random
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from protocol.errors import ERROR_CODES
from protocol.kgp import Line
from tests.conftest import Serve
from tests.helpers.agents.kgp_client import KgpClient, gateway, port_of
from tests.helpers.wire import Client

FRAMES = int(os.environ.get("KALAH_FUZZ_FRAMES", "3000"))
BATCH = 250
POSITION = "4,4,4,4,4,4,0,4,4,4,4,4,4,0 S 0 -"
SEEDS: list[dict[str, Any]] = [
    {"type": "hello", "name": "fuzz"}, {"type": "list"}, {"type": "games", "limit": 5, "offset": 0},
    {"type": "game", "match_id": "m1"}, {"type": "standings", "limit": 5},
    {"type": "create", "variant": "kalah(6,4,clock=300+5)", "seat": "south", "opponent": "random", "rated": False},
    {"type": "create", "variant": "kalah(4,3,pie=on)"}, {"type": "seek", "variant": "kalah(6,4)"},
    {"type": "join", "match_id": "m1"}, {"type": "watch", "match_id": "m1", "since": 0},
    {"type": "sync", "match_id": "m1", "since": 2}, {"type": "leave", "match_id": "m1"},
    {"type": "move", "match_id": "m1", "ply": 0, "bin": 3}, {"type": "swap", "match_id": "m1", "ply": 1},
    {"type": "transfer", "match_id": "m1", "ply": 0, "src": 2, "dst": 9}, {"type": "resign", "match_id": "m1"},
    {"type": "claim", "match_id": "m1"},
    {"type": "analyse", "variant": "kalah(6,4)", "position": POSITION, "budget_ms": 10},
    {"type": "exhibition", "variant": "kalah(4,3)", "south": "random", "north": "random", "rated": False},
]
ODD_VALUES: list[Any] = [None, True, -1, 0, 2**63, -(2**70), 1.5, float("inf"), "", "x" * 2000, "\u0000\ud7ff",
                         "m" * 65, [], {}, [[[[[]]]]], {"a": {"b": {"c": 1}}}, "kalah(99,4)", "bot:perfect", "../"]


def mutate_json(rng: random.Random, seed: dict[str, Any], match_ids: list[str]) -> str:
    """A seed message with a few fields dropped, retyped, added or renamed, as JSON text."""
    msg = dict(seed)
    if match_ids and "match_id" in msg and rng.random() < 0.5:
        msg["match_id"] = rng.choice(match_ids)  # a real match, so the handlers get past the lookup
    for _ in range(rng.randint(1, 3)):
        keys = list(msg)
        roll = rng.random()
        if roll < 0.3 and keys:
            msg[rng.choice(keys)] = rng.choice(ODD_VALUES)
        elif roll < 0.45 and keys:
            del msg[rng.choice(keys)]
        elif roll < 0.6:
            msg[rng.choice(["extra", "type", "ply", "since", "limit", "token", "engine", "pace_ms"])] = rng.choice(
                [*ODD_VALUES, rng.randint(-5, 300)])
        elif roll < 0.75:
            msg["type"] = rng.choice(SEEDS)["type"]
        elif roll < 0.85 and keys:
            msg[rng.choice(keys)] = rng.randint(-3, 20)
    return json.dumps(msg, allow_nan=True)


def mutate_bytes(rng: random.Random, text: str) -> bytes:
    """Text with bytes flipped, cut, repeated or inserted (often no longer JSON, or not UTF-8)."""
    data = bytearray(text.encode())
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        at = rng.randrange(len(data) + 1)
        if roll < 0.3 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif roll < 0.5:
            del data[at:at + rng.randint(1, 8)]
        elif roll < 0.7:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        elif roll < 0.85:
            data[at:at] = rng.choice([b"{", b"[", b'"', b"\\u", b"]}", b"\xff\xfe", b"null", b"1e999"])
        else:
            data = data[:at]
    return bytes(data)


def frames(rng: random.Random, count: int, match_ids: list[str]) -> list[str | bytes]:
    """`count` frames: mutated JSON as text, and as raw bytes (a binary frame) one time in three."""
    out: list[str | bytes] = []
    for _ in range(count):
        text = mutate_json(rng, rng.choice(SEEDS), match_ids)
        out.append(mutate_bytes(rng, text) if rng.random() < 0.33 else text)
    return out


def _answers(probe: int, line: Line) -> bool:
    """Whether a KGP line answers the request numbered `probe`."""
    return line.ref == probe


def faults(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Log records of the server's internal errors and of unhandled exceptions in its tasks."""
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR or r.getMessage() == "internal_error"]


async def test_mutated_websocket_frames_get_typed_answers(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """Mutated JSON and bytes from a client that said hello: only documented error codes, no fault logged, and a
    probe after every batch is answered (a closed connection is reopened and counted)."""
    caplog.set_level(logging.INFO)
    server = await serve(rate=1e6, burst=10**6, address_rate=1e6, address_burst=10**6, read_rows_rate=1e9,
                         read_rows_burst=10**9, all_read_rows_rate=1e9, network_read_rows_rate=1e9, max_refused=10**9)
    rng = random.Random(20261126)
    client = await Client.open(server.url, "fuzzer")
    codes: set[str] = set()
    reopened = 0
    for batch in range(0, FRAMES, BATCH):
        match_ids = list(server.arena.rooms)[-20:]
        try:
            for frame in frames(rng, min(BATCH, FRAMES - batch), match_ids):
                await client.ws.send(frame)
            probe = f"probe-{batch}"
            await client.send(type="game", match_id=probe)
            while True:
                reply = await client.next(timeout=30)
                if reply["type"] == "error":
                    codes.add(reply["code"])
                    if reply.get("match_id") == probe:
                        break
        except ConnectionClosed:
            assert client.ws.close_code in (1007, 1008, 1009), client.ws.close_code
            reopened += 1
            client = await Client.open(server.url, f"fuzzer{reopened}")
    assert codes <= set(ERROR_CODES) and "internal_error" not in codes, codes
    assert {"bad_json", "bad_field", "unknown_type"} <= codes
    assert faults(caplog) == []
    await client.request("matches", type="list")
    await client.close()


async def test_mutated_kgp_lines_get_errors_not_faults(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """Mutated KGP lines from an agent in a game: the gateway answers a `ping` probe after every batch, logs no
    fault, and a connection it ended (goodbye, a second mode) is reopened."""
    caplog.set_level(logging.INFO)
    running = await gateway(serve, kgp_rate=1e6, kgp_burst=10**6, kgp_variant="kalah(6,4,clock=1/move)")
    port = port_of(running)
    rng = random.Random(2671)
    seeds = ['set info:name "fuzz"', "mode freeplay", "move 3", "yield", "pong", "ok", 'error "x"', "ping",
             'set auth:token "abcdefgh12345"', "set info:comment 1 2 3", 'set game:id "g"', "state <6,0,0,4,4>",
             "goodbye", "mode eval", "stop"]
    client = await KgpClient.open(port)
    await client.hello()
    reopened = 0
    for batch in range(0, FRAMES, BATCH):
        lines = []
        for _ in range(min(BATCH, FRAMES - batch)):
            head = rng.choice(["", f"{rng.randint(-3, 99)} ", f"{rng.randint(1, 9)}@{rng.randint(-2, 20)} "])
            line = (head + rng.choice(seeds)).encode()
            lines.append(mutate_bytes(rng, line.decode()) if rng.random() < 0.5 else line)
        try:
            client.writer.write(b"".join(line.replace(b"\n", b" ") + b"\r\n" for line in lines
                                         if b"goodbye" not in line and b"mode" not in line))
            probe = 100_001 + 2 * batch
            client.writer.write(f"{probe} ping\r\n".encode())
            await client.writer.drain()
            await client.expect("pong", timeout=30, where=functools.partial(_answers, probe))
        except (AssertionError, ConnectionError) as exc:
            assert "connection closed" in str(exc) or isinstance(exc, ConnectionError), exc
            reopened += 1
            client.writer.close()
            client = await KgpClient.open(port)
            await client.hello()
    assert faults(caplog) == []
    client.writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await client.writer.wait_closed()

"""A deliberately broken KGP agent for the tests (standard library only, no project code).

    python broken_agent.py HOST PORT FAULT [--token TOKEN] [--name NAME]

FAULT is one of:
  garbage  before each move: junk bytes, malformed and unknown commands, a 20 KiB line; then a
           legal move (the server must shrug all of it off and play on)
  illegal  answers its first state with an empty pit
  hang     answers pings until its first state, then never answers anything again (no move, no pong)
  vanish   closes the connection when it gets its first state
Every line received is printed (`< `); the agent ends after its first game's result
(`set arena:result`), or when the server closes the connection.
"""

from __future__ import annotations

import argparse
import re
import socket
import sys

COMMAND = re.compile(r"\s*(?:\d*(?:@\d+)?\s+)?([A-Za-z0-9]+)\b.*")
STATE = re.compile(r"(\d+) state <([\d,]+)>")
JUNK = [
    b"\xff\xfe\x00\x01 garbage \x7f",
    b"!!! ???",
    b"move",
    b"@999 move 1",
    b"set",
    b"frobnicate 1 2 3",
    b'set info:name "unterminated',
    b"set totally:unknown 42",
]


def main() -> int:
    """Connect and misbehave as told."""
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("fault", choices=["garbage", "illegal", "hang", "vanish"])
    parser.add_argument("--token")
    parser.add_argument("--name", default="broken")
    args = parser.parse_args()
    sock = socket.create_connection((args.host, args.port))
    reader = sock.makefile("r", encoding="utf-8", errors="replace", newline="\n")

    def send(data: bytes) -> None:
        sock.sendall(data + b"\r\n")

    hung = False
    for raw in reader:
        line = raw.rstrip("\r\n")
        print("<", line, flush=True)
        command = COMMAND.fullmatch(line)
        name = command[1] if command else ""
        if name == "kgp":
            send(f'set info:name "{args.name}"'.encode())
            if args.token:
                send(f'set auth:token "{args.token}"'.encode())
            send(b"mode freeplay")
            continue
        if hung:
            continue
        if name == "set" and "arena:result" in line:
            return 0
        if name == "ping":
            send(b"pong")
        state = STATE.fullmatch(line)
        if state is None:
            continue
        hung = args.fault == "hang"
        if hung:
            continue
        sid, values = int(state[1]), [int(v) for v in state[2].split(",")]
        size, south = values[0], values[3 : 3 + values[0]]
        if args.fault == "vanish":
            sock.close()
            return 0
        if args.fault == "illegal":
            empty = [i + 1 for i, seeds in enumerate(south) if not seeds]
            send(f"@{sid} move {empty[0] if empty else size + 1}".encode())
            send(f"@{sid} yield".encode())
            continue
        for junk in JUNK:
            send(junk)
        send(b"set info:comment " + b"x" * 20480)
        first = next(i + 1 for i, seeds in enumerate(south) if seeds)
        send(f"@{sid} move {first}".encode())
        send(f"@{sid} yield".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A small KGP agent for the tests, written against the published protocol only (standard library, no project code).

It connects over TCP, says who it is, asks for freeplay, and answers every `state` the way an
iterative-deepening engine does: a first guess (its last legal pit), then its choice (the
first legal pit), then `yield`; so the move played shows that the last move counts. It
answers `ping`, counts the gateway's `set arena:result` lines and says goodbye after
`--games` results. Every line it receives or sends is printed (`< ` and `> `).

    python kgp_agent.py HOST PORT [--name NAME] [--token TOKEN] [--games N]
"""

from __future__ import annotations

import argparse
import re
import socket
import sys

COMMAND = re.compile(r"\s*(?:(\d*)(?:@(\d+))?\s+)?([A-Za-z0-9]+)(?:\s+(.*?))?\s*")
BOARD = re.compile(r"<([\d,\s]+)>")


class Agent:
    """One connection to a KGP server."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.file = sock.makefile("r", encoding="utf-8", newline="\n")
        self.next_id = 1

    def send(self, text: str, ref: int | None = None) -> None:
        """Send one command with an odd id (and a reference)."""
        head = str(self.next_id) + ("" if ref is None else f"@{ref}")
        self.next_id += 2
        line = f"{head} {text}"
        print(">", line, flush=True)
        self.sock.sendall((line + "\r\n").encode())


def legal_pits(args: str) -> list[int]:
    """The agent's non-empty pits (1-based) on a `state` board literal: it is always South."""
    found = BOARD.search(args)
    if found is None:
        return []
    values = [int(v) for v in found[1].split(",")]
    size = values[0]
    south = values[3 : 3 + size]
    return [i + 1 for i, seeds in enumerate(south) if seeds]


def main() -> int:
    """Play until the server says goodbye or `--games` results came in."""
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--name", default="tester")
    parser.add_argument("--token")
    parser.add_argument("--games", type=int, default=1)
    args = parser.parse_args()
    agent = Agent(socket.create_connection((args.host, args.port)))
    results = 0
    for raw in agent.file:
        line = raw.rstrip("\r\n")
        print("<", line, flush=True)
        m = COMMAND.fullmatch(line)
        if m is None:
            continue
        cid = int(m[1]) if m[1] else None
        name, rest = m[3], m[4] or ""
        if name == "kgp":
            if not rest.startswith("1 "):
                return 2
            agent.send(f'set info:name "{args.name}"')
            agent.send('set info:authors "the Kalah Arena tests"')
            if args.token:
                agent.send(f'set auth:token "{args.token}"')
            agent.send("mode freeplay")
        elif name == "state" and cid is not None:
            pits = legal_pits(rest)
            if pits:
                agent.send(f"move {pits[-1]}", ref=cid)
                agent.send('set info:comment "depth 1"')
                agent.send(f"move {pits[0]}", ref=cid)
            agent.send("yield", ref=cid)
        elif name == "ping":
            agent.send("pong", ref=cid)
        elif name == "set" and rest.startswith(('arena:result', '"arena:result"')):
            results += 1
            if results >= args.games:
                agent.send("goodbye")
                return 0
        elif name == "goodbye":
            return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())

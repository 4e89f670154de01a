"""A small KGP engine on stdin/stdout for the bridge's tests (standard library only, no project code).

It is the client side of KGP, as a program a bridge or a tester starts: it reads the
server's lines on stdin and writes its own on stdout. On the greeting it names itself and
asks for freeplay; it answers each `state` as an iterative-deepening engine does (its last
legal pit, then its first, then `yield`: the first is played) and `ping` with `pong`. It
writes what it receives, one line each, on stderr (`< `).

    python kgp_stdio_engine.py [--name NAME] [--fault illegal|crash|silent|hang] [--once MARKER]

`--fault illegal` answers `move 99`; `crash` exits with status 3 on the first state; `silent`
sends no move at all (but answers pings); `hang` stops reading and writing on the first state.
With `--once MARKER` the fault happens only if the file MARKER does not exist yet (it is
created then): a restarted engine behaves.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading

COMMAND = re.compile(r"\s*(?:(\d*)(?:@(\d+))?\s+)?([A-Za-z0-9]+)(?:\s+(.*?))?\s*")
BOARD = re.compile(r"<([\d,\s]+)>")


def send(text: str, ref: str | None = None) -> None:
    """Write one command (with a reference to a server id)."""
    head = "" if ref is None else f"@{ref} "
    sys.stdout.write(f"{head}{text}\r\n")
    sys.stdout.flush()


def legal_pits(args: str) -> list[int]:
    """The engine's non-empty pits (1-based) on a `state` board: it is always South."""
    found = BOARD.search(args)
    if found is None:
        return []
    values = [int(v) for v in found[1].split(",")]
    size = values[0]
    return [i + 1 for i, seeds in enumerate(values[3 : 3 + size]) if seeds]


def faulty(args: argparse.Namespace) -> str | None:
    """The fault to commit now, if any (only once per marker file when `--once` is given)."""
    if args.fault is None:
        return None
    if args.once is None:
        return str(args.fault)
    if os.path.exists(args.once):
        return None
    with open(args.once, "w") as marker:
        marker.write("faulted\n")
    return str(args.fault)


def main() -> int:
    """Answer the server until it says goodbye or stdin ends."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="stdio-engine")
    parser.add_argument("--fault", choices=("illegal", "crash", "silent", "hang"))
    parser.add_argument("--once", metavar="MARKER")
    args = parser.parse_args()
    fault: str | None = None
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        print("<", line, file=sys.stderr, flush=True)
        m = COMMAND.fullmatch(line)
        if m is None:
            continue
        cid, name, rest = m[1] or None, m[3], m[4] or ""
        if name == "kgp":
            send(f'set info:name "{args.name}"')
            send("mode freeplay")
            fault = faulty(args)
        elif name == "state" and cid is not None:
            if fault == "crash":
                return 3
            if fault == "hang":
                threading.Event().wait()
            if fault == "illegal":
                send("move 99", ref=cid)
            elif fault != "silent":
                pits = legal_pits(rest)
                if pits:
                    send(f"move {pits[-1]}", ref=cid)
                    send(f"move {pits[0]}", ref=cid)
                send("yield", ref=cid)
        elif name == "ping":
            send("pong", ref=cid)
        elif name == "goodbye":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

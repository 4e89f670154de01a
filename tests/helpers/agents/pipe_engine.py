"""A KGP engine on standard input and output for the ladder's tests (standard library only, no project code).

It is the agent (client) side of KGP run as a program by a tester: the server's lines come
on stdin, its own go to stdout. It names itself and asks for freeplay, then answers each
`state` like an iterative-deepening engine: its last legal pit, then its first, then `yield`
(so the first legal pit is played); it answers `ping` with `pong`.

    python pipe_engine.py [FAULT [MARKER]]

FAULT (on the first state it gets; otherwise it plays well):
  crash    writes "boom: deliberate crash" on stderr and exits with status 3
  hang     never answers again (no move, no pong)
  illegal  moves an empty pit (or one past the last)
  garbage  sends a malformed line instead of a move
  longline sends a 20 KiB line instead of a move
  hog      burns CPU until the CPU limit kills it
  bloat    allocates 1 GiB (beyond the memory limit: it dies of MemoryError)
  nomode   never asks for freeplay
  every3   crashes (as `crash`) in every third process, counted in the file MARKER: 1st, 4th, 7th...
  log      plays well, and appends every line it receives to the file MARKER
  notify   plays well, and after its third move writes a line to the FIFO named by MARKER if someone
           is reading it, then answers nothing more (it reads until its input ends): its game stays live at
           that move until whoever read the line has killed the ladder (the server plays on only past the
           move's clock, or ends the game when no pong comes)
With a MARKER file the fault happens only while MARKER does not exist (it is created with the
fault, on the first state; `nomode` at the start): a restarted engine plays well.
"""

from __future__ import annotations

import os
import re
import sys

COMMAND = re.compile(r"\s*(?:(\d*)(?:@(\d+))?\s+)?([A-Za-z0-9]+)(?:\s+(.*?))?\s*")
BOARD = re.compile(r"<([\d,\s]+)>")


def send(text: str) -> None:
    """Write one line to the server."""
    sys.stdout.write(text + "\r\n")
    sys.stdout.flush()


def poke(fifo: str) -> bool:
    """Write a line to a FIFO if a reader waits on it (never blocks); whether one did."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    os.write(fd, b"moved\n")
    os.close(fd)
    return True


def main() -> int:
    """Play until goodbye or the end of the input."""
    fault = sys.argv[1] if len(sys.argv) > 1 else ""
    moves = 0
    marker = None
    if fault == "every3":
        count = 1
        if os.path.exists(sys.argv[2]):
            with open(sys.argv[2]) as counter:
                count += int(counter.read() or 0)
        with open(sys.argv[2], "w") as counter:
            counter.write(str(count))
        fault = "crash" if count % 3 == 1 else ""
    elif len(sys.argv) > 2 and fault not in ("notify", "log"):
        if os.path.exists(sys.argv[2]):
            fault = ""
        elif fault == "nomode":
            open(sys.argv[2], "w").close()
        else:
            marker = sys.argv[2]  # made when the fault happens: a tester's start-up check does not use it up
    for raw in sys.stdin:
        if fault == "log":
            with open(sys.argv[2], "a") as log:
                log.write(raw.rstrip("\r\n") + "\n")
        found = COMMAND.fullmatch(raw.rstrip("\r\n"))
        if found is None:
            continue
        cid, name, rest = found[1], found[3], found[4] or ""
        if name == "kgp":
            if fault != "nomode":
                send('set info:name "pipe-engine"')
                send("mode freeplay")
        elif name == "ping":
            send(f"@{cid} pong")
        elif name == "goodbye":
            return 0
        elif name == "state" and cid:
            board = BOARD.search(rest)
            assert board is not None
            values = [int(v) for v in board[1].split(",")]
            south = values[3 : 3 + values[0]]
            pits = [i + 1 for i, seeds in enumerate(south) if seeds]
            if marker is not None:
                open(marker, "w").close()
                marker = None
            if fault == "crash":
                print("boom: deliberate crash", file=sys.stderr, flush=True)
                return 3
            if fault == "hang":
                for _ in sys.stdin:  # reads on, answers nothing
                    pass
                return 0
            if fault == "hog":
                while True:
                    pass
            if fault == "bloat":
                ballast = bytearray(1 << 30)
                send(f"@{cid} move {pits[ballast[0]]}")
            if fault == "illegal":
                empty = [i + 1 for i, seeds in enumerate(south) if not seeds]
                send(f"@{cid} move {empty[0] if empty else len(south) + 1}")
            elif fault == "garbage":
                send("!!! this is not KGP ???")
            elif fault == "longline":
                send("set info:comment " + "x" * 20480)
            else:
                send(f"@{cid} move {pits[-1]}")
                send(f"@{cid} move {pits[0]}")
                moves += 1
                if fault == "notify" and moves == 3 and poke(sys.argv[2]):
                    sys.stdin.read()  # no yield, nor any other answer: the game waits here
                    return 0
            send(f"@{cid} yield")
    return 0


if __name__ == "__main__":
    sys.exit(main())

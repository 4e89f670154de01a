"""A ManKalah agent for the tests, written against the Manchester protocol only (standard library, no project code).

It reads the engine's lines on stdin (`START;South|North`, `CHANGE;<hole|SWAP>;<state>;<YOU|OPP|END>`,
`END`) and answers its turns on stdout with `MOVE;<hole>`: the lowest non-empty hole of its
side, from the state it was last sent. As North on its first turn it answers `SWAP` when
given `--swap`. With `--illegal` its first move is an empty hole (or one past the last).
Every line it receives is appended to `--log FILE` when given.

    python mankalah_agent.py [--swap] [--illegal] [--log FILE]
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    """Play one game."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--swap", action="store_true")
    parser.add_argument("--illegal", action="store_true")
    parser.add_argument("--log")
    args = parser.parse_args()
    side = ""
    state: list[int] = []
    first_turn = True

    def move() -> None:
        """Answer the prompt: SWAP, the illegal hole, or the lowest non-empty hole."""
        nonlocal first_turn, side
        holes = len(state) // 2 - 1
        mine = state[holes + 1 : 2 * holes + 1] if side == "South" else state[:holes]
        if args.swap and side == "North" and first_turn:
            answer, side = "SWAP", "South"  # the engine does not tell the swapper of its own swap
        elif args.illegal and first_turn:
            empty = [i + 1 for i, seeds in enumerate(mine) if not seeds]
            answer = f"MOVE;{empty[0] if empty else holes + 1}"
        else:
            answer = f"MOVE;{next(i + 1 for i, seeds in enumerate(mine) if seeds)}"
        first_turn = False
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        line = raw.rstrip("\n")
        if args.log:
            with open(args.log, "a") as log:
                log.write(line + "\n")
        parts = line.split(";")
        if parts[0] == "START":
            side = parts[1]
            if side == "South":
                state = [7] * 7 + [0] + [7] * 7 + [0]
                move()
        elif parts[0] == "CHANGE":
            state = [int(v) for v in parts[2].split(",")]
            if parts[1] == "SWAP":
                side = "South" if side == "North" else "North"
            if parts[3] == "YOU":
                move()
        elif parts[0] == "END":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`kalah record`: apply a game record to a variant; print each position and the result."""

from __future__ import annotations

import argparse
import json
import sys

from cli.variant_args import add_variant_args, variant_from_args
from protocol import Game, IllegalRecordError, KalahError, Position


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah record`."""
    add_variant_args(parser)
    parser.add_argument("moves", nargs="?", default=None,
                        help='the record, e.g. "3 6 9 8" (read from standard input if omitted or -)')
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _read_record(text: str | None) -> str:
    """The record from the argument, or standard input; `#` header lines are skipped."""
    raw = sys.stdin.read() if text in (None, "-") else text
    assert raw is not None
    return " ".join(line for line in raw.splitlines() if not line.lstrip().startswith("#"))


def _describe(pos: Position) -> str:
    """A human-readable board with its text form."""
    return f"{pos}\n   [{pos.fen()}]"


def run(args: argparse.Namespace) -> int:
    """Replay the record; exit 2 naming the move on an illegal record or bad variant."""
    try:
        variant = variant_from_args(args)
        game = Game.from_record(variant, _read_record(args.moves))
    except IllegalRecordError as exc:
        print(f"kalah record: illegal move {exc.index + 1} (bin {exc.token}): {exc.cause}", file=sys.stderr)
        return 2
    except KalahError as exc:
        print(f"kalah record: {exc}", file=sys.stderr)
        return 2
    pos = game.position
    if args.json:
        print(json.dumps({
            "variant": variant.text(),
            "positions": [p.fen() for p in game.positions],
            "over": pos.over,
            "result": pos.result,
            "stores": list(pos.stores),
            "to_move": pos.to_move.name.lower(),
        }))
        return 0
    print(f"{variant.text()}")
    print(_describe(game.positions[0]))
    for action, after in zip(game.actions, game.positions[1:], strict=True):
        print(f"\n{after.ply}. {action.token()}")
        print(_describe(after))
    south, north = pos.stores
    if pos.over:
        print(f"\ngame over ({pos.end}): South {south} - North {north}, result {pos.result:+d}")
    else:
        print(f"\n{pos.to_move.name.lower()} to move; stores South {south} - North {north}")
    return 0

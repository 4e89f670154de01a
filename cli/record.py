"""`kalah record`: apply a game record to a variant; print each position and the result."""

from __future__ import annotations

import argparse
import json
import sys

from cli.variant_args import add_variant_args, variant_from_args
from protocol import Game, IllegalRecordError, KalahError, Position, Variant, VariantError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah record`."""
    add_variant_args(parser)
    parser.add_argument("moves", nargs="?", default=None,
                        help='the record, e.g. "3 6 9 8" (read from standard input if omitted or -)')
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _read_record(text: str | None) -> tuple[str, dict[str, str]]:
    """The record from the argument or standard input, and its `# key: value` header lines."""
    raw = sys.stdin.read() if text in (None, "-") else text
    assert raw is not None
    headers: dict[str, str] = {}
    moves: list[str] = []
    for line in raw.splitlines():
        if line.lstrip().startswith("#"):
            key, _, value = line.lstrip("# \t").partition(":")
            headers[key.strip().lower()] = value.strip()
        else:
            moves.append(line)
    return " ".join(moves), headers


def _choose_variant(args: argparse.Namespace, headers: dict[str, str]) -> Variant:
    """The flags' variant, or the record header's when no flag chose one; a conflict is an error."""
    flagged = variant_from_args(args)
    if "variant" not in headers:
        return flagged
    stored = Variant.parse(headers["variant"])
    if flagged != Variant() and flagged != stored:
        raise VariantError(f"the record is {stored.text()} but the flags say {flagged.text()}")
    return stored


def _describe(pos: Position) -> str:
    """A human-readable board with its text form."""
    return f"{pos}\n   [{pos.fen()}]"


def run(args: argparse.Namespace) -> int:
    """Replay the record; exit 2 naming the move on an illegal record or bad variant."""
    try:
        moves, headers = _read_record(args.moves)
        variant = _choose_variant(args, headers)
        game = Game.from_record(variant, moves)
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

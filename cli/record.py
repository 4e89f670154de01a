"""`kalah record`: apply game records to a variant; print each position and the result.

The input is one record, or several as `kalah export` writes them: each game's `# key: value`
header lines then its moves, games apart by a blank line or by the next header block. A
header's `variant` chooses the rules of its game unless variant flags are given.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

from cli.server_args import CommandError
from cli.variant_args import add_variant_args, variant_from_args, variant_given
from protocol import Game, IllegalRecordError, KalahError, Position, Variant, VariantError


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah record`."""
    add_variant_args(parser)
    parser.add_argument("moves", nargs="?", default=None,
                        help='the record, e.g. "3 6 9 8" (default: read standard input, as with -)')
    parser.add_argument("--json", action="store_true", help="print one JSON object per game, one a line")


@dataclass
class Record:
    """One game of the input: its header lines (`# key: value`) and its moves."""

    headers: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """How an error names this game: its match id, else its place in the input."""
        return self.headers.get("match", "")


def read_records(raw: str) -> list[Record]:
    """The games of the input: a blank line after moves, or a header after moves, starts the next one."""
    records = [Record()]
    for line in raw.splitlines():
        text = line.strip()
        current = records[-1]
        if not text:
            if current.moves:
                records.append(Record())
        elif text.startswith("#"):
            if current.moves:
                current = Record()
                records.append(current)
            key, _, value = text.lstrip("# \t").partition(":")
            current.headers[key.strip().lower()] = value.strip()
        else:
            current.moves.append(text)
    return [r for r in records if r.moves or r.headers] or [Record()]


def _choose_variant(args: argparse.Namespace, flagged: Variant, headers: dict[str, str]) -> Variant:
    """The flags' variant, or the record header's when no flag chose one; a conflict is an error."""
    if "variant" not in headers:
        return flagged
    stored = Variant.parse(headers["variant"])
    if variant_given(args) and flagged != stored:
        raise VariantError(f"the record is {stored.text()} but the flags say {flagged.text()}")
    return stored


def _describe(pos: Position) -> str:
    """A human-readable board with its text form."""
    return f"{pos}\n   [{pos.fen()}]"


def _as_json(variant: Variant, game: Game, headers: dict[str, str]) -> str:
    """One game as one JSON line."""
    pos = game.position
    out: dict[str, object] = {"match_id": headers["match"]} if "match" in headers else {}
    out.update({"variant": variant.text(), "positions": [p.fen() for p in game.positions], "over": pos.over,
                "result": pos.result, "stores": list(pos.stores), "to_move": pos.to_move.name.lower()})
    return json.dumps(out)


def _as_text(variant: Variant, game: Game, headers: dict[str, str]) -> str:
    """One game, position by position, and how it stands at the end."""
    lines = [f"{variant.text()}" + (f"  (match {headers['match']})" if "match" in headers else ""),
             _describe(game.positions[0])]
    for action, after in zip(game.actions, game.positions[1:], strict=True):
        lines += ["", f"{after.ply}. {action.token()}", _describe(after)]
    pos = game.position
    south, north = pos.stores
    if pos.over:
        lines += ["", f"game over ({pos.end}): South {south} - North {north}, result {pos.result:+d}"]
    else:
        lines += ["", f"{pos.to_move.name.lower()} to move; stores South {south} - North {north}"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Replay every record; exit 2 naming the game and the move on an illegal record or a bad variant."""
    try:
        flagged = variant_from_args(args)
    except KalahError as exc:
        raise CommandError(str(exc)) from None
    raw = sys.stdin.read() if args.moves in (None, "-") else args.moves
    if args.moves in (None, "-") and not raw.strip():
        raise CommandError("no record on standard input")
    records = read_records(raw)
    failed = 0
    for i, record in enumerate(records):
        where = "" if len(records) == 1 else f"game {i + 1}{f' ({record.name})' if record.name else ''}: "
        try:
            variant = _choose_variant(args, flagged, record.headers)
            game = Game.from_record(variant, " ".join(record.moves))
        except IllegalRecordError as exc:
            print(f"kalah record: {where}illegal move {exc.index + 1} (bin {exc.token}): {exc.cause}", file=sys.stderr)
            failed += 1
            continue
        except KalahError as exc:
            print(f"kalah record: {where}{exc}", file=sys.stderr)
            failed += 1
            continue
        if args.json:
            print(_as_json(variant, game, record.headers))
        else:
            print(("\n" if i else "") + _as_text(variant, game, record.headers))
    return 2 if failed else 0

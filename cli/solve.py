"""`kalah solve`: the value under perfect play of a start position or of the position after a record.

Values are South's store minus North's store at the end of the game, counting what is
already in the stores. Exact for counter-clockwise sowing without relay; clockwise and
relay sowing can repeat positions, so those variants get a depth-limited search, marked
`"exact": false`. Endgame databases are cached in `$KALAH_EGDB_DIR` (default: the user
cache directory, see `bots.egdb`); missing ones are built first, after saying what and
about how long (`kalah egdb build` builds them ahead).
"""

from __future__ import annotations

import argparse
import json
import sys

from bots import egdb
from bots.solver import Engine, Solution, auto_egdb_seeds, auto_tt_bits
from cli.egdb import Reporter, describe
from cli.variant_args import add_variant_args, variant_from_args
from protocol import Game, IllegalRecordError, KalahError, Position


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah solve`."""
    add_variant_args(parser)
    parser.add_argument("--moves", default="", metavar="BINS", help='solve the position after this record, e.g. "3 6"')
    parser.add_argument("--per-move", action="store_true", help="also the exact value after each legal move")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--time-limit", type=float, default=0.0, metavar="S", help="give up after S seconds (exit 3)")
    parser.add_argument("--egdb-seeds", type=int, default=None, metavar="N",
                        help=f"endgame databases up to N seeds in play (default: sized to the board; "
                             f"cached in ${egdb.ENV_DIR} or the user cache directory)")
    parser.add_argument("--tt-bits", type=int, default=None, metavar="B",
                        help="transposition table of 2^B entries of 24 bytes (default: sized to the board)")
    parser.add_argument("--depth", type=int, default=12, help="search depth in sowings where exact play is impossible")
    parser.add_argument("--impl", choices=["c", "py"], default="c", help="search core (py: the pure-Python twin)")


def _text(position: Position, sol: Solution, exact_possible: bool) -> str:
    """The human-readable report."""
    lines = [str(position), f"to move: {position.to_move.name.lower()}"]
    kind = "exact" if sol.exact else f"bounded search, depth {sol.depth} (not exact: sowing can cycle)"
    if exact_possible and not sol.exact:
        kind = "not exact"
    lines.append(f"value: {sol.value:+d} (South - North at the end; {kind})")
    lines.append(f"best: {' '.join(map(str, sol.best)) or '-'}")
    if sol.per_move:
        lines.append("per move: " + "  ".join(f"{b}:{v:+d}" for b, v in sol.per_move.items()))
    if position.swap_offered:
        lines.append("North may swap: it should exactly when the value is above 0")
    lines.append(f"nodes: {sol.nodes:,}  seconds: {sol.seconds:.3f}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Solve and print; exit 2 on bad input, 3 when the time limit is reached."""
    try:
        variant = variant_from_args(args)
        position = Game.from_record(variant, args.moves).position
    except IllegalRecordError as exc:
        print(f"kalah solve: illegal move {exc.index + 1} ({exc.token}): {exc.cause}", file=sys.stderr)
        return 2
    except KalahError as exc:
        print(f"kalah solve: {exc}", file=sys.stderr)
        return 2
    if position.transfer_pending:
        print("kalah solve: North's opening transfer is due; give it in --moves (e.g. t- or t3-9)",
              file=sys.stderr)
        return 2
    seeds = auto_egdb_seeds(variant) if args.egdb_seeds is None else args.egdb_seeds
    tt_bits = auto_tt_bits(variant) if args.tt_bits is None else args.tt_bits
    if not 0 <= seeds <= 40 or not 8 <= tt_bits <= 30:
        print("kalah solve: --egdb-seeds must be 0..40 and --tt-bits 8..30", file=sys.stderr)
        return 2
    levels = egdb.plan(variant, seeds)
    if not args.json and not all(lv.present for lv in levels):
        print(describe(variant, levels, egdb.cache_dir()) + "\n(`kalah egdb build` builds them ahead)",
              file=sys.stderr)
    engine = Engine(variant, impl=args.impl, tt_log2=tt_bits, egdb_seeds=seeds,
                    progress=None if args.json else Reporter(levels))
    try:
        sol = engine.solve(position, per_move=args.per_move, time_limit=args.time_limit,
                           depth=-1 if engine.exact_possible else args.depth)
    except TimeoutError:
        print(f"kalah solve: time limit of {args.time_limit:g} s reached", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(sol.as_json()))
    else:
        print(_text(position, sol, engine.exact_possible))
    return 0

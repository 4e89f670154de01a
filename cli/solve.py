"""`kalah solve`: the value under perfect play of a start position, the position after a record, or any position.

Values are South's store minus North's store at the end of the game, counting what is
already in the stores. Exact for counter-clockwise sowing without relay; clockwise and
relay sowing can repeat positions, so those variants get a depth-limited search, marked
`"exact": false`. Endgame databases are cached in `$KALAH_EGDB_DIR` (default: the user
cache directory, see `bots.egdb`); missing ones are built first, after saying what and
about how long, and, when that is more than a few seconds, only with `--yes` or the user's
yes in a terminal (`kalah egdb build` builds them ahead). Ctrl-C or SIGTERM stop a solve
within a second (`cli.interrupts`). A position held by a book (`bots.book`,
`kalah book build`) is answered from it at once (`"source": "book"`), unless `--no-book`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bots import book, egdb, pie
from bots.core import pit_to_bin, relative_board, south_value
from bots.solver import Engine, Solution, auto_egdb_seeds, auto_tt_bits
from cli.egdb import Reporter, describe, duration
from cli.interrupts import run_stoppable
from cli.server_args import CommandError
from cli.variant_args import add_variant_args, variant_from_args
from protocol import Game, IllegalRecordError, KalahError, Position, Variant


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah solve`."""
    add_variant_args(parser)
    parser.add_argument("--moves", default="", metavar="BINS",
                        help='solve the position after this record, e.g. "3 6" (default: the start position)')
    parser.add_argument("--position", default=None, metavar="TEXT",
                        help="solve this position of the variant, in the notation `pits side ply flags [end]` "
                             '(docs/rules.md), e.g. "4,4,0,5,5,5,1,4,4,4,4,4,4,0 N 1 -"')
    parser.add_argument("--per-move", action="store_true", help="also the exact value after each legal move")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--time-limit", type=float, default=0.0, metavar="S",
                        help="give up after S seconds, building databases included (exit 3); databases that "
                             "would take longer are not built (default: 0, no limit)")
    parser.add_argument("--egdb-seeds", type=int, default=None, metavar="N",
                        help=f"endgame databases up to N seeds in play (default: sized to the board, or all the "
                             f"levels already built if more; cached in ${egdb.ENV_DIR} or the user cache directory)")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="search threads, 1..64 (default: one per core)")
    parser.add_argument("--tt-bits", type=int, default=None, metavar="B",
                        help="transposition table of 2^B entries of 24 bytes (default: sized to the board)")
    parser.add_argument("--depth", type=int, default=12, help="search depth in sowings where exact play is impossible")
    parser.add_argument("--impl", choices=["c", "py"], default="c", help="search core (py: the pure-Python twin)")
    parser.add_argument("--yes", action="store_true",
                        help=f"build the databases the solve wants even when that takes more than {CONFIRM_S:g} s "
                             "(in a terminal, you are asked)")
    parser.add_argument("--no-book", action="store_true",
                        help="search even when a book holds the position (`kalah book`: proved once, then instant)")


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
    origin = "  (from the book)" if sol.source == "book" else ""
    lines.append(f"nodes: {sol.nodes:,}  seconds: {sol.seconds:.3f}{origin}")
    return "\n".join(lines)


CONFIRM_S = 5.0
"""A database build estimated longer than this is asked for first (in a terminal) or needs `--yes`."""


def _databases(args: argparse.Namespace, variant: Variant, seeds: int) -> bool:
    """Print the plan of the databases missing; whether to build them: not past the time limit, and past
    `CONFIRM_S` only with `--yes` or the user's yes in a terminal (elsewhere a refusal naming `--yes`)."""
    levels = egdb.plan(variant, seeds)
    missing = sum(lv.size for lv in levels if not lv.present)
    if not missing:
        return True
    print(describe(variant, levels, egdb.cache_dir()), file=sys.stderr)
    hint = egdb.build_command(variant, seeds)
    present = next((lv.k - 1 for lv in levels if not lv.present), len(levels))
    seconds = egdb.build_seconds(missing)
    if args.time_limit and seconds > args.time_limit:
        print(f"not building them: that takes longer than --time-limit {args.time_limit:g} s; solving with the "
              f"{present} levels on disk (`{hint}` builds them ahead)", file=sys.stderr, flush=True)
        return False
    if seconds > CONFIRM_S and not args.yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise CommandError(f"building these databases takes about {duration(seconds)}: add --yes to build them "
                               f"first, or --egdb-seeds {present} to solve with the levels on disk (`{hint}` "
                               f"builds them ahead)")
        print(f"build them now (about {duration(seconds)})? [y/N] ", end="", file=sys.stderr, flush=True)
        try:
            answer = input()
        except EOFError:  # Ctrl-D: no
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print(f"not building them: solving with the {present} levels on disk (`{hint}` builds them ahead)",
                  file=sys.stderr, flush=True)
            return False
    print(f"building them first, counted in the time limit (`{hint}` builds them ahead)", file=sys.stderr,
          flush=True)
    return True


def from_book(position: Position, per_move: bool) -> Solution | None:
    """The position's solution from a book (`bots.book`), if one holds it with what was asked; else None."""
    if position.over or not egdb.applies(position.variant):
        return None
    found = book.load(position.variant)
    entry = found.get(relative_board(position)) if found is not None else None
    if entry is None or (per_move and entry.per_move is None):
        return None
    if entry.per_move is None:
        best, values = [pit_to_bin(position, entry.pit)], {}
    else:
        values = {pit_to_bin(position, p): south_value(position, v)
                  for p, v in enumerate(entry.per_move) if v is not None}
        best = [pit_to_bin(position, p) for p, v in enumerate(entry.per_move) if v == entry.value]
    return Solution(south_value(position, entry.value), best, values if per_move else {}, source="book")


def start_position(variant: Variant, moves: str, text: str | None) -> Position:
    """The position to solve: `text` in the position notation, else the one after the record `moves`.

    A position text must be one some game of the variant can reach (`Position.check_possible`):
    its pit count, its seed total, an empty row marked ended, flags of the variant's rules.
    """
    if text is None:
        return Game.from_record(variant, moves).position
    if moves.strip():
        raise CommandError("give --moves or --position, not both")
    return Position.from_fen(variant, text).check_possible()


def _valued(sol: Solution) -> tuple[int, bool]:
    """A board's value for `bots.pie`: South's margin and whether it is exact."""
    return sol.value, sol.exact


def _pie_best(choice: pie.PieChoice) -> list[int]:
    """Every sowing that keeps the opener at its best under the pie rule."""
    return [b for b, line in choice.per_move.items() if line.opener == choice.line.opener]


def _pie_json(choice: pie.PieChoice) -> dict[str, object]:
    """The `pie` object of `--json` in the opener's first turn under the pie rule."""
    return {"opener": choice.line.opener, "best": _pie_best(choice), "exact": choice.exact,
            "per_move": {str(b): line.opener for b, line in choice.per_move.items()}}


def _pie_text(choice: pie.PieChoice, per_move: bool) -> str:
    """The report's lines on the opener's first turn under the pie rule."""
    lines = [f"pie rule: North may swap after this turn, so the opener ends with {choice.line.opener:+d} at best "
             f"(best: {' '.join(map(str, _pie_best(choice)))}; the board offered to North is worth "
             f"{choice.line.south:+d} to South)"]
    if per_move:
        lines.append("pie per move: " + "  ".join(f"{b}:{line.opener:+d}" for b, line in choice.per_move.items()))
    return "\n" + "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Solve and print; exit 2 on bad input, 3 when the time limit is reached (building databases included)."""
    started = time.monotonic()
    if not all((args.egdb_seeds is None or 0 <= args.egdb_seeds <= 40, args.tt_bits is None or 8 <= args.tt_bits <= 30,
                args.threads is None or 1 <= args.threads <= 64, args.time_limit >= 0)):
        raise CommandError("--egdb-seeds must be 0..40, --tt-bits 8..30, --threads 1..64 and --time-limit at least 0")
    try:
        variant = variant_from_args(args)
        position = start_position(variant, args.moves, args.position)
    except IllegalRecordError as exc:
        raise CommandError(f"illegal move {exc.index + 1} ({exc.token}): {exc.cause}") from None
    except KalahError as exc:
        raise CommandError(str(exc)) from None
    if position.transfer_pending:
        raise CommandError("North's opening transfer is due; give it in --moves (e.g. t- or t3-9)")
    found = None if args.no_book else from_book(position, args.per_move)
    opening = pie.in_first_turn(position)
    if found is not None and not opening:
        print(json.dumps(found.as_json()) if args.json else _text(position, found, True))
        return 0
    seeds = args.egdb_seeds
    if seeds is None:
        on_disk = min(egdb.present_seeds(variant), variant.total_seeds - 2 * variant.houses)
        seeds = max(auto_egdb_seeds(variant), on_disk)
    tt_bits = auto_tt_bits(variant, per_move=args.per_move) if args.tt_bits is None else args.tt_bits
    engines: list[Engine] = []
    build = True
    if not position.over and (found is None or any(args.no_book or from_book(board, False) is None
                                                   for board in pie.first_turn_boards(position))):
        build = _databases(args, variant, seeds)  # asked here, in the main thread, before any work starts
    deadline = started + args.time_limit if args.time_limit else 0.0

    def engine() -> Engine:
        """The search engine, made on first need (building the databases it lacks first, as decided)."""
        if not engines:
            engines.append(Engine(variant, impl=args.impl, tt_log2=tt_bits, egdb_seeds=seeds, build_egdb=build,
                                  progress=Reporter(egdb.plan(variant, seeds)) if build else None,
                                  workers=args.threads))
        return engines[0]

    def solve(target: Position, per_move: bool) -> Solution:
        """`target` from the book, else by the engine in the time left (TimeoutError when there is none)."""
        known = None if args.no_book else from_book(target, per_move)
        if known is not None:
            return known
        if target.over:
            return Solution(int(target.margin), [], {}, 0, 0.0, True)
        searcher = engine()
        left = deadline - time.monotonic() if deadline else 0.0
        if deadline and left <= 0:
            raise TimeoutError
        return searcher.solve(target, per_move=per_move, time_limit=left,
                              depth=-1 if searcher.exact_possible else args.depth)

    def work() -> tuple[Solution, pie.PieChoice | None]:
        """The position's solution, and the opener's pie choice when North may swap after this turn."""
        sol = found or solve(position, args.per_move)
        choice = pie.choose(position, lambda after, _left: _valued(solve(after, False))) if opening else None
        return sol, choice

    try:
        sol, choice = run_stoppable(work, "kalah solve")
    except TimeoutError:
        raise CommandError(f"time limit of {args.time_limit:g} s reached", status=3) from None
    except egdb.LevelFileError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(sol.as_json() | ({"pie": _pie_json(choice)} if choice else {})))
    else:
        exact_possible = engines[0].exact_possible if engines else True
        print(_text(position, sol, exact_possible) + (_pie_text(choice, args.per_move) if choice else ""))
    return 0

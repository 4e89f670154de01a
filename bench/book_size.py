"""How big a complete book of a start is, before building it: Knuth's estimate of a tree's size by random paths.

Run: `python bench/book_size.py -H 6 -s 5 [--capture empty] --check-egdb-seeds 28,30 [--paths 100] [--seed 1]
[--node-limit 2000000]`. A full walk (`kalah book build` without `--keep`, `bots.book_builder`) looks at every position
where the player is to move, sitting either side, after every answer of the opponent, until a position is proved from
an empty table within the node limit (easy, left to the board); a position that is not (hard) is proved and goes in
the book, and the walk goes on after the player's move. Each path here starts at the start (even paths) or after a
random first turn (odd paths: the player sits second), and goes on while the position is hard: the player's turn by
its best move as a depth-limited search guesses it (a full proof would cost what the build costs), then a random
answer of the opponent. The weight of a position is the product of the numbers of answers met on the way; the mean
over paths of the weights of the hard positions (of the easy ones) estimates how many hard (easy) positions the walk
meets, without the merging of transpositions. Rare deep paths carry most of a walk's size, so a few hundred paths
mostly miss them and the estimate comes out low (2.6 times on Kalah(6,4), 6.7 on Kalah(6,5) standard:
docs/benchmarks.md, "How big a complete book is"): compare level sets by it, not sizes. Each level set starts
from the same `--seed`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from dataclasses import dataclass, field

from bots import egdb
from bots.book import Book
from bots.book_builder import Board, Builder, Plan
from bots.inventory import BOOK_NODE_LIMIT
from bots.solver import Engine, relative_board
from protocol import Capture, Position, Variant


@dataclass
class RandomPath:
    """One random path: each position's seeds in play, whether it is easy, and its weight."""

    steps: list[tuple[int, bool, int]] = field(default_factory=list)

    def weight(self, easy: bool) -> int:
        """The sum of the weights of the path's easy (or hard) positions."""
        return sum(w for _, e, w in self.steps if e is easy)


def player_turn(engine: Engine, board: Board) -> Board | None:
    """The position after the player's turn by guessed best moves (None if the game ends in it)."""
    while True:
        kids = engine.children(board)
        values = engine.guesses([kid[1:] for kid in kids])
        _, after, _, extra, over = kids[max(range(len(kids)), key=values.__getitem__)]
        if over:
            return None
        if not extra:
            return after
        board = after


def walk(builder: Builder, engine: Engine, rng: random.Random, second: bool) -> RandomPath:
    """One path from the start, the player sitting first, or `second`."""
    path = RandomPath()
    board = relative_board(Position.initial(engine.variant))
    weight = 1
    if second:
        answers = builder.replies(board)
        weight, board = len(answers), rng.choice(answers)
    while True:
        seeds = sum(board[: engine.rules.h]) + sum(board[engine.rules.h + 1: -1])
        easy = builder.easy(board) is not None
        path.steps.append((seeds, easy, weight))
        if easy:
            return path
        after = player_turn(engine, board)
        answers = builder.replies(after) if after is not None else []
        if not answers:
            return path
        weight *= len(answers)
        board = rng.choice(answers)


def estimate(variant: Variant, check: int, paths: int, seed: int, node_limit: int) -> None:
    """Print the estimate for databases up to `check` seeds."""
    engine = Engine(variant, tt_log2=22, egdb_seeds=check, workers=1, build_egdb=False)
    if (len(engine.levels) - 1 if engine.levels else 0) < check:
        raise SystemExit(f"databases up to {check} seeds are missing in {egdb.cache_dir()}: "
                         f"`kalah egdb build --seeds {check}` makes them")
    builder = Builder(engine, Book(egdb.rule_key(variant)), Plan(node_limit=node_limit))
    rng = random.Random(seed)
    t0 = time.monotonic()
    walked = [walk(builder, engine, rng, i % 2 == 1) for i in range(paths)]
    for easy, what in ((False, "hard (proved into the book)"), (True, "easy (left to the board)")):
        weights = [p.weight(easy) for p in walked]
        error = statistics.stdev(weights) / len(weights) ** 0.5 if len(weights) > 1 else 0.0
        print(f"  {what}: {statistics.mean(weights):,.0f} ± {error:,.0f} positions")
    depths = [len(p.steps) for p in walked]
    print(f"  {paths} paths in {time.monotonic() - t0:.0f} s; hard positions a path: median "
          f"{statistics.median(depths) - 1:.0f}, at most {max(depths) - 1}")


def main() -> None:
    """Parse the arguments and print an estimate per database level set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--houses", type=int, default=6)
    parser.add_argument("-s", "--seeds", type=int, default=5)
    parser.add_argument("--capture", choices=[c.value for c in Capture], default=Capture.STANDARD.value)
    parser.add_argument("--check-egdb-seeds", default="28,30", metavar="N,M", help="database level sets to compare")
    parser.add_argument("--paths", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--node-limit", type=int, default=BOOK_NODE_LIMIT, metavar="N")
    args = parser.parse_args()
    variant = Variant(houses=args.houses, seeds=args.seeds, capture=Capture(args.capture))
    for check in (int(s) for s in args.check_egdb_seeds.split(",")):
        print(f"{variant.text()}, databases up to {check} seeds, node limit {args.node_limit:,}:", flush=True)
        estimate(variant, check, args.paths, args.seed, args.node_limit)


if __name__ == "__main__":
    main()

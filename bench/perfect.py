"""The perfect bot's games as a server hosts it: how each of its moves was found and (judged) whether it kept the value.

Run: `python bench/solver.py --perfect [--seeds N] [--captures standard,empty] [--book-dir DIR ...]
[--egdb-seeds S] [--rounds R] [--opponents ...] [--budget 1] [--judge [--judge-seeds S] [--judge-tt-bits B]
[--judge-nodes N] [--judge-limit SECONDS]]`. For Kalah(6,N) of each rule set, the bot (the shipped books and those of
`--book-dir`, databases up to `--egdb-seeds` opened as a server opens them) plays itself once and each opponent
`--rounds` times, seats alternating (South first). Per opponent and seat: South's margins, how many of the bot's moves
came from the book, were proved at the board, were forced (one legal sowing) or were not proved, where those not
proved were (ply, seeds in play) and the slowest move (seconds, ply, position).

`--judge` checks that every move of the bot keeps its position's value (the value after the sowing, with what it won,
is the position's): a forced move does by definition and a move proved at the board by its proof; a book move against
the book's own value, the value after it taken from the book (one ply on, the mover's answers mostly are), or by a
solve within `--judge-nodes` nodes, or else a full solve; a move not proved by full solves of the position and of the
one after it, each within `--judge-limit` seconds (one that runs out leaves the move not judged, said so). The judge
is one engine with the databases on disk up to `--judge-seeds` and a table of 2**`--judge-tt-bits` entries, kept
across the checks; each full solve's seconds are printed (they depend on the machine's load, the counts do not).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bots import book as book_mod
from bots import egdb
from bots.book import Book, house_key
from bots.core import Player, mover_value
from bots.engines import HOSTED_THREADS, Engines
from bots.players import Decision, PerfectPlayer, RandomPlayer, StrongPlayer, make_player
from bots.solver import Engine, relative_board
from protocol import Capture, Position, Sow, Variant

SOURCES = ("book", "proof", "forced", "keep", "not proved")
"""How a move of the bot was found, as counted: from the book, proved at the board, the one legal sowing, proved to keep
the game's value (not proved best), not proved."""
SELF = "perfect"


@dataclass(frozen=True)
class Move:
    """One move of the bot: the position it faced and its decision."""

    position: Position
    decision: Decision

    @property
    def source(self) -> str:
        """`book`, `proof`, `forced`, `keep` or `not proved`."""
        return self.decision.source if self.decision.exact or self.decision.source == "keep" else "not proved"

    def where(self) -> str:
        """The ply (1: the game's first sowing) and the seeds in play."""
        return f"ply {self.position.ply + 1} ({sum(house_key(relative_board(self.position)))} seeds)"


@dataclass
class Game:
    """A game from the start: South's final margin and the bot's moves."""

    margin: int
    moves: list[Move]


def play(bot: PerfectPlayer, other: Player | None, variant: Variant, seat: int, budget: float) -> Game:
    """A game from the start with the bot in `seat` (0: South, 1: North) against `other`, or on both sides (None)."""
    pos = Position.initial(variant)
    moves: list[Move] = []
    while not pos.over:
        if other is not None and pos.to_move != seat:
            pos = pos.apply(other.decide(pos, budget))
            continue
        decision = bot.explain(pos, budget)
        moves.append(Move(pos, decision))
        pos = pos.apply(decision.action)
    return Game(int(pos.margin), moves)


@dataclass(frozen=True)
class Verdict:
    """Whether a move keeps its position's value (None: not judged in time), how that was found, and the values."""

    keeps: bool | None
    how: str
    want: int | None = None
    """The position's value for the mover."""
    got: int | None = None
    """The move's value for the mover: what the sowing won and the value of the position after it."""
    seconds: float = 0.0
    """Seconds of the full solves the verdict took (0: none)."""


class Judge:
    """Checks that a move keeps its position's value (module docstring): the book, small solves, else full ones.

    With `game` (South's final margin under perfect play from the start), the check is the goal's instead: that
    the move keeps the game's value (as South never below it, as North never above it). A move that keeps its
    position's value (forced, proved, the book's) does so when the bot's moves before it did (the position then
    holds at least the game's value for the bot); any other is checked by one proof at the game's value."""

    def __init__(self, engine: Engine, book: Book | None, node_limit: int = 2_000_000,
                 time_limit: float = 900.0, game: int | None = None) -> None:
        self.engine = engine
        self.book = book
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.game = game

    def check(self, move: Move) -> Verdict:
        """The verdict on one move of the bot (`SystemExit` if it is not a sowing: these games have none)."""
        action, source = move.decision.action, move.source
        if not isinstance(action, Sow):
            raise SystemExit(f"{action} at {move.position.fen()}: only sowings are judged")
        if source == "forced":
            return Verdict(True, "forced")
        if source == "proof":
            return Verdict(True, "its proof")
        board = relative_board(move.position)
        h = move.position.variant.houses
        pit = action.bin - 1 if action.bin <= h else action.bin - h - 2
        if self.game is not None:
            if source == "book":
                verdict = self._position_verdict(move, board, pit)
                if verdict.keeps:
                    return verdict
            return self._game_verdict(move.position, board, pit)
        return self._position_verdict(move, board, pit)

    def _game_verdict(self, position: Position, board: tuple[int, ...], pit: int) -> Verdict:
        """Whether sowing `pit` keeps the game's value for the mover, by one proof at it."""
        assert self.game is not None
        need = mover_value(position, self.game)
        t0 = time.monotonic()
        try:
            keeps = self.engine.reaches(board, pit, need, t0 + self.time_limit)
        except TimeoutError:
            return Verdict(None, f"the proof at the game's value ran past {self.time_limit:g} s",
                           seconds=time.monotonic() - t0)
        return Verdict(keeps, "a proof at the game's value", need, need if keeps else need - 1,
                       time.monotonic() - t0)

    def _position_verdict(self, move: Move, board: tuple[int, ...], pit: int) -> Verdict:
        """Whether sowing `pit` keeps the position's value (module docstring)."""
        source = move.source
        t0 = time.monotonic()
        entry = self.book.get(board) if self.book is not None and source == "book" else None
        try:
            want, how = (entry.value, "the book") if entry is not None else self.value(board)
            got, how_after = self.move_value(board, pit)
        except TimeoutError:
            return Verdict(None, f"a solve ran past {self.time_limit:g} s", seconds=time.monotonic() - t0)
        full = "solve" in (how, how_after)
        return Verdict(want == got, f"{how}, after it {how_after}", want, got, time.monotonic() - t0 if full else 0.0)

    def move_value(self, board: tuple[int, ...], pit: int) -> tuple[int, str]:
        """The mover's value of sowing `pit`, and how the value after it was found."""
        after, gain, extra, over = self.engine.module.play(self.engine.rules, board, pit)
        if over:
            return gain, "the game's end"
        v, how = self.value(after)
        return gain + (v if extra else -v), how

    def value(self, board: tuple[int, ...]) -> tuple[int, str]:
        """A non-terminal board's value for its mover and how it was found: the book, a small solve, one ply of
        those, else a full solve (`TimeoutError` past the time limit)."""
        cheap = self._cheap(board)
        if cheap is not None:
            return cheap
        values = []
        for _, after, gain, extra, over in self.engine.children(board):
            found = None if over else self._cheap(after)
            if not over and found is None:
                break
            values.append(gain if found is None else gain + (found[0] if extra else -found[0]))
        else:
            return max(values), "one ply on the book and small solves"
        return self._solve(board, 0, time.monotonic() + self.time_limit), "solve"

    def _cheap(self, board: tuple[int, ...]) -> tuple[int, str] | None:
        """The board's value from the book or a solve within the node limit; None if neither has it."""
        entry = self.book.get(board) if self.book is not None else None
        if entry is not None:
            return entry.value, "the book"
        try:
            return self._solve(board, self.node_limit, 0.0), "a small solve"
        except TimeoutError:
            return None

    def _solve(self, board: tuple[int, ...], node_limit: int, deadline: float) -> int:
        """The board's exact value (MTD(f) from a guess when far from the databases), within the limits."""
        e = self.engine
        with e.lock:
            guess = e.guesses([(board, 0, True, False)], deadline)[0] if not node_limit and e.far(board) else 0
            e.node_stop = int(e.searcher.nodes) + node_limit if node_limit else 0
            try:
                return e.mtdf(board, guess, -1, deadline, threads=e.workers)
            finally:
                e.node_stop = 0


@dataclass
class Tally:
    """The bot's games against one opponent in one seat: margins, moves by source, the slowest, the verdicts."""

    margins: list[int] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    verdicts: list[tuple[Move, Verdict]] = field(default_factory=list)

    def add(self, game: Game, judge: Judge | None) -> None:
        """Count a game (and judge each of the bot's moves)."""
        self.margins.append(game.margin)
        self.moves += game.moves
        if judge is not None:
            self.verdicts += [(move, judge.check(move)) for move in game.moves]

    def sources(self) -> Counter[str]:
        """The bot's moves by how they were found."""
        return Counter(move.source for move in self.moves)

    def slowest(self) -> Move | None:
        """The move the bot took longest over."""
        return max(self.moves, key=lambda m: m.decision.seconds, default=None)

    def lost(self) -> list[tuple[Move, Verdict]]:
        """The judged moves that gave value away."""
        return [(m, v) for m, v in self.verdicts if v.keeps is False]

    def lines(self) -> list[str]:
        """The tally as printed: the games' line, where the moves not proved were, and the judge's findings."""
        count = self.sources()
        slow = self.slowest()
        out = [f"South {' '.join(f'{m:+d}' for m in self.margins)}; {len(self.moves)} moves: "
               + ", ".join(f"{source} {count[source]}" for source in SOURCES)
               + (f"; slowest {slow.decision.seconds:.2f} s at {slow.where()} {slow.position.fen()}" if slow else "")]
        unproved = [m for m in self.moves if m.source == "not proved"]
        if unproved:
            out.append("  not proved: " + ", ".join(m.where() for m in unproved))
        if self.verdicts:
            unjudged = sum(v.keeps is None for _, v in self.verdicts)
            solves = [f"{m.where()} {v.seconds:.0f} s" for m, v in self.verdicts if v.seconds]
            out.append(f"  judged: {len(self.verdicts) - len(self.lost()) - unjudged} kept the value, "
                       f"{len(self.lost())} lost value, {unjudged} not judged"
                       + (f"; full solves: {', '.join(solves)}" if solves else ""))
            out += [f"  LOST at {m.where()} {m.position.fen()}: {m.decision.action} is worth "
                    + (f"less than {v.want:+d} to the mover, which keeps the game's value ({v.how})"
                       if v.how == "a proof at the game's value" else
                       f"{v.got:+d} to the mover, the position {v.want:+d} ({v.how})") for m, v in self.lost()]
            out += [f"  not judged at {m.where()}: {v.how}" for m, v in self.verdicts if v.keeps is None]
        return out


def run_variant(variant: Variant, engines: Engines, seeds: int, budget: float, opponents: list[str], rounds: int,
                judge: Judge | None) -> dict[tuple[str, str], Tally]:
    """The bot against itself once and each opponent `rounds` times (seats alternating), printed as they end."""
    bot = PerfectPlayer(egdb_seeds=seeds, engines=engines)
    tallies: dict[tuple[str, str], Tally] = {}
    for opponent in [SELF, *opponents]:
        for game in range(1 if opponent == SELF else rounds):
            seat = game % 2
            other: Player | None = None
            if opponent == "random":
                other = RandomPlayer(seed=game, engines=engines)
            elif opponent != SELF:
                other = make_player(opponent, engines)
                if isinstance(other, StrongPlayer):
                    other.egdb_seeds = seeds  # the server's bots share one database setting
            where = "both seats" if other is None else ("South", "North")[seat]
            t0 = time.monotonic()
            result = play(bot, other, variant, seat, budget)
            played = time.monotonic() - t0
            tallies.setdefault((opponent, where), Tally()).add(result, judge)
            print(f"  vs {opponent} ({where}), game {game + 1}: South {result.margin:+d}, played in {played:.0f} s"
                  + (f", judged in {time.monotonic() - t0 - played:.0f} s" if judge else ""), flush=True)
        for (name, where), tally in tallies.items():
            if name == opponent:
                print(f"  vs {opponent:<11} {where:<10} " + "\n  ".join(tally.lines()), flush=True)
    return tallies


def summary(variant: Variant, tallies: dict[tuple[str, str], Tally], game: bool = False) -> str:
    """One line for a rule set: games, the bot's moves by source, the slowest move, the judge's findings (`game`: by
    the game's value)."""
    every = Tally()
    for tally in tallies.values():
        every.margins += tally.margins
        every.moves += tally.moves
        every.verdicts += tally.verdicts
    count = every.sources()
    slow = every.slowest()
    line = (f"summary {variant.text()}: {len(every.margins)} games, {len(every.moves)} moves of the bot: "
            + ", ".join(f"{source} {count[source]}" for source in SOURCES)
            + (f"; slowest {slow.decision.seconds:.2f} s at {slow.where()}" if slow else ""))
    if every.verdicts:
        lost, unjudged = len(every.lost()), sum(v.keeps is None for _, v in every.verdicts)
        line += (f"; judged: {'PERFECT, every move kept the value' if not lost and not unjudged else ''}"
                 f"{' of the game' if not lost and not unjudged and game else ''}"
                 f"{f'{lost} moves lost value' if lost else ''}{', ' if lost and unjudged else ''}"
                 f"{f'{unjudged} not judged in time' if unjudged else ''}")
    return line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `--perfect` (`--egdb-seeds` is the bench's own: the bot's databases)."""
    parser.add_argument("--seeds", type=int, default=4, help="for --perfect: Kalah(6,N), N seeds a house")
    parser.add_argument("--book-dir", type=Path, action="append", default=[],
                        help="for --perfect: a directory of books the bot reads besides the shipped ones (repeatable)")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds a move for --perfect")
    parser.add_argument("--opponents", default="random,greedy,alphabeta:8,strong", help="bots for --perfect")
    parser.add_argument("--rounds", type=int, default=4,
                        help="games against each opponent for --perfect, seats alternating (South first)")
    parser.add_argument("--captures", default="standard,empty", help="the rule sets of --perfect")
    parser.add_argument("--judge", action="store_true",
                        help="for --perfect: check that each move of the bot keeps the value (databases on disk)")
    parser.add_argument("--judge-by", choices=("game", "position"), default="game",
                        help="for --judge: each move keeps the game's value (the goal), or its position's (stricter)")
    parser.add_argument("--judge-seeds", type=int, default=None,
                        help="for --judge: the judge's databases up to this many seeds (default: all on disk)")
    parser.add_argument("--judge-tt-bits", type=int, default=24, help="for --judge: log2 of the judge's table entries")
    parser.add_argument("--judge-nodes", type=int, default=2_000_000,
                        help="for --judge: a solve within this many nodes is tried before a full one")
    parser.add_argument("--judge-limit", type=float, default=900.0,
                        help="for --judge: seconds a full solve may take (past them the move is not judged)")


def run(args: argparse.Namespace) -> None:
    """`--perfect`: each rule set's games, tallies and summary line."""
    lines = []
    for capture in args.captures.split(","):
        variant = Variant(seeds=args.seeds, capture=Capture(capture))
        dirs = [book_mod.PACKAGE_DIR, *args.book_dir] if args.book_dir else None
        engines = Engines(book_dirs=dirs, threads=HOSTED_THREADS)  # as a server hosts its bots
        t0 = time.perf_counter()
        engines.preload(variant, args.egdb_seeds, timeout=600)
        book = engines.book(variant)
        start = book.get(relative_board(Position.initial(variant))) if book is not None else None
        print(f"{variant.text()}: databases up to {args.egdb_seeds} seeds ({egdb.present_seeds(variant)} on disk in "
              f"{egdb.cache_dir()}) opened in {time.perf_counter() - t0:.1f} s; book of {len(book or [])} positions"
              + (f" (the game's value {start.value:+d})" if start else "") + f", {args.budget:g} s a move", flush=True)
        judge = None
        if args.judge:
            levels = egdb.present_seeds(variant) if args.judge_seeds is None else args.judge_seeds
            engine = Engine(variant, tt_log2=args.judge_tt_bits, egdb_seeds=levels, build_egdb=False)
            game = None
            if args.judge_by == "game":  # the book's value of the start, else the judge's own
                game = start.value if start is not None else engine.solve(Position.initial(variant)).value
            judge = Judge(engine, book, args.judge_nodes, args.judge_limit, game)
            print(f"  judge: databases up to {len(judge.engine.levels) - 1 if judge.engine.levels else 0} seeds, "
                  f"table 2^{args.judge_tt_bits}, {judge.engine.workers} threads, each move by "
                  + ("the game's value" if game is not None else "its position's value"), flush=True)
        tallies = run_variant(variant, engines, args.egdb_seeds, args.budget, args.opponents.split(","),
                              args.rounds, judge)
        lines.append(summary(variant, tallies, judge is not None and judge.game is not None))
        print(f"  engines made for the bots: {engines.made}", flush=True)
    print("\n".join(lines))

"""Puzzles with proved answers: positions where exactly one move keeps the value under perfect play.

A candidate position (from a stored game's review, where a move lost seeds, or from bots' self-play)
becomes a puzzle when the solver proves every legal move's value (`Engine.solve(per_move=True)`,
exact, within a time limit) and exactly one move keeps the position's value while every other loses
at least `threshold` seeds (by default a review's mistake: a 24th of the seeds, at least 2). The
answer's line (best play for both sides after it) and each wrong move's refutation are proved too,
up to `LINE_PLIES` and `REFUTATION_PLIES` moves or the game's end. Anything not proved in time is
dropped: no puzzle holds an estimate. Under the pie rule North's swap decision is a puzzle too (the
swap against each sowing, seen from the chooser's seat); the opener's first turn and the opening
transfer are not (their worth is not one board's), as in a review.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bots.review import judged, replay, thresholds
from bots.solver import Engine, auto_tt_bits
from protocol.actions import Sow, Transfer, parse_action
from protocol.game import Game
from protocol.position import Position, Side
from protocol.puzzle_messages import PuzzleInfo, PuzzleMove, PuzzleSource, Theme
from protocol.review_messages import GameReview
from protocol.variant import Variant

LINE_PLIES = 8
"""The most moves of the answer's proved line (fewer when the game ends first)."""
REFUTATION_PLIES = 4
"""The most moves of a wrong move's proved refutation."""
SELF_PLAY_RANDOM = 0.35
"""How often a self-play bot plays a random move instead of its shallow search's (so that it errs)."""
SELF_PLAY_DEPTH = 3
SELF_PLAY_MAX_PLIES = 400


class UnprovableVariantError(ValueError):
    """A variant whose sowing can cycle: its values are not proved here, so it has no puzzles."""


@dataclass(frozen=True)
class Candidate:
    """A position that may be a puzzle, and where it came from."""

    position: Position
    source: PuzzleSource
    match_id: str | None = None
    ply: int | None = None


def puzzle_id(position: Position) -> str:
    """A puzzle's id: a digest of the variant and the board with its side to move (the same board is one puzzle)."""
    key = f"{position.variant.text()}|{','.join(map(str, position.pits))}|{position.to_move.letter}"
    return "z" + hashlib.sha256(key.encode()).hexdigest()[:15]


def playable(position: Position) -> bool:
    """Whether a position can hold a puzzle: a sowing with a choice and no transfer, or North's swap decision (not
    the opener's first turn under the pie rule, whose worth is not one board's)."""
    return (judged(position) and len(position.legal_bins()) >= 2) or (position.swap_offered and not position.over)


def outcome(position: Position, action: str, south_value: int) -> int:
    """The final margin of whoever chooses `action` at `position`, from South's final margin after it: the mover's
    side's, but after a swap the chooser holds South's side (the board stands, the seats exchange)."""
    if action == "swap" or position.to_move == Side.SOUTH:
        return south_value
    return -south_value


def default_threshold(variant: Variant) -> int:
    """The fewest seeds every other move must lose: a review's mistake (a 24th of the seeds, at least 2)."""
    return thresholds(variant).mistake


def make_engine(variant: Variant, egdb_seeds: int | None = None) -> Engine:
    """An engine on one thread for puzzles: the endgame databases already on disk (none built), else `egdb_seeds`."""
    from bots import egdb

    if variant.can_repeat:
        raise UnprovableVariantError(f"{variant.text()} can repeat positions: its values are not proved, so it has "
                                     "no puzzles (choose counter-clockwise sowing without relay)")
    if egdb_seeds is None:
        egdb_seeds = min(egdb.present_seeds(variant), max(0, variant.total_seeds - 2 * variant.houses)) \
            if egdb.applies(variant) else 0
    return Engine(variant, tt_log2=auto_tt_bits(variant), egdb_seeds=egdb_seeds, build_egdb=False, workers=1)


class Prover:
    """Proved values of positions of one variant, each search within `time_limit_s` and none past `deadline`
    (`time.monotonic()`; None when not proved)."""

    def __init__(self, engine: Engine, time_limit_s: float = 5.0, deadline: float | None = None) -> None:
        self.engine = engine
        self.time_limit_s = time_limit_s
        self.deadline = deadline

    def _limit(self) -> float | None:
        """The seconds the next search may take (None: none left before the deadline)."""
        if self.deadline is None:
            return self.time_limit_s
        left = self.deadline - time.monotonic()
        return min(self.time_limit_s, left) if left > 0.001 else None

    def per_move(self, position: Position) -> dict[int, int] | None:
        """South's proved final margin after each legal sowing, by bin; None if any is not proved in time."""
        limit = self._limit()
        if limit is None:
            return None
        try:
            solution = self.engine.solve(position, per_move=True, time_limit=limit)
        except TimeoutError:
            return None
        if not solution.exact or len(solution.per_move) != len(position.legal_bins()):
            return None
        return solution.per_move

    def best(self, position: Position) -> int | None:
        """A proved best bin of a sowing position (the lowest of equals), None if not proved in time."""
        limit = self._limit()
        if limit is None:
            return None
        try:
            solution = self.engine.solve(position, time_limit=limit)
        except TimeoutError:
            return None
        return min(solution.best) if solution.exact and solution.best else None

    def line(self, position: Position, plies: int) -> list[str] | None:
        """Proved best play from `position` for up to `plies` moves or the game's end; None if a move is not
        proved in time."""
        out: list[str] = []
        while len(out) < plies and not position.over and not position.transfer_pending \
                and not position.swap_offered:
            bin_number = self.best(position)
            if bin_number is None:
                return None
            out.append(str(bin_number))
            position = position.play(bin_number)
        return out


def themes(position: Position, answer: str, line: list[str]) -> list[Theme]:
    """What the puzzle turns on, read from the position, its answer and the answer's line."""
    found: list[Theme] = []
    if position.swap_offered:
        found.append("pie")
    else:
        after, event = position.apply_event(Sow(int(answer)))
        if event.capture is not None:
            found.append("capture")
        if event.extra_turn:
            found.append("extra_turn")
            chain, board = 1, after
            for token in line:
                if board.over or board.to_move != position.to_move:
                    break
                board, step = board.apply_event(Sow(int(token)))
                if not step.extra_turn:
                    break
                chain += 1
            if chain >= 2:
                found.append("chain")
    houses = sum(position.pits) - sum(position.stores)
    if 3 * houses <= position.variant.total_seeds:
        found.append("endgame")
    if position.ply < position.variant.houses:
        found.append("opening")
    return found


def examine(prover: Prover, candidate: Candidate, threshold: int | None = None) -> PuzzleInfo | None:
    """The puzzle at a candidate position, if exactly one move keeps the proved value for whoever chooses and every
    other loses at least `threshold` seeds, with every value and line proved; else None.

    At North's swap decision the moves are the swap and each sowing: after a swap the board stands with North to
    move and the chooser holds South's side, so the swap is worth the board's value (the least of the sowings'
    South values) to the chooser, and a sowing the negation of its South value."""
    position = candidate.position
    if not playable(position):
        return None
    limit = default_threshold(position.variant) if threshold is None else threshold
    sowings = prover.per_move(position)
    if sowings is None:
        return None
    values = {str(b): v for b, v in sowings.items()}
    if position.swap_offered:
        values["swap"] = min(sowings.values())
    mine = {action: outcome(position, action, v) for action, v in values.items()}
    best = max(mine.values())
    keepers = [a for a, o in mine.items() if o == best]
    if len(keepers) != 1 or any(best - o < limit for a, o in mine.items() if a != keepers[0]):
        return None
    answer = keepers[0]
    moves: list[PuzzleMove] = []
    for action in [answer, *sorted((a for a in values if a != answer), key=lambda a: (a == "swap", len(a), a))]:
        plies = LINE_PLIES if action == answer else REFUTATION_PLIES
        line = prover.line(position.apply(parse_action(action)), plies)
        if line is None:
            return None
        moves.append(PuzzleMove(action=action, value=values[action], loss=best - mine[action], line=line))
    return PuzzleInfo(id=puzzle_id(position), variant=position.variant.text(), position=position.fen(),
                      side="south" if position.to_move == Side.SOUTH else "north", answer=answer,
                      value=values[answer], moves=moves, themes=themes(position, answer, moves[0].line),
                      threshold=limit, source=candidate.source, match_id=candidate.match_id, ply=candidate.ply)


def from_review(variant: Variant, record: str, review: GameReview) -> Iterator[Candidate]:
    """The positions of a reviewed game where a proved move lost a mistake's seeds or more (someone missed a
    puzzle there)."""
    game = replay(variant, record)
    for ply in review.plies:
        if ply.exact and ply.mark in ("mistake", "blunder") and ply.ply < len(game.positions):
            yield Candidate(game.positions[ply.ply], "game", review.match_id, ply.ply)


def self_play(engine: Engine, games: int, seed: int = 0) -> Iterator[Candidate]:
    """Every position with a choice of `games` games between two shallow bots that often play at random."""
    variant = engine.variant
    rng = random.Random(seed)
    for _ in range(games):
        game = Game(variant)
        while not game.over and len(game.actions) < SELF_PLAY_MAX_PLIES:
            position = game.position
            if position.transfer_pending:
                game.play(Transfer())
                continue
            bins = position.legal_bins()
            if playable(position):
                yield Candidate(position, "self-play", None, position.ply)
            if len(bins) == 1 or rng.random() < SELF_PLAY_RANDOM:
                choice = rng.choice(bins)
            else:
                choice = engine.best_by_deepening(position, 1.0, SELF_PLAY_DEPTH)[0]
            game.play(Sow(choice))


def find(prover: Prover, candidates: Iterable[Candidate], deadline: float, most: int,
         threshold: int | None = None, known: frozenset[str] = frozenset()) -> Iterator[PuzzleInfo]:
    """Puzzles among `candidates` (each board once, none in `known`), at most `most`, until `deadline`
    (`time.monotonic()`)."""
    seen = set(known)
    made = 0
    if prover.deadline is None or prover.deadline > deadline:
        prover.deadline = deadline  # no proof runs past it, even one begun just before
    for candidate in candidates:
        if made >= most or time.monotonic() >= deadline:
            return
        key = puzzle_id(candidate.position)
        if key in seen:
            continue
        seen.add(key)
        puzzle = examine(prover, candidate, threshold)
        if puzzle is not None:
            made += 1
            yield puzzle

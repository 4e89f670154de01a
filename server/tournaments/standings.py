"""An event's table from its pairings: scores, Buchholz and Sonneborn-Berger tiebreaks, and the crosstable.

A win scores 1, a draw 1/2, a Swiss bye 1 (a round-robin's free round scores nothing:
`bye_points`). Buchholz is the sum of the final scores of the opponents met; Sonneborn-Berger
the sum of the final scores of the opponents beaten plus half those of the opponents drawn. A
bye adds nothing to either (a simplification of FIDE's virtual opponent).
Ranking: score, Buchholz, Sonneborn-Berger, then seeding order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from server.tournaments.records import Pairing

BYE_POINTS = 1.0


@dataclass(slots=True)
class Standing:
    """One entrant's line of the table."""

    name: str
    seed: int
    score: float = 0.0
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    rank: int = 0


def standings(entrants: Sequence[str], pairings: Sequence[Pairing], bye_points: float = BYE_POINTS) -> list[Standing]:
    """The table of `entrants` (seeding order) after the finished games among `pairings`, best first."""
    table = {name: Standing(name, seed) for seed, name in enumerate(entrants, start=1)}
    played = [p for p in pairings if p.finished]
    for p in played:
        if p.north is None:
            if p.south in table:
                table[p.south].score += bye_points
                table[p.south].byes += 1
            continue
        for player in p.players():
            if player in table:
                mine = p.score_of(player) or 0.0
                row = table[player]
                row.score += mine
                row.wins += mine == 1.0
                row.draws += mine == 0.5
                row.losses += mine == 0.0
    for p in played:
        if p.north is None:
            continue
        for player in p.players():
            opponent = p.opponent_of(player)
            if player in table and opponent in table:
                theirs = table[opponent].score
                table[player].buchholz += theirs
                table[player].sonneborn_berger += theirs * (p.score_of(player) or 0.0)
    rows = sorted(table.values(), key=lambda r: (-r.score, -r.buchholz, -r.sonneborn_berger, r.seed))
    for rank, row in enumerate(rows, start=1):
        row.rank = rank
    return rows


@dataclass(slots=True)
class CrossRow:
    """A line of the crosstable: the entrant, then one cell per round (`4s1`: met number 4 as south, won)."""

    rank: int
    name: str
    score: float
    cells: list[str] = field(default_factory=list)


_CELL_SCORE = {1.0: "1", 0.5: "=", 0.0: "0"}


def crosstable(entrants: Sequence[str], pairings: Sequence[Pairing], rounds: int | None = None,
               bye_points: float = BYE_POINTS) -> list[CrossRow]:
    """Per round, whom each entrant met (their rank), on which side and the result; `+` a bye, `-` no game."""
    rows = standings(entrants, pairings, bye_points)
    rank = {row.name: row.rank for row in rows}
    count = rounds if rounds is not None else max((p.round for p in pairings), default=0)
    cells = {name: ["-"] * count for name in rank}
    for p in pairings:
        if p.round > count:
            continue
        if p.north is None:
            if p.south in cells:
                cells[p.south][p.round - 1] = "+"
            continue
        for player, side in ((p.south, "s"), (p.north, "n")):
            opponent = p.opponent_of(player)
            if player in cells and opponent in rank:
                mine = p.score_of(player)
                cells[player][p.round - 1] = f"{rank[opponent]}{side}{'*' if mine is None else _CELL_SCORE[mine]}"
    return [CrossRow(row.rank, row.name, row.score, cells[row.name]) for row in rows]


def head_to_head(entrants: Sequence[str], pairings: Sequence[Pairing]) -> dict[str, dict[str, float]]:
    """For a round-robin's grid: what each entrant scored against each other one, over all their games."""
    grid: dict[str, dict[str, float]] = {name: {} for name in entrants}
    for p in pairings:
        if p.north is None or p.score is None:
            continue
        for player in p.players():
            opponent = p.opponent_of(player)
            if player in grid and opponent is not None:
                grid[player][opponent] = grid[player].get(opponent, 0.0) + (p.score_of(player) or 0.0)
    return grid


class CrossLine(Protocol):
    """What `crosstable_text` reads of a crosstable line (a `CrossRow`, or its wire form)."""

    @property
    def rank(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def cells(self) -> list[str]: ...


def crosstable_text(rows: Sequence[CrossLine]) -> str:
    """The crosstable as aligned text: rank, name, score, then the rounds."""
    if not rows:
        return ""
    width = max(len(row.name) for row in rows)
    lines = []
    for row in rows:
        score = f"{row.score:g}"
        lines.append(f"{row.rank:>3} {row.name:<{width}} {score:>4}  " + " ".join(f"{c:>4}" for c in row.cells))
    return "\n".join(lines)

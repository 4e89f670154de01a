"""Books of proved values: positions whose proof takes longer than a move's budget, solved once and kept.

A book belongs to one rule set (`egdb.rule_key`: houses, capture, extra turn, leftovers) and
holds, for each of its positions, the value under perfect play (what the mover still gains
over the opponent: stores never re-enter play, so a position is its 2h houses seen from the
mover's side) and the mover's proved best move: the first move in `solver.proof_order` that
reaches the value, which is the move `Engine.prove` finds, so a book changes no choice. Some
entries also carry every move's value.

Which positions: every position where a perfect player is to move within the first `depth`
turns of the game, whatever its opponent played (the player sitting either side), and every
position of the game the player plays against itself, whose proof from an empty table takes
more than `node_limit` nodes; a position proved within the limit is left to the board and not
followed further (what comes after it is easier still). Other positions are proved at the
board within a move's budget.
`build` does this breadth first, resumably (it saves as it goes); `kalah book build` runs it.

A book is a text file, one position a line (`#` starts a comment, the first line names the
format and the rule set):

    # kalah-book v1 h6-standard-extra-owner
    4,4,4,4,4,4/4,4,4,4,4,4 +8 3 -14,-10,+8,-2,-8,+4

mover's houses / opponent's houses, the value, the best house (1 = the mover's first house),
and optionally every house's value (`.` for an empty house). A header note `complete START: ...`
records a build of that start that followed every answer, with its databases (`Completion`).
Books are read from the package (`bots/data`, the ones shipped) and from `$KALAH_BOOK_DIR`
(default: the user cache directory), the later adding to the former (notes included).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from bots import egdb
from bots.file_lock import LockHeldError, hold_alone
from protocol.variant import Variant

FORMAT = "kalah-book v1"
ENV_DIR = "KALAH_BOOK_DIR"
PACKAGE_DIR = Path(__file__).parent / "data"
DEFAULT_NODE_LIMIT = 50_000
"""A position goes into a book when proving it from an empty table takes more nodes than this (the shipped
books' limit: a twentieth of a second on a quiet core, a few tenths on a loaded one)."""
DEFAULT_DEPTH = 1000
"""Turns within which every answer is followed (1000: every answer to the game's end; random Kalah(6,5) games last up
to 90 turns, and a walk cut short of the end is not complete)."""
CHECK_TT_LOG2 = 20
"""Table size (log2 of entries) of the empty-table proof that decides whether a position is hard."""

Key = tuple[int, ...]


class BookFormatError(ValueError):
    """A book file that does not parse."""


@dataclass(frozen=True)
class Completion:
    """A build of one start that finished (a note in the book's header): every position a perfect player can meet
    from the start, sitting either side, whatever the opponent plays, is in the book or was proved within
    `node_limit` nodes from an empty table of 2**`table_log2` entries with the databases up to `databases` seeds (what
    the bot proves within a move)."""

    variant: str
    """The start's variant, as `Variant.text` writes it (`kalah(6,5)`, `kalah(6,5,capture=empty)`)."""
    databases: int
    node_limit: int
    table_log2: int

    def note(self) -> str:
        """The header note that records it (`parse_completion` reads it back)."""
        return (f"complete {self.variant}: every position a perfect player can meet from the start against any "
                f"opponent is in the book or proved within {self.node_limit:,} nodes (table 2^{self.table_log2}) "
                f"with databases up to {self.databases} seeds")


_COMPLETE = re.compile(r"complete (\S+): every position .* within ([\d,]+) nodes \(table 2\^(\d+)\) "
                       r"with databases up to (\d+) seeds$")


def start_name(variant: Variant) -> str:
    """The name of a variant's start in a book's header: its text without the clock (`kalah(6,5,capture=empty)`)."""
    return replace(variant, time_control=None).text()


def parse_completion(note: str) -> Completion | None:
    """The completion a header note records, None if it records none."""
    found = _COMPLETE.fullmatch(note)
    if found is None:
        return None
    return Completion(found[1], int(found[4]), int(found[2].replace(",", "")), int(found[3]))


@dataclass(frozen=True)
class Entry:
    """A proved position: the mover's value, best house (0-based) and, if known, every house's value."""

    value: int
    pit: int
    per_move: tuple[int | None, ...] | None = None

    def line(self, key: Key) -> str:
        """The entry's line in a book file."""
        h = len(key) // 2
        houses = ",".join(map(str, key[:h])) + "/" + ",".join(map(str, key[h:]))
        text = f"{houses} {self.value:+d} {self.pit + 1}"
        if self.per_move is not None:
            text += " " + ",".join("." if v is None else f"{v:+d}" for v in self.per_move)
        return text


def parse_line(line: str) -> tuple[Key, Entry]:
    """A book line's key and entry; `BookFormatError` if it is not one."""
    parts = line.split()
    try:
        if len(parts) not in (3, 4):
            raise ValueError("expected houses, value, best house and optionally every value")
        mine, _, theirs = parts[0].partition("/")
        key = tuple(int(x) for x in mine.split(",")) + tuple(int(x) for x in theirs.split(","))
        h = len(mine.split(","))
        per_move = None
        if len(parts) == 4:
            per_move = tuple(None if x == "." else int(x) for x in parts[3].split(","))
        entry = Entry(int(parts[1]), int(parts[2]) - 1, per_move)
        if len(key) != 2 * h or min(key) < 0 or not 0 <= entry.pit < h or not key[entry.pit]:
            raise ValueError("the best house must be a non-empty house of the mover")
        if per_move is not None and (len(per_move) != h or per_move[entry.pit] != entry.value
                                     or any((v is None) != (key[p] == 0) for p, v in enumerate(per_move))):
            raise ValueError("every non-empty house needs a value and the best one the position's")
    except ValueError as exc:
        raise BookFormatError(f"bad book line {line!r}: {exc}") from None
    return key, entry


@dataclass
class Book:
    """The proved positions of one rule set, by mover-relative houses."""

    rules: str
    entries: dict[Key, Entry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        """Positions in the book."""
        return len(self.entries)

    def get(self, board: Iterable[int]) -> Entry | None:
        """The entry of a mover-relative board (2h + 2 pits), or None."""
        return self.entries.get(house_key(tuple(board)))

    def completions(self, variant: Variant) -> list[Completion]:
        """The finished builds the header records for the start of `variant` (its clock aside), fewest database
        levels first."""
        found = (parse_completion(note) for note in self.notes)
        return sorted((c for c in found if c is not None and c.variant == start_name(variant)),
                      key=lambda c: (c.databases, -c.node_limit))

    def complete(self, variant: Variant, levels: int) -> Completion | None:
        """A finished build of `variant`'s start whose databases the bot has (`levels` seeds), else None."""
        return next((c for c in self.completions(variant) if c.databases <= levels), None)

    def record(self, completion: Completion) -> None:
        """Note a finished build in the header (once)."""
        if completion.note() not in self.notes:
            self.notes.append(completion.note())

    def forget_completions(self, variant: Variant) -> None:
        """Drop the header's notes of finished builds of `variant`'s start (its entries are being proved again)."""
        self.notes = [n for n in self.notes if (c := parse_completion(n)) is None or c.variant != start_name(variant)]

    def dumps(self) -> str:
        """The book as file text, positions sorted by seeds in play (most first), then houses."""
        lines = [f"# {FORMAT} {self.rules}", *(f"# {note}" for note in self.notes)]
        order = sorted(self.entries, key=lambda k: (-sum(k), k))
        lines += [self.entries[k].line(k) for k in order]
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str) -> Book:
        """Parse book text; `BookFormatError` if it is not a book."""
        lines = text.splitlines()
        head = lines[0].split() if lines else []
        if head[:3] != ["#", *FORMAT.split()] or len(head) != 4:
            raise BookFormatError(f"not a book: the first line must be '# {FORMAT} RULES'")
        book = cls(head[3])
        for line in lines[1:]:
            if line.startswith("#"):
                book.notes.append(line[1:].strip())
            elif line.strip():
                key, entry = parse_line(line)
                book.entries[key] = entry
        return book

    def save(self, path: Path) -> None:
        """Write the book to `path` through a temporary file renamed into place."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
        try:
            tmp.write_text(self.dumps())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


class EasyLog:
    """The positions a build found easy, with the proved best house, kept beside its book (`*.easy`); and those
    where a move keeping a value was proved (`kept`: houses and the value needed, lines `HOUSES >=VALUE`).

    Easy positions are not stored in the book, so without this a resumed build would prove them
    all again (most of an interrupted build's time). The first line stamps what made them easy
    (`stamp`: rule set, node limit, table, databases); a log of another stamp is started afresh.
    Lines are appended as positions are found; a last line cut short by a crash is ignored.
    """

    HEAD = "# kalah-book-easy v1 "

    def __init__(self, path: Path, stamp: str) -> None:
        self.path = path
        self.stamp = stamp
        self.known: dict[Key, int] = {}
        self.kept: set[Key] = set()
        """Houses and then the value needed: where a move giving the mover at least that was proved (`Plan.keep`)."""
        self._out: TextIO | None = None
        self._appendable = False
        """Whether the file holds exactly `known` under this stamp, whole lines only (else it is rewritten)."""
        if path.is_file():
            self._read()

    def _read(self) -> None:
        """Load the log's positions if it was written under the same stamp."""
        text = self.path.read_text()
        lines = text.split("\n")
        if not lines or lines[0] != self.HEAD + self.stamp:
            return
        self._appendable = text.endswith("\n")
        complete = lines[1:-1]
        for line in complete:
            if not line:
                continue
            houses, _, pit = line.partition(" ")
            mine, _, theirs = houses.partition("/")
            try:
                key = tuple(int(x) for x in mine.split(",")) + tuple(int(x) for x in theirs.split(","))
                if pit.startswith(">=") and len(key) == 2 * len(mine.split(",")):
                    self.kept.add((*key, int(pit[2:])))
                    continue
                best = int(pit) - 1
                if len(key) != 2 * len(mine.split(",")) or not 0 <= best < len(key) // 2 or not key[best]:
                    raise ValueError(line)
                self.known[key] = best
            except ValueError:
                raise BookFormatError(f"bad line {line!r} in {self.path}; delete the file to prove "
                                      "its positions again") from None

    def add(self, key: Key, pit: int) -> None:
        """Record an easy position and its best house (0-based)."""
        self.known[key] = pit
        self._append(self._line((key, pit)))

    def add_kept(self, kept: Key) -> None:
        """Record a position (houses, then the value needed) where a move keeping that value was proved."""
        self.kept.add(kept)
        self._append(self._kept_line(kept))

    def _append(self, line: str) -> None:
        """Write a new line (already in `known` or `kept`); the whole log instead when the file does not hold exactly
        what was known before."""
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = self.path.open("a" if self._appendable else "w", encoding="utf-8")
            if not self._appendable:
                self._out.write(self.HEAD + self.stamp + "\n" + "".join(map(self._line, self.known.items()))
                                + "".join(map(self._kept_line, self.kept)))
                self._out.flush()
                self._appendable = True
                return
        self._out.write(line)
        self._out.flush()

    @staticmethod
    def _kept_line(kept: Key) -> str:
        """A log line of a kept position: the mover's houses / the opponent's, `>=` the value needed."""
        h = (len(kept) - 1) // 2
        return ",".join(map(str, kept[:h])) + "/" + ",".join(map(str, kept[h:-1])) + f" >={kept[-1]:+d}\n"

    @staticmethod
    def _line(item: tuple[Key, int]) -> str:
        """A log line: the mover's houses / the opponent's, the best house (1-based)."""
        key, pit = item
        h = len(key) // 2
        return ",".join(map(str, key[:h])) + "/" + ",".join(map(str, key[h:])) + f" {pit + 1}\n"

    def close(self) -> None:
        """Close the file (appends reopen it)."""
        if self._out is not None:
            self._out.close()
            self._out = None


class BookBusyError(RuntimeError):
    """Another process is building the same book."""


def hold_build(book_path: Path) -> int:
    """Take the lock that makes this process the only builder of the book at `book_path` (on a file beside it,
    `*.lock`, holding the process id; the kernel lets it go when the process ends, even by SIGKILL); the open
    descriptor that holds it. `BookBusyError` naming the holder if another process has it: two builds of one book
    would each save only what they proved, and the later save would drop the other's positions."""
    lock = book_path.with_name(book_path.name.removesuffix(".txt") + ".lock")  # book_status.lock_path
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        return hold_alone(lock)
    except LockHeldError as held:
        raise BookBusyError(f"another kalah book build (process {held.holder}) is writing {book_path}: wait for it "
                            "to end or stop it (it saves and resumes), or build into another --dir") from None


def easy_path(book_path: Path) -> Path:
    """Where a book's easy positions are logged while it is built."""
    return book_path.with_name(book_path.name.removesuffix(".txt") + ".easy")


def house_key(board: tuple[int, ...]) -> Key:
    """The 2h house counts of a mover-relative board (2h + 2 pits, stores included): a book's key."""
    h = (len(board) - 2) // 2
    return board[:h] + board[h + 1 : 2 * h + 1]


def book_dir() -> Path:
    """Where operators' books live: `$KALAH_BOOK_DIR` or the user cache directory."""
    env = os.environ.get(ENV_DIR)
    return Path(env) if env else egdb.user_cache() / "book"


def file_name(variant: Variant) -> str:
    """The file name of a rule set's book."""
    return f"book-v1-kalah-{egdb.rule_key(variant)}.txt"


def load(variant: Variant, directories: Iterable[Path] | None = None) -> Book | None:
    """The book of a variant's rule set: the package's, then the operator's added; None if there is none."""
    if not egdb.applies(variant):
        return None
    found: Book | None = None
    for directory in (PACKAGE_DIR, book_dir()) if directories is None else directories:
        path = directory / file_name(variant)
        if not path.is_file():
            continue
        book = Book.loads(path.read_text())
        if book.rules != egdb.rule_key(variant):
            raise BookFormatError(f"{path} holds rule set {book.rules}, not {egdb.rule_key(variant)}")
        if found is None:
            found = book
        else:
            found.entries.update(book.entries)
            found.notes += [note for note in book.notes if note not in found.notes]
    return found

"""Books of proved positions: the file format, the builder's coverage and resumption, the shipped books' entries."""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bots import book as book_mod
from bots import egdb
from bots.book import Book, BookFormatError, Completion, EasyLog, Entry, parse_line
from bots.book_builder import Builder, Plan
from bots.solver import Engine, proof_order, relative_board
from protocol import Capture, Position, Sow, Variant

SMALL = Variant(houses=4, seeds=4)
SMALL_PLAN = Plan(depth=2, node_limit=3000, per_move_depth=0, check_tt_log2=16)
GAME_VALUES = {"standard": 8, "empty": 10}
"""Kalah(6,4) under perfect play, from SOLVER-NOTES.md."""


def board_of(key: tuple[int, ...]) -> tuple[int, ...]:
    """The mover-relative board (empty stores) of a book key."""
    h = len(key) // 2
    return (*key[:h], 0, *key[h:], 0)


def build_small(variant: Variant = SMALL, plan: Plan = SMALL_PLAN) -> Book:
    """A book of a small board (Kalah(4,4) by default) built from scratch."""
    book = Book(egdb.rule_key(variant))
    Builder(Engine(variant, tt_log2=18), book, plan).run(Position.initial(variant))
    return book


def test_lines_round_trip() -> None:
    """An entry prints as a line that parses back to the same key and entry, with or without every move's value."""
    key = (0, 5, 5, 5, 4, 4, 4, 4)
    for entry in (Entry(1, 2), Entry(1, 1, (None, 1, 1, -1)), Entry(-3, 3)):
        assert parse_line(entry.line(key)) == (key, entry)
    assert parse_line("4,4,4,4/4,4,4,4 +2 1 +2,+0,+0,-2") == ((4,) * 8, Entry(2, 0, (2, 0, 0, -2)))


@pytest.mark.parametrize("line", ["4,4,4,4/4,4,4,4 +2 9", "0,4,4,4/4,4,4,4 +2 1", "4,4/4,4,4 +1 1",
                                  "4,4,4,4/4,4,4,4 +2 1 +1,+0,+0,-2", "0,4,4,4/4,4,4,4 +2 2 +1,+2,+0,-2",
                                  "4,4,4,4/4,4,4,4", "x,4,4,4/4,4,4,4 +2 1"])
def test_bad_lines_are_refused(line: str) -> None:
    """A line whose best house is empty or out of range, whose values disagree, or that is garbled is refused."""
    with pytest.raises(BookFormatError):
        parse_line(line)


def test_book_text_round_trips_and_names_its_rules() -> None:
    """A built book prints and parses back equal; text without the header line is not a book."""
    book = build_small()
    assert Book.loads(book.dumps()) == book
    assert book.dumps().startswith(f"# {book_mod.FORMAT} h4-standard-extra-owner\n")
    with pytest.raises(BookFormatError):
        Book.loads(book.dumps().split("\n", 1)[1])


def test_entries_are_the_solvers_values() -> None:
    """Every entry's value and every move's value are the solver's; the best house is the first best in proof order."""
    book = build_small()
    engine = Engine(SMALL)
    assert len(book) > 5
    for key, entry in book.entries.items():
        board = board_of(key)
        kids = engine.children(board)
        values = {kid[0]: engine.child_value(kid[1:], -1, 0, 0.0) for kid in kids}
        assert entry.value == max(values.values())
        assert entry.pit == next(k[0] for k in sorted(kids, key=proof_order) if values[k[0]] == entry.value)
        if entry.per_move is not None:
            assert {p: v for p, v in enumerate(entry.per_move) if v is not None} == values


def test_start_values_match_the_python_twin() -> None:
    """The start position's entry matches the pure-Python twin's per-move solution (Kalah(3,4))."""
    v = Variant(houses=3, seeds=4)
    entry = build_small(v, Plan(node_limit=500, per_move_depth=0)).get(relative_board(Position.initial(v)))
    sol = Engine(v, impl="py").solve(Position.initial(v), per_move=True)
    assert entry is not None and entry.per_move is not None
    assert entry.value == sol.value
    assert {p + 1: v for p, v in enumerate(entry.per_move)} == sol.per_move


def test_every_position_within_the_depth_is_in_the_book_or_easy() -> None:
    """Whatever the opponent plays in the first turns, each position the book's player faces is in it or easy."""
    book = build_small()
    builder = Builder(Engine(SMALL, tt_log2=18), Book(book.rules), SMALL_PLAN)
    rng = random.Random(4)
    for game in range(40):
        player = game % 2
        pos, turns = Position.initial(SMALL), 0
        while not pos.over and turns <= SMALL_PLAN.depth:
            board, mover = relative_board(pos), pos.to_move
            if pos.to_move == player:
                entry = book.get(board)
                pit = entry.pit if entry is not None else builder.easy(board)
                assert pit is not None, f"{pos.fen()} is neither in the book nor easy"
                pos = pos.apply(Sow(pit + 1 if pos.to_move == 0 else pit + SMALL.houses + 2))
            else:
                pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
            turns += pos.to_move != mover


def test_interrupted_build_resumes_to_the_same_book(tmp_path: Path) -> None:
    """A build stopped part way and saved resumes from its file and ends with the book of one whole run."""
    whole = build_small()
    path = tmp_path / book_mod.file_name(SMALL)
    partial = Book(whole.rules)

    def save_then_stop(book: Book) -> None:
        """Save, then interrupt the build the first time."""
        book.save(path)
        raise KeyboardInterrupt

    builder = Builder(Engine(SMALL, tt_log2=18), partial, SMALL_PLAN, save=save_then_stop, save_every_s=0.0)
    with pytest.raises(KeyboardInterrupt):
        builder.run(Position.initial(SMALL))
    saved = Book.loads(path.read_text())
    assert 0 < len(saved) < len(whole)
    Builder(Engine(SMALL, tt_log2=18), saved, SMALL_PLAN).run(Position.initial(SMALL))
    assert saved.entries == whole.entries


def test_a_resumed_build_does_not_prove_known_easy_positions_again(tmp_path: Path) -> None:
    """With the book and its easy log, running a finished build again proves nothing: no easy proof is redone."""
    whole = build_small()
    log = EasyLog(tmp_path / "b.easy", "stamp")
    book = Book(whole.rules)
    first = Builder(Engine(SMALL, tt_log2=18), book, SMALL_PLAN, known_easy=log.known, on_easy=log.add)
    first.run(Position.initial(SMALL))
    log.close()
    assert book.entries == whole.entries
    assert first.stats.easy > 0 and first.stats.easy_known == 0
    again = EasyLog(tmp_path / "b.easy", "stamp")
    assert again.known == log.known and len(again.known) == first.stats.easy
    second = Builder(Engine(SMALL, tt_log2=18), book, SMALL_PLAN, known_easy=again.known, on_easy=again.add)
    second.run(Position.initial(SMALL))
    assert book.entries == whole.entries
    assert second.stats.easy_known == second.stats.easy == first.stats.easy
    assert int(second.cold.searcher.nodes) == int(second.engine.searcher.nodes) == 0
    assert EasyLog(tmp_path / "b.easy", "another node limit").known == {}


def test_the_easy_log_survives_a_line_cut_short(tmp_path: Path) -> None:
    """A crash mid-line loses only that line: it is ignored when read, and the next add rewrites the file whole."""
    path = tmp_path / "b.easy"
    log = EasyLog(path, "s")
    log.add((1, 2, 0, 3), 1)
    log.add((2, 0, 1, 1), 0)
    log.close()
    path.write_text(path.read_text() + "3,0/1,")
    again = EasyLog(path, "s")
    assert again.known == {(1, 2, 0, 3): 1, (2, 0, 1, 1): 0}
    again.add((0, 4, 1, 1), 1)
    again.close()
    assert EasyLog(path, "s").known == {(1, 2, 0, 3): 1, (2, 0, 1, 1): 0, (0, 4, 1, 1): 1}
    assert path.read_text().count("\n") == 4
    path.write_text("# kalah-book-easy v1 s\n1,2/0,3 2\n1,2/0,3 7\n")
    with pytest.raises(BookFormatError, match="delete the file"):
        EasyLog(path, "s")


def test_books_are_read_from_the_package_then_the_operator(tmp_path: Path) -> None:
    """Entries of a later directory add to the earlier ones; a file of another rule set is refused."""
    book = build_small()
    first, second = tmp_path / "a", tmp_path / "b"
    keys = sorted(book.entries)
    Book(book.rules, {k: book.entries[k] for k in keys[:3]}).save(first / book_mod.file_name(SMALL))
    Book(book.rules, {k: book.entries[k] for k in keys[3:]}).save(second / book_mod.file_name(SMALL))
    assert book_mod.load(SMALL, [first, second]) == Book(book.rules, book.entries, [])
    assert book_mod.load(SMALL, [tmp_path / "none"]) is None
    assert book_mod.load(Variant(houses=4, clockwise=True), [first]) is None
    (first / book_mod.file_name(SMALL)).write_text(f"# {book_mod.FORMAT} h4-empty-extra-owner\n")
    with pytest.raises(BookFormatError):
        book_mod.load(SMALL, [first])


@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_shipped_kalah_6_4_books_hold_the_start(capture: str) -> None:
    """The shipped Kalah(6,4) books parse, and hold the start with the published value of the game."""
    v = Variant(capture=Capture(capture))
    found = book_mod.load(v, [book_mod.PACKAGE_DIR])
    assert found is not None and found.rules == egdb.rule_key(v)
    entry = found.get(relative_board(Position.initial(v)))
    assert entry is not None and entry.value == GAME_VALUES[capture]
    assert entry.per_move is not None and max(v for v in entry.per_move if v is not None) == entry.value


def test_shipped_books_are_consistent() -> None:
    """Every shipped book parses, names the rule set of its file, and each entry's values agree with its best move."""
    files = sorted(book_mod.PACKAGE_DIR.glob("book-*.txt"))
    assert files
    for path in files:
        found = Book.loads(path.read_text())
        assert path.name == f"book-v1-kalah-{found.rules}.txt" and len(found) > 0
        for entry in found.entries.values():
            assert entry.per_move is None or max(v for v in entry.per_move if v is not None) == entry.value


def test_cli_builds_shows_verifies_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`kalah book build` writes the book, `show` prints an entry, `verify` proves them and fails on a wrong one."""
    from cli.main import main

    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path / "egdb"))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "none"))
    flags = ["-H", "4", "-s", "4", "--dir", str(tmp_path)]
    work = ["--egdb-seeds", "8", "--tt-bits", "16"]
    plan = ["--node-limit", "3000", "--depth", "2", "--nice", "0"]  # in this process: keep the run's priority
    assert main(["book", "build", *flags, *work, *plan]) == 0
    assert "proved now" in capsys.readouterr().out
    path = tmp_path / book_mod.file_name(SMALL)
    assert Book.loads(path.read_text()).entries == build_small().entries
    assert main(["book", "build", *flags, *work, *plan]) == 0
    out = capsys.readouterr().out
    assert "(0 proved now" in out and "known to be easy" in out and " 0 of them known" not in out
    assert book_mod.easy_path(path).is_file()
    assert main(["book", "show", *flags]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].startswith("4,4,4,4/4,4,4,4 +2 1")
    assert [line.split()[:2] for line in shown[1:4]] == [["#", "4,4,4,4/4,4,4,4"], ["#", "+2"], ["#", "1"]]
    assert "value: what the mover gains" in shown[2] and "best house" in shown[3]  # a legend (before: the line)
    assert main(["book", "show", *flags, "--moves", "2 6 1"]) == 1
    assert "not in the book" in capsys.readouterr().out
    assert main(["book", "verify", *flags, *work]) == 0
    text = path.read_text().replace("4,4,4,4/4,4,4,4 +2 1", "4,4,4,4/4,4,4,4 +2 2", 1).replace(" +2,+0,+0,-2", "")
    path.write_text(text)
    assert main(["book", "verify", *flags, *work]) == 1
    assert "wrong: 4,4,4,4/4,4,4,4 +2 2" in capsys.readouterr().out
    assert main(["book", "build", "--clockwise", *flags]) == 2


def test_cli_proves_hard_positions_with_more_levels_and_threads_to_the_same_book(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`--egdb-seeds 8 --check-egdb-seeds 6 --workers 2` judges hardness with 6 levels as `--egdb-seeds 6` does and
    writes the same book; bad values are refused in one line."""
    from cli.main import main

    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path / "egdb"))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "none"))
    plan = ["-H", "4", "-s", "4", "--tt-bits", "16", "--node-limit", "3000", "--depth", "2", "--nice", "0"]
    assert main(["book", "build", *plan, "--dir", str(tmp_path / "a"), "--egdb-seeds", "6"]) == 0
    assert main(["book", "build", *plan, "--dir", str(tmp_path / "b"), "--egdb-seeds", "8", "--check-egdb-seeds", "6",
                 "--workers", "2"]) == 0
    capsys.readouterr()
    name = book_mod.file_name(SMALL)
    assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()
    assert "databases up to 6 seeds" in (tmp_path / "b" / name).read_text()
    engine = Engine(SMALL, tt_log2=16, egdb_seeds=8, egdb_dir=tmp_path / "egdb", build_egdb=False)
    builder = Builder(engine, Book(egdb.rule_key(SMALL)), Plan(check_egdb_seeds=6))
    assert len(builder.engine.levels) == 9 and len(builder.cold.levels) == 7  # levels 0..8, and 0..6 for the checks
    assert "databases 6" in (tmp_path / "b" / book_mod.easy_path(Path(name)).name).read_text().splitlines()[0]
    for flags, said in ((["--check-egdb-seeds", "9"], "--check-egdb-seeds must be 0..8"),
                        (["--workers", "0"], "--workers must be at least 1")):
        assert main(["book", "build", *plan, "--dir", str(tmp_path / "c"), "--egdb-seeds", "8", *flags]) == 2
        assert capsys.readouterr().err == f"kalah book: {said}" + (" (--egdb-seeds)\n" if "check" in said else "\n")


def test_a_second_build_of_the_same_book_is_refused_while_the_first_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """While a process holds a book's build lock, `kalah book build` of that book is refused in one line naming it
    and nothing is written (each would save only its own positions, dropping the other's); once that process is
    killed with SIGKILL the build runs. The holder is killed on every path."""
    from cli.main import main
    from tests.helpers.processes import first_line, started

    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path / "egdb"))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "none"))
    path = tmp_path / "books" / book_mod.file_name(SMALL)
    hold = ("import sys, time; from pathlib import Path; from bots.book import hold_build; "
            f"hold_build(Path({str(path)!r})); print('held', flush=True); time.sleep(120)")
    argv = ["book", "build", "-H", "4", "-s", "4", "--dir", str(path.parent), "--egdb-seeds", "6", "--tt-bits", "16",
            "--node-limit", "3000", "--depth", "2", "--nice", "0"]
    with started([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True) as holder:
        assert first_line(holder).strip() == "held"
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == (f"kalah book: another kalah book build (process {holder.pid}) is writing {path}: wait for it "
                       "to end or stop it (it saves and resumes), or build into another --dir\n")
        assert not path.exists()
        holder.kill()
        holder.wait(30)
    assert main(argv) == 0
    assert Book.loads(path.read_text()).entries == build_small().entries


def test_a_keep_build_covers_every_position_with_a_move_keeping_the_games_value() -> None:
    """With `Plan.keep`, whatever the opponent plays, each position the player faces is in the book, easy, or has a
    move keeping the game's value proved within the node limit; the book is no larger than a full build's."""
    plan = replace(SMALL_PLAN, keep=True)
    book, whole = build_small(plan=plan), build_small()
    assert 0 < len(book) <= len(whole)
    assert all(whole.entries.get(k, e) == e for k, e in book.entries.items())
    start = book.get(relative_board(Position.initial(SMALL)))
    assert start is not None
    builder = Builder(Engine(SMALL, tt_log2=18), Book(book.rules), plan)
    judge = Engine(SMALL, tt_log2=18)
    rng = random.Random(5)
    for game in range(40):
        player = game % 2
        target = start.value if player == 0 else -start.value
        pos, turns = Position.initial(SMALL), 0
        while not pos.over and turns <= plan.depth:
            board, mover = relative_board(pos), pos.to_move
            if pos.to_move == player:
                entry = book.get(board)
                need = target - (board[SMALL.houses] - board[-1])
                pit = entry.pit if entry is not None else builder.easy(board)
                if pit is None:
                    assert builder.kept(board, need), f"{pos.fen()}: not in the book, not easy, value not kept"
                    pit = builder.cold.keep(board, need)
                    assert pit is not None
                assert judge.reaches(board, pit, need), f"{pos.fen()}: house {pit + 1} gives the game's value away"
                pos = pos.apply(Sow(pit + 1 if pos.to_move == 0 else pit + SMALL.houses + 2))
            else:
                pos = pos.apply(Sow(rng.choice(pos.legal_bins())))
            turns += pos.to_move != mover


def test_a_resumed_keep_build_does_not_prove_kept_positions_again(tmp_path: Path) -> None:
    """The easy log also holds the positions left to the board by a move keeping the game's value (houses and the
    value needed): a keep build run again with it proves nothing."""
    plan = replace(SMALL_PLAN, keep=True)
    log = EasyLog(tmp_path / "b.easy", "stamp")
    book = Book(egdb.rule_key(SMALL))
    first = Builder(Engine(SMALL, tt_log2=18), book, plan, known_easy=log.known, on_easy=log.add,
                    known_kept=log.kept, on_kept=log.add_kept)
    first.run(Position.initial(SMALL))
    log.close()
    assert first.stats.kept > 0 and len(log.kept) == first.stats.kept
    again = EasyLog(tmp_path / "b.easy", "stamp")
    assert again.kept == log.kept and again.known == log.known
    assert any(">=" in line for line in (tmp_path / "b.easy").read_text().splitlines())
    second = Builder(Engine(SMALL, tt_log2=18), book, plan, known_easy=again.known, on_easy=again.add,
                     known_kept=again.kept, on_kept=again.add_kept)
    second.run(Position.initial(SMALL))
    assert second.stats.kept == first.stats.kept and second.stats.easy_known == second.stats.easy
    assert int(second.cold.searcher.nodes) == 0


def test_only_a_walk_that_follows_every_answer_is_complete_and_its_note_reads_back(tmp_path: Path) -> None:
    """A walk cut at `depth`, or a `keep` walk, is not complete; one that follows every answer to the game's end is,
    and the note recording it in the header reads back, from either directory the books are read from."""
    engine = Engine(SMALL, tt_log2=18)
    cut = Builder(engine, Book(egdb.rule_key(SMALL)), SMALL_PLAN)
    assert not cut.run(Position.initial(SMALL)).complete and cut.stats.cut
    kept = Builder(engine, Book(egdb.rule_key(SMALL)), replace(SMALL_PLAN, depth=40, keep=True))
    assert not kept.run(Position.initial(SMALL)).complete
    book = Book(egdb.rule_key(SMALL))
    whole = Builder(engine, book, replace(SMALL_PLAN, depth=40))
    assert whole.run(Position.initial(SMALL)).complete and not whole.stats.cut
    done = Completion(SMALL.text(), 8, 3000, 16)
    book.record(done)
    book.record(done)
    assert Book.loads(book.dumps()).completions(SMALL) == [done] and book.notes.count(done.note()) == 1
    assert book.complete(SMALL, 8) == done and book.complete(SMALL, 7) is None
    assert book.completions(Variant(houses=4, seeds=3)) == []
    book.save(tmp_path / "b" / book_mod.file_name(SMALL))
    Book(book.rules, {}).save(tmp_path / "a" / book_mod.file_name(SMALL))
    found = book_mod.load(SMALL, [tmp_path / "a", tmp_path / "b"])
    assert found is not None and found.completions(SMALL) == [done]
    book.forget_completions(SMALL)
    assert book.completions(SMALL) == []

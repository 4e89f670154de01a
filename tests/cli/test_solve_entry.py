"""`kalah solve` end to end through its real entry point, and the C core's presence."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from cli.main import main
from protocol import Game, Position, Side, Sow, Variant
from tests.bots.test_pie import opener_minimax
from tests.helpers.processes import KALAH, run


@pytest.fixture(autouse=True)
def egdb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Databases go to a temporary directory; operators' books are not read."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "books"))
    return tmp_path


def test_c_extension_is_built() -> None:
    """The C search core is importable: CI fails when the extension did not build."""
    module = importlib.import_module("bots._search")
    assert {"Rules", "Searcher", "play", "legal", "rank", "level_size", "build_level"} <= set(dir(module))


@pytest.mark.parametrize("impl", ["c", "py"])
def test_json_with_per_move(impl: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--json --per-move prints value, best moves, every move's value, nodes and seconds."""
    assert main(["solve", "-H", "3", "-s", "3", "--json", "--per-move", "--impl", impl, "--egdb-seeds", "8"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == 2 and out["exact"] is True
    assert set(out["per_move"]) == {"1", "2", "3"}
    assert out["best"] == [int(b) for b, v in out["per_move"].items() if v == 2]
    assert isinstance(out["nodes"], int) and isinstance(out["seconds"], float)


def test_moves_and_stores(capsys: pytest.CaptureFixture[str]) -> None:
    """--moves solves the position after the record; the value counts the stores."""
    assert main(["solve", "-H", "3", "-s", "3", "--json", "--per-move", "--moves", "3"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert main(["solve", "-H", "3", "-s", "3", "--json", "--per-move"]) == 0
    start = json.loads(capsys.readouterr().out)
    assert after["value"] == start["per_move"]["3"]


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    """The text report names the value, the best moves and says it is exact."""
    assert main(["solve", "-H", "2", "-s", "2", "--capture", "empty", "--egdb-seeds", "4"]) == 0
    out = capsys.readouterr().out
    assert "value: -2" in out and "exact" in out and "best:" in out


def test_cyclic_variant_is_marked_not_exact(capsys: pytest.CaptureFixture[str]) -> None:
    """Clockwise sowing gets a bounded search, reported as not exact."""
    assert main(["solve", "-H", "3", "-s", "2", "--clockwise", "--json", "--depth", "6"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"] is False
    assert main(["solve", "-H", "3", "-s", "2", "--clockwise", "--depth", "6"]) == 0
    assert "not exact" in capsys.readouterr().out


def test_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """An illegal record, a pending transfer or bad sizes exit 2 with a message."""
    assert main(["solve", "-H", "3", "-s", "3", "--moves", "9"]) == 2
    assert "illegal move 1" in capsys.readouterr().err
    assert main(["solve", "-H", "3", "-s", "3", "--opening-transfer"]) == 2
    assert "transfer" in capsys.readouterr().err
    assert main(["solve", "-H", "3", "-s", "3", "--egdb-seeds", "99"]) == 2


def test_time_limit_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    """A solve that runs past --time-limit stops and exits 3."""
    assert main(["solve", "-H", "6", "-s", "6", "--egdb-seeds", "0", "--tt-bits", "16",
                 "--time-limit", "0.2"]) == 3
    assert "time limit" in capsys.readouterr().err


def test_installed_command() -> None:
    """The `kalah solve` entry point runs as a process."""
    done = run([*KALAH, "solve", "-H", "1", "-s", "3", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == 6


@pytest.mark.parametrize(("capture", "value"), [("standard", 8), ("empty", 10)])
def test_book_positions_are_answered_at_once(capture: str, value: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Kalah(6,4) from the start is in the shipped book: its published value and every first move, no search."""
    assert main(["solve", "--capture", capture, "--per-move", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == value and out["source"] == "book" and out["nodes"] == 0 and out["exact"] is True
    assert set(out["per_move"]) == {"1", "2", "3", "4", "5", "6"} and max(out["per_move"].values()) == value
    assert out["best"] == [int(b) for b, v in out["per_move"].items() if v == value]
    assert main(["solve", "--capture", capture, "--moves", "3 6 9", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["source"] == "book" and after["value"] == value and after["per_move"] == {}


def test_no_book_searches(capsys: pytest.CaptureFixture[str]) -> None:
    """--no-book solves by search even where a book holds the position."""
    assert main(["solve", "--moves", "3 6 9 8 5 12 6 2 6 5", "--json", "--no-book", "--egdb-seeds", "14"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "search"


def solve_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    """The JSON answer of `kalah solve ARGS --json` (exit 0)."""
    assert main(["solve", *args, "--json"]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize("impl", ["c", "py"])
def test_position_solves_as_the_record_that_reaches_it(impl: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--position TEXT of the position after a record gives that record's value, best moves and per-move values."""
    fen = Game.from_record(Variant(houses=4, seeds=3), "1 7").position.fen()
    board = ("-H", "4", "-s", "3", "--per-move", "--impl", impl, "--egdb-seeds", "6")  # small databases: built at once
    by_record = solve_json(capsys, *board, "--moves", "1 7")
    by_text = solve_json(capsys, *board, "--position", fen)
    assert by_text["per_move"] and {k: by_text[k] for k in ("value", "best", "per_move", "exact")} == \
        {k: by_record[k] for k in ("value", "best", "per_move", "exact")}


@pytest.mark.parametrize("text", ["0,3,1,0,2,0,20,2,0,1,0,2,1,16 N 17 -", "5,0,0,0,1,2,18,0,3,0,0,0,1,18 S 30 -",
                                  "0,0,0,0,0,0,20,0,0,0,0,0,0,28 N 40 - empty"])
def test_any_position_c_core_and_python_twin_agree(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A position no record was given for (a puzzle, another program's): both cores give the same exact answer."""
    found = {impl: solve_json(capsys, "--position", text, "--per-move", "--impl", impl, "--no-book",
                              "--egdb-seeds", "6") for impl in ("c", "py")}
    assert found["c"]["exact"] is True and {k: found["c"][k] for k in ("value", "best", "per_move")} == \
        {k: found["py"][k] for k in ("value", "best", "per_move")}
    position = Position.from_fen(Variant(), text)
    per_move = found["c"]["per_move"]
    assert isinstance(per_move, dict) and set(per_move) == {str(b) for b in position.legal_bins()}
    if per_move:
        pick = max if position.to_move == Side.SOUTH else min
        assert found["c"]["value"] == pick(per_move.values())
    else:
        assert found["c"]["value"] == position.margin == -8


def test_position_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    """The text report of --position draws the board given and names the side to move."""
    assert main(["solve", "-H", "3", "-s", "3", "--position", "4,4,0,1,4,4,1,0 N 1 -", "--per-move"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("    1  4  4\n") and "to move: north" in out and "per move: 5:" in out


@pytest.mark.parametrize(("text", "says"), [
    ("4,4,0,1,4,4,1 N 1 -", "has 8 pits (2 x 3 houses and 2 stores), not 7"),
    ("4,4,0,1,4,4,1,9 N 1 -", "holds 27 seeds; every kalah(3,3) position holds 18"),
    ("4,4,-1,1,4,4,1,1 N 1 -", "bad position"),
    ("4,4,0,1,4,4,1,0 X 1 -", "bad position"),
    ("0,0,0,9,4,1,3,1 N 1 -", "would be over here"),
    ("0,0,0,9,0,0,0,9 S 9 -", "would be over here"),
    ("0,0,1,8,0,0,0,9 S 9 - empty", "seeds are left in houses"),
    ("4,4,0,1,4,4,1,0 N 1 p", "name a rule kalah(3,3) does not have"),
])
def test_impossible_position_is_one_line_error(text: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A position that cannot occur in the variant exits 2 with one line naming what is wrong."""
    assert main(["solve", "-H", "3", "-s", "3", "--position", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalah solve: ") and says in err and err.count("\n") == 1


def test_position_and_moves_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """--position and --moves name two different positions: refused."""
    assert main(["solve", "-H", "3", "-s", "3", "--position", "4,4,0,1,4,4,1,0 N 1 -", "--moves", "3"]) == 2
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize("impl", ["c", "py"])
def test_pie_opening_values(impl: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Under the pie rule the opener's first turn also gets each sowing's value with North's swap (minimax's)."""
    plain = solve_json(capsys, "-H", "4", "-s", "2", "--per-move", "--impl", impl)
    got = solve_json(capsys, "-H", "4", "-s", "2", "--per-move", "--impl", impl, "--pie")
    start = Position.initial(Variant(houses=4, seeds=2, pie=True))
    assert {k: got[k] for k in ("value", "best", "per_move")} == {k: plain[k] for k in ("value", "best", "per_move")}
    assert got["pie"] == {"opener": opener_minimax(start), "best": [3], "exact": True,
                          "per_move": {str(b): opener_minimax(start.apply(Sow(b))) for b in start.legal_bins()}}
    assert "pie" not in solve_json(capsys, "-H", "4", "-s", "2", "--pie", "--moves", "1")  # North's turn: no choice
    assert main(["solve", "-H", "4", "-s", "2", "--pie", "--per-move", "--impl", impl]) == 0
    text = capsys.readouterr().out
    assert "opener ends with -4 at best (best: 3;" in text and "pie per move: 1:-12  2:-10  3:-4  4:-6" in text


@pytest.mark.parametrize(("capture", "opener", "best"), [("standard", 0, [3]), ("empty", -2, [3, 4])])
def test_kalah_6_4_pie_opening_from_the_books(capture: str, opener: int, best: list[int], egdb_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Kalah(6,4) under the pie rule: each board North may be offered is in the shipped book; no database is built."""
    got = solve_json(capsys, "--pie", "--capture", capture)
    choice = got["pie"]
    assert got["source"] == "book" and isinstance(choice, dict)
    assert choice["opener"] == opener and choice["exact"] is True and choice["best"] == best
    assert not list(egdb_dir.glob("*.egdb"))

"""`kalah record` end to end through its real entry point."""

from __future__ import annotations

import json

import pytest

from cli.main import main
from tests.helpers.processes import KALAH, run


def test_record_json(capsys: pytest.CaptureFixture[str]) -> None:
    """--json prints the variant, every position, and the state at the end of the record."""
    assert main(["record", "-H", "6", "-s", "4", "--json", "3 6 9 8"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "kalah(6,4)" and len(out["positions"]) == 5
    assert out["over"] is False and out["result"] is None
    assert out["stores"] == [2, 1] and out["to_move"] == "south"


def test_record_finished_game(capsys: pytest.CaptureFixture[str]) -> None:
    """A finished Kalah(1,3) game prints its result."""
    assert main(["record", "-H", "1", "-s", "3", "--json", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["over"] is True and out["result"] == 6 and out["stores"] == [6, 0]


def test_record_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    """Text output shows each move and the result line."""
    assert main(["record", "-H", "1", "-s", "3", "1"]) == 0
    out = capsys.readouterr().out
    assert "1. 1" in out and "result +6" in out


def test_variant_flags_reach_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    """Variant flags change the rules applied (KalahAlt: no extra turn after bin 3)."""
    assert main(["record", "--no-extra-turn", "--pie", "--json", "3 swap"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "kalah(6,4,extra=off,pie=on)" and out["to_move"] == "north"


def test_illegal_record_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """An illegal record exits 2 and names the move index, bin and reason."""
    assert main(["record", "3 6 9 3"]) == 2
    err = capsys.readouterr().err
    assert "move 4" in err and "bin 3" in err and "north" in err


def test_bad_variant_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """An out-of-range h exits 2 with a clear message."""
    assert main(["record", "-H", "13", "1"]) == 2
    assert "houses" in capsys.readouterr().err


def test_console_script_reads_stdin() -> None:
    """The installed module runs as a program and reads the record from stdin."""
    proc = run([*KALAH, "record", "--json", "-"], input="# a header line\n3 6\n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["to_move"] == "north"

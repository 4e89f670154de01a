"""The KGP codec (protocol.kgp): lines, arguments, board literals and the line splitter, without I/O."""

from __future__ import annotations

import pytest

from protocol import Position, Side, Variant
from protocol.kgp import (
    MAX_LINE,
    Board,
    KgpSyntaxError,
    Line,
    LineSplitter,
    Overlong,
    bin_of,
    format_arg,
    parse_line,
)
from tests.conftest import pos


@pytest.mark.parametrize(("text", "line"), [
    ("kgp 1 0 1", Line("kgp", (1, 0, 1))),
    ("mode freeplay", Line("mode", ("freeplay",))),
    ('1 mode "freeplay"', Line("mode", ("freeplay",), 1)),
    ("4 state <3,0,0,3,3,3,3,3,3>", Line("state", (Board(0, 0, (3, 3, 3), (3, 3, 3)),), 4)),
    ("@4 move 1", Line("move", (1,), None, 4)),
    ("6@4 stop", Line("stop", (), 6, 4)),
    ("  7@8   move   +3  \r", Line("move", (3,), 7, 8)),
    ('12@9 error "No \\"state\\" \\\\ here"', Line("error", ('No "state" \\ here',), 12, 9)),
    ("set time:clock -2", Line("set", ("time:clock", -2))),
    ("set x 1.5 -.25", Line("set", ("x", 1.5, -0.25))),
    ('set info:comment "two\\nlines\\ttab"', Line("set", ("info:comment", "two\nlines\ttab"))),
    ("state < 2 , 1 , 0 , 1 , 2 , 3 , 4 >", Line("state", (Board(1, 0, (1, 2), (3, 4)),))),
])
def test_parse_line_reads_every_form_of_the_grammar(text: str, line: Line) -> None:
    """Ids, references, integers, reals, words, escaped strings and board literals parse to their values."""
    assert parse_line(text) == line


@pytest.mark.parametrize("text", ["", "   ", "\r"])
def test_blank_lines_are_no_command(text: str) -> None:
    """An empty line is no command (and no error)."""
    assert parse_line(text) is None


@pytest.mark.parametrize("text", [
    "move!", "set a b!", 'set a "open', "state <3,1,2", "state <3,0,0,3,3>", "state <0>",
    "state <2,1,0,1,x,3,4>", "@ move", "\x00\x01 junk",
])
def test_malformed_lines_are_refused_with_a_typed_error(text: str) -> None:
    """A line outside the grammar raises `KgpSyntaxError` (a `bad_notation` error), never anything else."""
    with pytest.raises(KgpSyntaxError):
        parse_line(text)


@pytest.mark.parametrize("line", [
    Line("kgp", (1, 1, 0)),
    Line("state", (Board(10, 2, (1, 2, 3), (4, 2, 0)),), 4),
    Line("stop", (), 6, 4),
    Line("set", ("game:opponent", "engine:alice"), 8),
    Line("set", ("arena:result", "win empty +8"), 10),
    Line("error", ('say "hi" \\ \n', ), 12, 3),
    Line("set", ("id", "42"), 14),
    Line("set", ("empty", ""), 16),
])
def test_formatted_lines_read_back(line: Line) -> None:
    """What the gateway sends parses back to the same command (strings that look like numbers stay strings)."""
    assert parse_line(line.text()) == line
    assert line.wire().endswith(b"\r\n")


def test_strings_are_bare_only_when_they_read_back_as_words() -> None:
    """Option names and simple values go bare (as clients expect); text with spaces or digits only is quoted."""
    assert format_arg("time:mode") == "time:mode"
    assert format_arg("relative") == "relative"
    assert format_arg("12") == '"12"'
    assert format_arg("two words") == '"two words"'
    assert format_arg(3) == "3"


def test_board_literal_puts_south_first_as_in_kgp_1_1() -> None:
    """`<3,10,2,1,2,3,4,2,0>`: size 3, South store 10, North store 2, South pits 1 2 3, North pits 4 2 0."""
    board = Board.parse("<3,10,2,1,2,3,4,2,0>")
    assert board == Board(10, 2, (1, 2, 3), (4, 2, 0))
    assert board.size == 3
    assert board.text() == "<3,10,2,1,2,3,4,2,0>"
    assert board.mirror() == Board(2, 10, (4, 2, 0), (1, 2, 3))


def test_board_of_a_position_is_seen_from_the_movers_side() -> None:
    """South sees the position as it is; North sees it mirrored, its own pits first, in its sowing order."""
    p = pos("kalah(3,4)", [1, 2, 3, 10, 4, 5, 6, 2], "N")
    assert Board.of(p, Side.SOUTH).text() == "<3,10,2,1,2,3,4,5,6>"
    assert Board.of(p, Side.NORTH).text() == "<3,2,10,4,5,6,1,2,3>"


def test_a_board_becomes_a_position_with_south_to_move() -> None:
    """The agent side reads a board back as a position of Kalah(n, s), s from the seeds on the board."""
    start = Position.initial(Variant.parse("kalah(6,4)"))
    back = Board.of(start, Side.NORTH).position()
    assert back.variant == Variant(houses=6, seeds=4)
    assert back.to_move == Side.SOUTH
    assert back.pits == start.pits


def test_moves_map_to_bins_from_each_side() -> None:
    """KGP pit k is bin k for South and bin h+1+k for North (its k-th house counter-clockwise)."""
    assert bin_of(1, Side.SOUTH, 6) == 1
    assert bin_of(6, Side.SOUTH, 6) == 6
    assert bin_of(1, Side.NORTH, 6) == 8
    assert bin_of(6, Side.NORTH, 6) == 13


def test_splitter_cuts_lines_across_chunks_and_drops_overlong_ones() -> None:
    """LF and CRLF both end a line, a line may span chunks, and a line past the limit is dropped whole."""
    splitter = LineSplitter(limit=10)
    assert splitter.feed(b"kgp 1\r\nmo") == ["kgp 1"]
    assert splitter.feed(b"de x\n" + b"y" * 25) == ["mode x"]
    assert splitter.feed(b"zz\npong\n") == [Overlong(27), "pong"]
    assert splitter.feed(b"0123456789\n01234567890\n") == ["0123456789", Overlong(11)]


def test_splitter_holds_at_most_one_line_of_a_flood() -> None:
    """A megabyte without a line break is never buffered: the splitter keeps under its limit."""
    splitter = LineSplitter()
    for _ in range(64):
        assert splitter.feed(b"x" * 16384) == []
        assert len(splitter._buffer) <= MAX_LINE
    assert splitter.feed(b"\nok\n") == [Overlong(64 * 16384), "ok"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    """Bytes that are not UTF-8 become replacement characters; the line still arrives."""
    assert LineSplitter().feed(b"\xff\xfe move 1\n") == ["\ufffd\ufffd move 1"]

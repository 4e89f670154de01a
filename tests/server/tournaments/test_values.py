"""Event settings and pairing records: validation with typed errors, and text forms that parse back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.errors import BadEventError, NotationError
from protocol.event_settings import Entry, EventKind, EventSettings
from server.tournaments.records import Pairing


def test_settings_print_and_parse_back() -> None:
    """`text()` leaves out defaults, `parse` reads it back equal, and the repr pastes back into Python."""
    s = EventSettings.checked(name="Club night", kind="swiss", rounds=5, variant="kalah(6,4,pie=on,clock=60+1)",
                              max_entrants=16, entry="listed", names=("alice", "bob"))
    assert s.kind is EventKind.SWISS and s.entry is Entry.LISTED
    assert EventSettings.parse(s.text()) == s
    assert '"cycles"' not in s.text()
    assert eval(repr(s)) == s


@pytest.mark.parametrize(("fields", "says"), [
    ({"kind": "swiss"}, "a Swiss needs rounds"),
    ({"kind": "arena", "duration_s": 60, "rounds": 3}, "a Swiss needs rounds"),
    ({"kind": "arena"}, "an arena needs duration_s"),
    ({"kind": "round_robin", "max_entrants": 40}, "at most 16 entrants"),
    ({"kind": "swiss", "rounds": 9, "max_entrants": 8}, "9 rounds need more than 8 entrants"),
    ({"kind": "arena", "duration_s": 60, "entry": "listed"}, "'listed' needs names"),
    ({"kind": "arena", "duration_s": 60, "variant": "kalah(99,4)"}, "event variant"),
    ({"kind": "knockout"}, "event kind"),
    ({"kind": "arena", "duration_s": 60, "min_entrants": 9, "max_entrants": 8}, "min_entrants is more"),
])
def test_bad_settings_are_one_line_typed_errors(fields: dict[str, object], says: str) -> None:
    """Settings that do not fit together are refused with `BadEventError` naming the problem on one line."""
    with pytest.raises(BadEventError, match=says) as caught:
        EventSettings.checked(name="x", **fields)
    assert "\n" not in str(caught.value) and caught.value.code == "bad_event"


def test_pairing_text_forms() -> None:
    """A game, a drawn game, a game under way and a bye each print and parse back."""
    lines = ("3.2 alice-bob 1-0 ev1-r3-t2", "1.1 a-b 1/2-1/2 m1", "2.1 bot:random-carol * e-r2-t1", "3.4 carol bye")
    for line in lines:
        assert str(Pairing.parse(line)) == line
        assert eval(repr(Pairing.parse(line))) == Pairing.parse(line)
    game = Pairing.parse("3.2 alice-bob * ev1-r3-t2").ended(0.0)
    assert (game.score_of("alice"), game.score_of("bob"), game.opponent_of("bob")) == (0.0, 1.0, "alice")


@pytest.mark.parametrize("line", ["3.2 alice-bob 2-0 m", "3 alice-bob 1-0 m", "1.1 a-a 1-0 m", "1.1 a bye extra", ""])
def test_bad_pairing_lines_are_notation_errors(line: str) -> None:
    """A line that is not a pairing (bad result, no table, a player against themselves) is `NotationError`."""
    with pytest.raises(NotationError):
        Pairing.parse(line)


@given(st.integers(1, 9999), st.integers(1, 9999), st.from_regex(r"[a-z][a-z0-9_.:]{0,10}", fullmatch=True),
       st.from_regex(r"[A-Z][a-z0-9_.:]{0,10}", fullmatch=True), st.sampled_from([1.0, 0.5, 0.0, None]))
def test_any_pairing_round_trips(rnd: int, table: int, south: str, north: str, score: float | None) -> None:
    """Every pairing value prints to a line that parses back to it."""
    game = Pairing(rnd, table, south, north, f"e-r{rnd}-t{table}", score)
    assert Pairing.parse(game.text()) == game

"""Messages between cluster nodes: each prints and parses back to an equal value; unreadable text is a typed error."""

from __future__ import annotations

import pytest

from protocol.outcome import EndReason
from server.cluster.messages import (
    Acted,
    BusMessageError,
    Cancelled,
    Changed,
    Ended,
    Joined,
    NodeLeft,
    Online,
    Paired,
    SessionsEnded,
    TournamentChanged,
    Waiting,
    parse_match_notice,
    parse_node_notice,
)

MATCH_NOTICES = [
    Changed(7),
    Changed(3, 2, Joined(1, "p-bob", "bob", None)),
    Changed(4, 3, Joined(0, "bot-first", "bot:first", "first")),
    Changed(9, 8, Acted(5, 1, "3", (59_000, 58_250), 1_795_000_000.25, None, 0.125)),
    Changed(12, 10, Acted(9, 0, "S", (1, 2), 1.5, Ended(-4, 1, EndReason.EMPTY))),
    Changed(11, 10, Ended(None, None, EndReason.REPETITION)),
    Changed(6, 5, Ended(None, 0, EndReason.RESIGN)),
    Cancelled(),
]
NODE_NOTICES = [NodeLeft("n1"), Paired("n2", "p-ann", "m123"), Online(True, "n3", "p-ann"), Online(False, "n3", "p"),
                TournamentChanged("e1a2b3", 12), SessionsEnded(("s1a2b3c4d5e6",)),
                SessionsEnded(("s1", "s2", "s3"))]


@pytest.mark.parametrize("notice", MATCH_NOTICES, ids=lambda n: n.text()[:30])
def test_match_notices_round_trip(notice: Changed | Cancelled) -> None:
    """A match channel's notice parses back from its text to an equal value."""
    assert parse_match_notice(notice.text()) == notice


@pytest.mark.parametrize("notice", NODE_NOTICES, ids=lambda n: n.text())
def test_node_notices_round_trip(notice: NodeLeft | Paired | Online | TournamentChanged | SessionsEnded) -> None:
    """A nodes' channel notice parses back from its text to an equal value."""
    assert parse_node_notice(notice.text()) == notice


def test_a_waiting_player_round_trips_with_spaces_in_its_name() -> None:
    """A seek-queue entry keeps a name with spaces (it comes last)."""
    entry = Waiting("n1", "p-ann", "Ann of Green Gables")
    assert Waiting.parse(entry.text()) == entry


@pytest.mark.parametrize("text", ["", "x", "7 {", "7 {\"b\": 6}", "7 {\"b\": 6, \"j\": [1]}", "-1",
                                  "7 {\"b\": 6, \"e\": [0, 1, \"no-such-reason\"]}"])
def test_unreadable_match_notices_are_typed_errors(text: str) -> None:
    """A change notice that does not parse raises BusMessageError (the listener skips it and reads the database)."""
    with pytest.raises(BusMessageError):
        parse_match_notice(text)


@pytest.mark.parametrize("text", ["", "left", "paired n1 p1", "on n1", "hello n1 p1", "off n1 p1 extra",
                                  "event e1", "event e1 -3"])
def test_unreadable_node_notices_and_entries_are_typed_errors(text: str) -> None:
    """A node notice or seek entry that does not parse raises BusMessageError."""
    with pytest.raises(BusMessageError):
        parse_node_notice(text)
    if text.count(" ") < 2:
        with pytest.raises(BusMessageError):
            Waiting.parse(text)


@pytest.mark.parametrize(("text", "notice"), [
    ('9 {"b":8,"a":[5,1,"3",59000,58250,1795000000.25],"e":null}',
     Changed(9, 8, Acted(5, 1, "3", (59_000, 58_250), 1_795_000_000.25, None, 0.0))),
    ('12 {"b":10,"a":[9,0,"S",1,2,1.5],"e":[-4,1,"empty"]}',
     Changed(12, 10, Acted(9, 0, "S", (1, 2), 1.5, Ended(-4, 1, EndReason.EMPTY)))),
])
def test_a_notice_of_the_previous_version_is_read_with_no_age(text: str, notice: Changed) -> None:
    """During a rolling upgrade a node of the previous version sends an action without its `age` (six fields, as
    its `Changed.text` printed them): it is read, with an age of 0, not refused as unreadable."""
    assert parse_match_notice(text) == notice


def test_fields_a_newer_version_appends_are_ignored() -> None:
    """A carried change with more fields than this version knows (a newer node's) is read by the fields it knows."""
    acted = Changed(9, 8, Acted(5, 1, "3", (59_000, 58_250), 1.5, None, 0.25))
    assert parse_match_notice('9 {"b":8,"a":[5,1,"3",59000,58250,1.5,0.25,"new"],"e":null,"x":1}') == acted
    joined = Changed(3, 2, Joined(1, "p-bob", "bob", None))
    assert parse_match_notice('3 {"b":2,"j":[1,"p-bob","bob",null,7]}') == joined

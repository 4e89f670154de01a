"""Event messages on the wire: each round-trips through the decoders and validates against the published schema."""

from __future__ import annotations

import json

import jsonschema
import pytest

from protocol.errors import BadFieldError
from protocol.event_messages import (
    CreateEvent,
    CrossRow,
    EntrantRow,
    EventList,
    EventState,
    EventSummary,
    FetchEvent,
    JoinEvent,
    LeaveEvent,
    ListEvents,
    PairingRow,
)
from protocol.event_settings import EventKind, EventSettings
from protocol.messages import Message, decode_client, decode_server, encode
from protocol.schema import wire_schema

SWISS = EventSettings.checked(name="Club night", kind="swiss", rounds=3, variant="kalah(6,4,pie=on,clock=60+1)")
REQUESTS: list[Message] = [
    ListEvents(), ListEvents(status="finished", limit=10), FetchEvent(event_id="e1", follow=True),
    CreateEvent(settings=SWISS, bots=["greedy", "minimax:4"]), JoinEvent(event_id="e1"),
    JoinEvent(event_id="e1", bot="random"), LeaveEvent(event_id="e1"),
]
REPLIES: list[Message] = [
    EventList(events=[EventSummary(event_id="e1", name="Club night", kind=EventKind.SWISS, variant=SWISS.variant,
                                   status="running", creator="alice", entrants=7, max_entrants=32, round=2,
                                   rounds=3, created_at=1.5e9)]),
    EventState(event_id="e1", seq=4, settings=SWISS, creator="alice", status="running", created_at=1.5e9,
               started_at=1.5e9 + 60, round=1, rounds=3,
               standings=[EntrantRow(rank=1, name="alice", kind="person", active=True, score=1.0, wins=1),
                          EntrantRow(rank=2, name="bot:greedy", kind="bot", active=True, score=0.0, losses=1)],
               pairings=[PairingRow(round=1, table=1, south="alice", north="bot:greedy", match_id="e1-r1-t1",
                                    result="1-0"),
                         PairingRow(round=1, table=2, south="carol", result="bye")],
               pairings_total=2, crosstable=[CrossRow(rank=1, name="alice", score=1.0, cells=["2s1"])]),
]


@pytest.mark.parametrize("msg", REQUESTS, ids=lambda m: m.type)
def test_event_requests_round_trip(msg: Message) -> None:
    """Every event request encodes and decodes back to an equal value."""
    assert decode_client(encode(msg)) == msg


@pytest.mark.parametrize("msg", REPLIES, ids=lambda m: m.type)
def test_event_replies_round_trip(msg: Message) -> None:
    """Every event reply encodes and decodes back to an equal value."""
    assert decode_server(encode(msg)) == msg


def test_a_pairing_row_prints_its_record_line() -> None:
    """The wire's pairing prints the record line the server's `Pairing` prints (and parses back)."""
    from server.tournaments.records import Pairing

    state = REPLIES[1]
    assert isinstance(state, EventState)
    lines = [p.line() for p in state.pairings]
    assert lines == ["1.1 alice-bot:greedy 1-0 e1-r1-t1", "1.2 carol bye"]
    assert [str(Pairing.parse(line)) for line in lines] == lines


def test_the_published_schema_holds_the_event_messages() -> None:
    """The JSON Schema accepts every event message and refuses settings that are not an event's."""
    validator = jsonschema.Draft202012Validator(wire_schema())
    for msg in [*REQUESTS, *REPLIES]:
        validator.validate(json.loads(encode(msg)))
    bad = {"type": "event_create", "settings": {"name": "x", "kind": "knockout"}}
    assert not validator.is_valid(bad)
    with pytest.raises(BadFieldError):
        decode_client(json.dumps(bad))


def test_settings_that_do_not_fit_are_a_bad_field_on_the_wire() -> None:
    """Settings refused as a whole (an arena with rounds) name the problem in the `bad_field` message."""
    with pytest.raises(BadFieldError, match="a Swiss needs rounds"):
        decode_client(json.dumps({"type": "event_create",
                                  "settings": {"name": "x", "kind": "arena", "duration_s": 60, "rounds": 2}}))

"""The published JSON Schema of the wire protocol: current with the models, and true to the decoders."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from protocol.messages import encode
from protocol.schema import main, schema_text, wire_schema
from tests.helpers.paths import ROOT_DIR
from tests.protocol.test_messages import ACTION, CLIENT_MESSAGES, OVER, SERVER_MESSAGES

ROOT = ROOT_DIR
PUBLISHED = ROOT / "docs" / "wire-schema.json"


def test_published_schema_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/wire-schema.json is exactly what `python -m protocol.schema` prints from today's models."""
    main()
    printed = capsys.readouterr().out
    assert printed == schema_text()
    assert PUBLISHED.read_text() == printed, "stale: run `python -m protocol.schema > docs/wire-schema.json`"


def test_schema_names_both_directions_and_every_event_kind() -> None:
    """Client and server unions, told apart by `type`; events by `kind`; reasons and error codes as closed lists."""
    defs = wire_schema()["$defs"]
    server = defs["ServerMessage"]["discriminator"]["mapping"]
    assert server["event"] == "#/$defs/MatchEvent" and server["catch_up"] == "#/$defs/CatchUp"
    assert set(defs["MatchEvent"]["discriminator"]["mapping"]) == {"joined", "action", "game_over"}
    assert "move" in defs["ClientMessage"]["discriminator"]["mapping"]
    assert set(defs["EndReason"]["enum"]) == {"empty", "majority", "repetition", "resign", "time", "abandonment",
                                              "forfeit", "aborted"}
    assert "bad_notation" in defs["ErrorMessage"]["properties"]["code"]["enum"]


def test_schema_accepts_every_message_and_refuses_bad_ones() -> None:
    """A JSON Schema validator accepts every example message and refuses what the decoders refuse."""
    validator = jsonschema.Draft202012Validator(wire_schema())
    for msg in [*CLIENT_MESSAGES, *SERVER_MESSAGES]:
        validator.validate(json.loads(encode(msg)))
    bad: list[dict[str, Any]] = [
        {**json.loads(encode(OVER)), "reason": "boredom"},
        {**json.loads(encode(ACTION)), "kind": "left"},
        {**json.loads(encode(ACTION)), "capture": [11, 6]},
        {"type": "error", "code": "no_such_code", "message": "?"},
        {"type": "move", "match_id": "m1", "ply": 0, "bin": 0},
    ]
    for message in bad:
        assert not validator.is_valid(message), message

"""Property tests of the wire models against the published schema (docs/wire-schema.json): what the schema allows
decodes or is refused with a typed error, and what the decoders accept the schema allows."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.messages import MessageError, decode_client, decode_server, encode
from tests.helpers.paths import ROOT_DIR

SCHEMA = json.loads((ROOT_DIR / "docs" / "wire-schema.json").read_text())
DEFS: dict[str, Any] = SCHEMA["$defs"]
CLIENT_SCHEMA = jsonschema.Draft202012Validator({"$ref": "#/$defs/ClientMessage", "$defs": DEFS})
SERVER_SCHEMA = jsonschema.Draft202012Validator({"$ref": "#/$defs/ServerMessage", "$defs": DEFS})
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=6)


def from_schema(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Instances of one schema node (the keywords the published schema uses), references resolved in `$defs`."""
    if "$ref" in node:
        return st.deferred(lambda: from_schema(DEFS[node["$ref"].rsplit("/", 1)[1]]))
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            return st.one_of([from_schema(option) for option in node[key]])
    kind = node.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(node.get("minimum", -(2**40)), node.get("maximum", 2**40))
    if kind == "number":
        return st.floats(node.get("minimum"), node.get("maximum"), allow_nan=False, allow_infinity=False)
    if kind == "string":
        low, high = node.get("minLength", 0), node.get("maxLength", 40)
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: low <= len(s) <= high)
        return st.text(min_size=low, max_size=min(high, 40))
    if kind == "array":
        return st.lists(from_schema(node.get("items", {})), max_size=min(node.get("maxItems", 4), 4))
    if kind == "object":
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", ()))
        return st.fixed_dictionaries({k: from_schema(v) for k, v in props.items() if k in required},
                                     optional={k: from_schema(v) for k, v in props.items() if k not in required})
    return JSON_VALUES


def mutated(instance: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Schema instances with one field dropped, retyped or added."""

    def change(pair: tuple[dict[str, Any], str, Any]) -> dict[str, Any]:
        """Apply one change: a field (maybe new) set to any JSON value, or dropped when the value is None."""
        msg, key, value = pair
        out = dict(msg)
        if value is None and key in out and key != "type":
            del out[key]
        else:
            out[key] = value
        return out

    keys = st.sampled_from(["type", "match_id", "ply", "variant", "name", "limit", "since", "seq", "extra"])
    return st.tuples(instance, keys, JSON_VALUES).map(change)


CLIENT = from_schema({"$ref": "#/$defs/ClientMessage"})
SERVER = from_schema({"$ref": "#/$defs/ServerMessage"})
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.filter_too_much])


@SETTINGS
@given(CLIENT)
def test_what_the_schema_allows_a_client_to_send_decodes_or_is_refused_typed(msg: dict[str, Any]) -> None:
    """A client message the schema allows decodes, and its canonical form the schema allows too; or the decoder
    refuses it with `bad_field` (a variant or position text the schema only knows as a string)."""
    try:
        decoded = decode_client(json.dumps(msg))
    except MessageError as exc:
        assert exc.code == "bad_field", (exc.code, msg)
        return
    CLIENT_SCHEMA.validate(json.loads(encode(decoded)))


@SETTINGS
@given(SERVER)
def test_what_the_schema_allows_a_server_to_send_decodes_or_is_refused_typed(msg: dict[str, Any]) -> None:
    """A server message the schema allows decodes (or is refused with a typed error), and re-encodes within it."""
    try:
        decoded = decode_server(json.dumps(msg))
    except MessageError:
        return
    SERVER_SCHEMA.validate(json.loads(encode(decoded)))


@SETTINGS
@given(mutated(CLIENT))
def test_what_the_client_decoder_accepts_the_schema_allows(msg: dict[str, Any]) -> None:
    """The schema is no stricter than the decoder: a client message the decoder accepts, the schema accepts."""
    try:
        decode_client(json.dumps(msg))
    except MessageError:
        return
    errors = list(CLIENT_SCHEMA.iter_errors(msg))
    assert not errors, (msg, [e.message for e in errors][:3])


@SETTINGS
@given(mutated(SERVER))
def test_what_the_server_decoder_accepts_the_schema_allows(msg: dict[str, Any]) -> None:
    """The schema is no stricter than the decoder for what servers send."""
    try:
        decode_server(json.dumps(msg))
    except MessageError:
        return
    errors = list(SERVER_SCHEMA.iter_errors(msg))
    assert not errors, (msg, [e.message for e in errors][:3])

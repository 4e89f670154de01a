"""The wire protocol as one JSON Schema, generated from the message models.

`python -m protocol.schema > docs/wire-schema.json` writes the published copy; a test fails
when that file is stale. `$defs/ClientMessage` is what a client may send, `$defs/ServerMessage`
what it may receive; both are told apart by `type`, and match events further by `kind`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from protocol.messages import AnyMatchEvent, ClientMessage, ServerMessage
from protocol.wire_base import MAX_MESSAGE_BYTES, MAX_SERVER_MESSAGE_BYTES, PROTOCOL_VERSION

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _named(node: Any, inline: Any, ref: dict[str, str]) -> Any:
    """`node` with every copy of the `inline` schema replaced by `ref` (a union pydantic writes out in place)."""
    if node == inline:
        return ref
    if isinstance(node, dict):
        named = {key: _named(value, inline, ref) for key, value in node.items()}
        if isinstance(node.get("mapping"), dict):  # a discriminator's mapping names its schemas by reference
            named["mapping"] = {key: ref["$ref"] if value == ref else value for key, value in named["mapping"].items()}
        return named
    if isinstance(node, list):
        return [_named(value, inline, ref) for value in node]
    return node


def _tags_required(model: dict[str, Any]) -> None:
    """Mark a message's `type` and `kind` tags required, as the decoders read them (a model gives them defaults,
    which makes them optional in the generated schema)."""
    props = model.get("properties", {})
    tags = [tag for tag in ("type", "kind") if "const" in props.get(tag, {})]
    if tags:
        model["required"] = [*tags, *(field for field in model.get("required", []) if field not in tags)]


def wire_schema() -> dict[str, Any]:
    """The JSON Schema of every message of both directions, with shared definitions."""
    unions: list[tuple[str, TypeAdapter[Any]]] = [
        ("ClientMessage", TypeAdapter(ClientMessage)),
        ("ServerMessage", TypeAdapter(ServerMessage)),
        ("MatchEvent", TypeAdapter(AnyMatchEvent)),
    ]
    refs, shared = TypeAdapter.json_schemas([(name, "validation", adapter) for name, adapter in unions])
    defs: dict[str, Any] = dict(shared.get("$defs", {}))
    for name, _ in unions:
        defs[name] = refs[(name, "validation")]
    for value in defs.values():
        _tags_required(value)
    event = {"$ref": "#/$defs/MatchEvent"}
    defs = {name: value if name == "MatchEvent" else _named(value, defs["MatchEvent"], event)
            for name, value in defs.items()}
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Kalah Arena wire protocol",
        "description": (
            f"Protocol version {PROTOCOL_VERSION}. One JSON object per websocket frame: a ClientMessage from a "
            f"client (at most {MAX_MESSAGE_BYTES} bytes), a ServerMessage from the server (at most "
            f"{MAX_SERVER_MESSAGE_BYTES} bytes). Generated from protocol/messages.py."
        ),
        "oneOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The schema as the text of `docs/wire-schema.json`."""
    return json.dumps(wire_schema(), indent=2) + "\n"


def main() -> None:
    """Print the schema."""
    print(schema_text(), end="")


if __name__ == "__main__":
    main()

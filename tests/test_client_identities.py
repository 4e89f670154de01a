"""Remembered identities: one token per server, only for the same name, robust to a bad file, and older files' tokens
found by the database they belong to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.embedded import default_db_path
from client.identities import load_token, save_token, server_keys
from tests.conftest import Serve
from tests.wire import Client

TOKEN = "pabc123-0123456789abcdefXYZ"


def test_token_round_trip_per_server_and_name(tmp_path: Path) -> None:
    """A saved token comes back for the same server and name only."""
    path = tmp_path / "cfg" / "identities.json"
    save_token(path, "ws://a:1", "ann", TOKEN)
    save_token(path, "ws://b:2", "bob", TOKEN + "b")
    assert load_token(path, "ws://a:1", "ann") == TOKEN
    assert load_token(path, "ws://a:1", "someone") is None
    assert load_token(path, "ws://b:2", "bob") == TOKEN + "b"
    assert load_token(path, "ws://c:3", "ann") is None


def test_missing_or_corrupt_file_means_no_token(tmp_path: Path) -> None:
    """No file, or a file that is not our JSON, gives no token and can be overwritten."""
    path = tmp_path / "identities.json"
    assert load_token(path, "ws://a:1", "ann") is None
    path.write_text("not json [")
    assert load_token(path, "ws://a:1", "ann") is None
    save_token(path, "ws://a:1", "ann", TOKEN)
    assert load_token(path, "ws://a:1", "ann") == TOKEN


def test_a_database_identity_is_trusted_only_on_this_machine() -> None:
    """A token is filed under the database only for the embedded server or a loopback address; a remote server
    that names a database gets no token but the one its own address was given."""
    assert server_keys("ws://127.0.0.1:8765", "s1") == ["store:s1", "ws://127.0.0.1:8765"]
    assert server_keys("ws://localhost:8765", "s1") == ["store:s1", "ws://localhost:8765"]
    assert server_keys("ws://[::1]:8765", "s1") == ["store:s1", "ws://[::1]:8765"]
    assert server_keys("ws://127.0.0.1:40123", "s1", embedded="embedded:default") == ["store:s1", "embedded:default"]
    assert server_keys("ws://arena.example:8765", "s1") == ["ws://arena.example:8765"]
    assert server_keys("ws://10.0.0.7:8765", "s1") == ["ws://10.0.0.7:8765"]
    assert server_keys("ws://127.0.0.1:8765", None) == ["ws://127.0.0.1:8765"]


def test_first_key_with_the_name_wins(tmp_path: Path) -> None:
    """Looked up under several keys, the first that holds the name gives its token; saving files it under each."""
    path = tmp_path / "identities.json"
    save_token(path, ["store:s1", "ws://a:1"], "ann", TOKEN)
    save_token(path, "ws://b:2", "ann", TOKEN + "b")
    assert load_token(path, ["store:s1", "ws://b:2"], "ann") == TOKEN
    assert load_token(path, ["store:s2", "ws://b:2"], "ann") == TOKEN + "b"
    assert load_token(path, "ws://a:1", "ann") == TOKEN


async def test_an_older_files_embedded_token_works_on_a_served_database_at_once(
        serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file from before databases had identities holds the per-user database's token under `embedded:default`
    only. `kalah play --server` on a loopback server of that database finds it at once (no embedded `kalah play`
    first), the server takes it, and it is filed under the database from then on; a server of another database,
    or a remote address, is never given it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    served = await serve(default_db_path())
    ann = await Client.open(served.url, "ann")
    token = str(ann.welcome["token"])
    await ann.close()
    path = tmp_path / "identities.json"
    path.write_text(json.dumps({"embedded:default": {"name": "ann", "token": token}}))
    store = await served.arena.storage.store_id()
    assert load_token(path, server_keys(served.url, store), "ann") == token
    assert json.loads(path.read_text())[f"store:{store}"] == {"name": "ann", "token": token}
    again = await Client.open(served.url, "ann", token=token)
    assert again.welcome["name"] == "ann"
    await again.close()
    other = await serve(tmp_path / "other.sqlite3")
    other_keys = server_keys(other.url, await other.arena.storage.store_id())
    assert load_token(path, other_keys, "ann") is None
    assert load_token(path, server_keys("ws://arena.example:8765", store), "ann") is None
    assert load_token(path, server_keys(served.url, store), "bob") is None

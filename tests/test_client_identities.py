"""Remembered identities: one token per server, only for the same name, robust to a bad file."""

from __future__ import annotations

from pathlib import Path

from client.identities import load_token, save_token

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

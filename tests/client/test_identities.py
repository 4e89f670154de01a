"""Remembered identities: one token per server and name, robust to a bad file, a replaced token said and kept, older
files read (one identity per server; tokens found by the database they belong to)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from client.app import KalahApp, Launch
from client.embedded import default_db_path
from client.identities import load_token, save_token, server_keys
from tests.conftest import Serve
from tests.helpers.wire import Client

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


def test_a_second_name_on_a_server_keeps_the_first(tmp_path: Path) -> None:
    """Saving another name's token on the same server keeps the first name's: both come back."""
    path = tmp_path / "identities.json"
    keys = ["store:s1", "ws://127.0.0.1:8765"]
    assert not save_token(path, keys, "zed", TOKEN)
    assert not save_token(path, keys, "alice", TOKEN + "a")
    assert load_token(path, keys, "zed") == TOKEN
    assert load_token(path, keys, "alice") == TOKEN + "a"
    assert load_token(path, "ws://127.0.0.1:8765", "zed") == TOKEN


def test_the_format_of_one_identity_per_server_is_read_and_rewritten(tmp_path: Path) -> None:
    """A file of the older format (one name and token per key) gives that name's token; the next save keeps it
    beside the new name's, in the current format."""
    path = tmp_path / "identities.json"
    path.write_text(json.dumps({"ws://a:1": {"name": "zed", "token": TOKEN}, "ws://b:2": {"name": "x"}}))
    assert load_token(path, "ws://a:1", "zed") == TOKEN
    assert load_token(path, "ws://b:2", "x") is None
    save_token(path, "ws://a:1", "alice", TOKEN + "a")
    assert load_token(path, "ws://a:1", "zed") == TOKEN
    assert load_token(path, "ws://a:1", "alice") == TOKEN + "a"
    assert json.loads(path.read_text())["servers"] == {"ws://a:1": {"zed": TOKEN, "alice": TOKEN + "a"},
                                                       "ws://b:2": {}}


def test_a_replaced_token_is_said_and_kept(tmp_path: Path) -> None:
    """Saving a different token for a name that has one says so (True) and keeps the old one under `replaced`;
    saving the same token again says nothing."""
    path = tmp_path / "identities.json"
    save_token(path, "ws://a:1", "zed", TOKEN)
    assert not save_token(path, "ws://a:1", "zed", TOKEN)
    assert save_token(path, "ws://a:1", "zed", TOKEN + "new")
    assert load_token(path, "ws://a:1", "zed") == TOKEN + "new"
    assert json.loads(path.read_text())["replaced"] == [{"server": "ws://a:1", "name": "zed", "token": TOKEN}]


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
    assert json.loads(path.read_text())["servers"][f"store:{store}"] == {"ann": token}
    again = await Client.open(served.url, "ann", token=token)
    assert again.welcome["name"] == "ann"
    await again.close()
    other = await serve(tmp_path / "other.sqlite3")
    other_keys = server_keys(other.url, await other.arena.storage.store_id())
    assert load_token(path, other_keys, "ann") is None
    assert load_token(path, server_keys("ws://arena.example:8765", store), "ann") is None
    assert load_token(path, server_keys(served.url, store), "bob") is None


def _welcomed(app: KalahApp) -> bool:
    """Whether the app's connection has been welcomed."""
    return app.connection is not None and app.connection.welcome is not None


async def test_the_terminal_client_keeps_each_names_identity_on_a_server(tmp_path: Path) -> None:
    """`kalah play --name zed`, then `--name alice`, then `--name zed` on one server: the third session is zed again
    (before: alice's token replaced zed's and the server said "the name 'zed' is taken")."""
    from server.assembly import start_server
    from tests.helpers.client_hosts import until

    server = await start_server(tmp_path / "arena.sqlite3")
    identities = tmp_path / "identities.json"
    try:
        for name in ("zed", "alice", "zed"):
            app = KalahApp(Launch(url=server.url, name=name, animate=False, retry_delays=(0.05,),
                                  identity_file=identities))
            async with app.run_test(size=(100, 30)) as pilot:
                await until(pilot, partial(_welcomed, app))
                assert app.connection is not None and app.connection.welcome is not None
                assert app.connection.welcome.name == name
        assert set(json.loads(identities.read_text())["servers"][server.url]) == {"zed", "alice"}
    finally:
        await server.close()


async def test_the_terminal_client_says_when_it_replaces_a_token(tmp_path: Path) -> None:
    """A token the server no longer knows (a fresh database) is replaced by the new one, with a notice that says so
    and where the old one is kept."""
    from server.assembly import start_server
    from tests.helpers.client_hosts import until

    server = await start_server(tmp_path / "arena.sqlite3")
    identities = tmp_path / "identities.json"
    save_token(identities, server.url, "zed", TOKEN)
    try:
        app = KalahApp(Launch(url=server.url, name="zed", animate=False, retry_delays=(0.05,),
                              identity_file=identities))
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: any("replaced" in str(n.message) for n in app._notifications))
        assert load_token(identities, server.url, "zed") not in (None, TOKEN)
        assert json.loads(identities.read_text())["replaced"] == [{"server": server.url, "name": "zed", "token": TOKEN}]
    finally:
        await server.close()

"""Remembered identities: the token the server gave each name, per server, so the next session resumes it.

Stored as JSON in the per-user config directory (`identities.json`), readable only by the user:
`{"version": 2, "servers": {KEY: {NAME: TOKEN}}, "replaced": [...]}`, one token per server and
name, so a second name on a server never touches the first. A token is filed under the address
it came from and, for a server on this machine (the embedded one, or any on a loopback
address), under the database it belongs to (`store:ID`, the identity the server announces in
its handshake): `kalah play` on the per-user database and `kalah serve` on the same file then
find one identity, whichever way the client came in. A token is never sent to a remote address
on the strength of a database identity it announces (any server can claim one), only to the
address it was given by. A token replaced by another for the same server and name (the server
no longer knew it) is kept under `replaced`, and `save_token` says it was replaced.

Older files are read too: the format before this one kept one identity per key
(`{KEY: {"name": NAME, "token": TOKEN}}`), and is read as that one name's token under KEY (and
written back in this format at the next save). Files written before databases had identities
keep the embedded server's tokens under `embedded:DB` (`embedded:default` for the per-user
database) only: read for a server on this machine, such a token is filed under its database's
identity, read from the database file, the first time that database is named (`load_token`).
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

APP_NAME = "kalah-arena"
EMBEDDED = "embedded:"
"""The prefix of the keys of the embedded server's tokens (`embedded:default`: the per-user database)."""


def default_identity_file() -> Path:
    """`<user config dir>/kalah-arena/identities.json`."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "identities.json"


VERSION = 2
"""The file's format: `{"version": 2, "servers": {KEY: {NAME: TOKEN}}, "replaced": [...]}`."""
MAX_REPLACED = 50
"""Replaced tokens kept (the newest)."""

Tokens = dict[str, dict[str, str]]
"""Each server key's tokens by name."""


@dataclass
class IdentityFile:
    """The file's contents: the tokens by server key and name, and the tokens replaced since (oldest first)."""

    servers: Tokens = field(default_factory=dict)
    replaced: list[dict[str, str]] = field(default_factory=list)


def _read(path: Path) -> IdentityFile:
    """The whole file (an older format read as this one), or nothing if it is missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return IdentityFile()
    if not isinstance(data, dict):
        return IdentityFile()
    if data.get("version") == VERSION:
        servers = data.get("servers")
        replaced = data.get("replaced")
        return IdentityFile(
            {key: {n: t for n, t in names.items() if isinstance(n, str) and isinstance(t, str)}
             for key, names in (servers if isinstance(servers, dict) else {}).items() if isinstance(names, dict)},
            [r for r in (replaced if isinstance(replaced, list) else []) if isinstance(r, dict)
             and all(isinstance(v, str) for v in r.values())])
    return IdentityFile({key: _migrated(entry) for key, entry in data.items() if isinstance(entry, dict)})


def _migrated(entry: dict[str, object]) -> dict[str, str]:
    """An entry of the format before names were kept apart (`{"name": NAME, "token": TOKEN}`) as `{NAME: TOKEN}`."""
    name, token = entry.get("name"), entry.get("token")
    return {name: token} if isinstance(name, str) and isinstance(token, str) else {}


def is_loopback(url: str) -> bool:
    """Whether a server address is on this machine (`localhost`, 127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server_keys(url: str | None, store: str | None, embedded: str | None = None) -> list[str]:
    """Where a server's identity is filed, the most exact first: its database (a server on this machine
    only), its address (not the embedded server's, whose port changes), and `embedded` (an older name)."""
    keys = []
    if store and (embedded is not None or (url is not None and is_loopback(url))):
        keys.append(f"store:{store}")
    if url and embedded is None:
        keys.append(url)
    if embedded is not None:
        keys.append(embedded)
    return keys


def load_token(path: Path, server: str | list[str], name: str,
               store_of: Callable[[Path | None], str | None] | None = None) -> str | None:
    """The token remembered for `name` under `server` (the first of several keys that has one), if any. For a
    server on this machine (a `store:ID` key) an older file's embedded token for the same database is found too,
    and filed under `store:ID` from then on (`store_of`: a database file's identity; default: read the file)."""
    data = _read(path)
    keys = [server] if isinstance(server, str) else server
    for key in keys:
        token = data.servers.get(key, {}).get(name)
        if token is not None:
            return token
    store = next((key for key in keys if key.startswith("store:")), None)
    return None if store is None else _adopt_embedded(path, data, store, name, store_of)


def _database_store(db_path: Path | None) -> str | None:
    """The identity of a database file on this machine (None: the per-user one), read from the file."""
    from client.embedded import store_of

    return store_of(db_path)


def _adopt_embedded(path: Path, data: IdentityFile, store: str, name: str,
                    store_of: Callable[[Path | None], str | None] | None) -> str | None:
    """`name`'s token kept under an older `embedded:DB` key whose database is `store` (`store:ID`), now filed under
    `store` as well; None if there is none."""
    read_store = store_of or _database_store
    for key in [key for key in data.servers if key.startswith(EMBEDDED)]:
        token = data.servers[key].get(name)
        db = key.removeprefix(EMBEDDED)
        if token is not None and f"store:{read_store(None if db == 'default' else Path(db))}" == store:
            data.servers.setdefault(store, {})[name] = token
            _write(path, data)
            return token
    return None


def save_token(path: Path, server: str | list[str], name: str, token: str) -> bool:
    """Remember `name`'s token under `server` (each of several keys), beside the other names' tokens. True if it
    replaced another token of `name` there (which is kept under `replaced`, not lost): the caller says so."""
    data = _read(path)
    replaced = False
    for key in [server] if isinstance(server, str) else server:
        names = data.servers.setdefault(key, {})
        old = names.get(name)
        if old is not None and old != token:
            replaced = True
            data.replaced = [*data.replaced, {"server": key, "name": name, "token": old}][-MAX_REPLACED:]
        names[name] = token
    _write(path, data)
    return replaced


def replaced_text(name: str, path: Path) -> str:
    """The line that says a token of `name` was replaced, and where the old one is."""
    return (f"The token kept for {name!r} on this server was replaced by the one it just gave (the old one is "
            f"kept under \"replaced\" in {path}).")


def _write(path: Path, data: IdentityFile) -> None:
    """Replace the file with `data`, readable only by the user."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"version": VERSION, "servers": data.servers, "replaced": data.replaced}, f, indent=1,
                  sort_keys=True)
    os.replace(tmp, path)

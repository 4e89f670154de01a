"""Remembered identities: the token the server gave a name, per server, so the next session resumes it.

Stored as JSON in the per-user config directory (`identities.json`), readable only by the user.
A token is filed under the address it came from and, for a server on this machine (the embedded
one, or any on a loopback address), under the database it belongs to (`store:ID`, the identity
the server announces in its handshake): `kalah play` on the per-user database and `kalah serve`
on the same file then find one identity, whichever way the client came in. A token is never
sent to a remote address on the strength of a database identity it announces (any server can
claim one), only to the address it was given by.
"""

from __future__ import annotations

import ipaddress
import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

APP_NAME = "kalah-arena"


def default_identity_file() -> Path:
    """`<user config dir>/kalah-arena/identities.json`."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "identities.json"


def _read(path: Path) -> dict[str, dict[str, str]]:
    """The whole file, or nothing if it is missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


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


def load_token(path: Path, server: str | list[str], name: str) -> str | None:
    """The token remembered for `name` under `server` (the first of several keys that has one), if any."""
    data = _read(path)
    for key in [server] if isinstance(server, str) else server:
        entry = data.get(key, {})
        token = entry.get("token")
        if entry.get("name") == name and isinstance(token, str):
            return token
    return None


def save_token(path: Path, server: str | list[str], name: str, token: str) -> None:
    """Remember `name`'s token under `server` (each of several keys; one identity per key)."""
    data = _read(path)
    for key in [server] if isinstance(server, str) else server:
        data[key] = {"name": name, "token": token}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)

"""Remembered identities: the token the server gave a name, per server, so the next session resumes it.

Stored as JSON in the per-user config directory (`identities.json`), readable only by the user.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def load_token(path: Path, server: str, name: str) -> str | None:
    """The token remembered for `name` on `server`, if any."""
    entry = _read(path).get(server, {})
    token = entry.get("token")
    return token if entry.get("name") == name and isinstance(token, str) else None


def save_token(path: Path, server: str, name: str, token: str) -> None:
    """Remember `name`'s token on `server` (one identity per server)."""
    data = _read(path)
    data[server] = {"name": name, "token": token}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)

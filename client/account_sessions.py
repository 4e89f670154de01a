"""The terminal's signed-in sessions: one account session per server, in a file only its owner can read.

`<user config dir>/kalah-arena/sessions.json` holds `{"version": 1, "servers": {URL: {"name": NAME,
"session_id": ID, "session": SECRET}}}`. The file is created with mode 0600 and written whole to a
0600 file beside it, then renamed over it, so the secret is never readable by another user, even for
a moment. `kalah login` writes it, `kalah logout` removes the server's entry, `kalah play` and
`kalah sessions` read it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "kalah-arena"
VERSION = 1


def default_session_file() -> Path:
    """`<user config dir>/kalah-arena/sessions.json`."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "sessions.json"


@dataclass(frozen=True)
class StoredSession:
    """A signed-in session on one server: the account's name, the session's id and its secret."""

    name: str
    session_id: str
    session: str


def _read(path: Path) -> dict[str, StoredSession]:
    """Every server's session (nothing if the file is missing or unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    found = {}
    for url, entry in (servers if isinstance(servers, dict) else {}).items():
        if isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("name", "session_id", "session")):
            found[url] = StoredSession(entry["name"], entry["session_id"], entry["session"])
    return found


def _write(path: Path, sessions: dict[str, StoredSession]) -> None:
    """Write the file whole, readable and writable by its owner only (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": VERSION, "servers": {
        url: {"name": s.name, "session_id": s.session_id, "session": s.session} for url, s in sessions.items()}},
        indent=2)
    spare = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(spare, path)


def load_session(path: Path, url: str) -> StoredSession | None:
    """The session remembered for the server `url`, if any."""
    return _read(path).get(url)


def save_session(path: Path, url: str, session: StoredSession) -> None:
    """Remember the session for the server `url` (replacing the one before)."""
    sessions = _read(path)
    sessions[url] = session
    _write(path, sessions)


def forget_session(path: Path, url: str) -> bool:
    """Forget the server's session; whether there was one."""
    sessions = _read(path)
    if sessions.pop(url, None) is None:
        return False
    _write(path, sessions)
    return True

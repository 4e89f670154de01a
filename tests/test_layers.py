"""Import contracts between the layers (ARCHITECTURE.md principle 11)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imports_of(package: str) -> dict[str, set[str]]:
    """Top-level modules imported by each file of a package."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def offenders(package: str, forbidden: tuple[str, ...], allow: tuple[str, ...] = ()) -> list[str]:
    """Files of `package` importing a forbidden module (allowed files excepted)."""
    bad = []
    for file, names in imports_of(package).items():
        if file in allow:
            continue
        bad += [f"{file}: {n}" for n in names if n.split(".")[0] in forbidden or n in forbidden]
    return bad


def test_protocol_is_pure() -> None:
    """protocol/ imports no network, storage, UI, or other project layer."""
    forbidden = ("websockets", "aiosqlite", "sqlite3", "textual", "asyncio", "socket",
                 "server", "bots", "client", "cli")
    assert offenders("protocol", forbidden) == []


def test_bots_do_not_import_server_or_client() -> None:
    """bots/ depends on protocol only, never on the server, the client or the network."""
    assert offenders("bots", ("server", "client", "websockets", "aiosqlite", "textual")) == []


def test_client_does_not_import_server_or_bots() -> None:
    """client/ talks to the server over the wire; only the embedded launcher may start one."""
    assert offenders("client", ("server", "bots"), allow=("client/embedded.py",)) == []


def test_server_does_not_import_client() -> None:
    """server/ never imports the terminal client or Textual."""
    assert offenders("server", ("client", "textual")) == []


SQL = re.compile(r"\b(SELECT\s[^\"']*\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
                 r"|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX))\b")
"""What a statement of SQL starts with."""


def test_sql_lives_in_storage() -> None:
    """No module outside server/storage/ holds SQL or imports a database driver: storage is the one SQL layer."""
    bad = []
    for package in ("protocol", "server", "bots", "client", "cli"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith("server/storage/") and SQL.search(path.read_text()):
                bad.append(f"{rel}: SQL")
        drivers = offenders(package, ("sqlite3", "aiosqlite", "asyncpg"))
        bad += [o for o in drivers if not o.startswith("server/storage/")]
    assert bad == []


def test_the_arena_never_asks_which_deployment_runs() -> None:
    """No server module tests `cluster is None`, and the arena mixes in nothing: its deployment's collaborators
    (replication, presence, bot turns, identities) are chosen at start-up."""
    from server.arena import Arena

    tests = [path.relative_to(ROOT).as_posix() for path in (ROOT / "server").rglob("*.py")
             if re.search(r"cluster is (not )?None", path.read_text())]
    assert tests == []
    assert Arena.__bases__ == (object,)

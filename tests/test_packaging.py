"""The distribution lists every package of the source tree."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("protocol", "server", "bots", "client", "cli")


def test_every_package_is_listed() -> None:
    """Each folder with an __init__.py under the top-level packages is in pyproject's packages list."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in TOP
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found == listed

"""The distribution lists every package of the source tree."""

from __future__ import annotations

import re
import tomllib

from tests.helpers.paths import ROOT_DIR

ROOT = ROOT_DIR
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


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_install_command_is_the_clones_form_of_a_listed_extra() -> None:
    """Each `pip install` the README and docs show is `pip install -e .` or `-e '.[EXTRA]'` run in the clone, with an
    extra pyproject lists (before: the README said `pip install 'kalah-arena[cluster]'`, docs/operations.md the
    clone form)."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    shown = [(doc.name, m.group(0)) for doc in DOCS for m in re.finditer(r"pip install [^`\n&;#]+", doc.read_text())]
    assert shown
    for doc, command in shown:
        form = re.fullmatch(r"pip install -e (?:\.|'\.\[(\w+)\]')", command.strip())
        assert form is not None, f"{doc}: {command!r} is not the clone's form"
        assert form.group(1) in (None, *extras), f"{doc}: {command!r} names no extra of pyproject"


def test_the_docs_name_only_files_of_the_repository() -> None:
    """Every page a doc names (`NAME.md` in backticks, or a link to a .md file) is in the repository (before:
    docs/rules.md pointed at a `RULES.md` that is not)."""
    for doc in DOCS:
        text = doc.read_text()
        named = re.findall(r"`([\w./-]+\.md)`", text) + re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)", text)
        for name in named:
            assert (doc.parent / name).is_file() or (ROOT / name).is_file(), f"{doc.name} names {name}, not here"

"""Error codes: one list derived from the error classes, every code the server sends in it and in docs/protocol.md."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re

import protocol.errors
from protocol.errors import ERROR_CODES, KalahError
from tests.helpers.paths import ROOT_DIR

ROOT = ROOT_DIR
SENDERS = ("protocol", "server", "bots")
"""The packages whose errors can reach a client: the rules, the server, and the bots it hosts."""


def _import_all(package: str) -> None:
    """Import every module of a package, so that every error class it defines exists."""
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        importlib.import_module(info.name)


def _all_error_classes() -> list[type[KalahError]]:
    """`KalahError` and every subclass defined anywhere in the packages that answer clients."""
    for package in SENDERS:
        _import_all(package)
    found: list[type[KalahError]] = []
    todo: list[type[KalahError]] = [KalahError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def _readme_codes() -> list[str]:
    """The codes the protocol page's **Errors.** paragraph lists (every `snake_case` word in backquotes)."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    paragraph = text[text.index("**Errors.**"):].split("\n\n")[0]
    return re.findall(r"`([a-z]+(?:_[a-z]+)*)`", paragraph)


def test_every_error_class_has_a_listed_code() -> None:
    """Each error class, wherever it is defined, carries a code of `ERROR_CODES`."""
    classes = _all_error_classes()
    assert {cls.__name__ for cls in classes} >= {"AlreadyHelloError", "InternalError", "IllegalRecordError"}
    assert {f"{cls.__module__}.{cls.__name__}": cls.code for cls in classes if cls.code not in ERROR_CODES} == {}


def test_codes_are_derived_one_per_class() -> None:
    """`ERROR_CODES` holds each class's code once, and only the abstract bases share one (`internal_error`)."""
    own = [cls for cls in vars(protocol.errors).values() if isinstance(cls, type) and issubclass(cls, KalahError)]
    assert set(ERROR_CODES) == {cls.code for cls in own} and len(set(ERROR_CODES)) == len(ERROR_CODES)
    shared = [cls.__name__ for cls in own if "code" not in vars(cls) or cls.code == "internal_error"]
    assert sorted(shared) == ["InternalError", "KalahError", "MessageError", "ServerError"]


def test_server_sends_codes_only_from_error_classes() -> None:
    """Every `ErrorMessage` the server builds takes its code from an error (`exc.code`), never a literal."""
    calls = []
    for path in (ROOT / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ErrorMessage":
                code = next((k.value for k in node.keywords if k.arg == "code"), None)
                calls.append((path.name, isinstance(code, ast.Attribute) and code.attr == "code"))
    assert calls and all(ok for _, ok in calls), calls


def test_protocol_docs_list_exactly_the_codes() -> None:
    """The protocol page's error paragraph names every code of `ERROR_CODES`, once, and no other."""
    listed = _readme_codes()
    assert sorted(listed) == sorted(ERROR_CODES)

"""A command's flags from a TOML file (`kalah serve --config FILE`), so a service file stays one line.

Each key is a flag of the command without its dashes (`max-per-address = 64`, or `max_per_address`); a repeatable
flag takes a list (`trusted-proxy = ["127.0.0.1/32"]`), a switch `true` or `false`. Every value is checked as the
flag's own would be, and a flag given on the command line wins over the file (a repeatable one replaces the file's
list). A key that is not a flag, or a value a flag refuses, stops the command in one line naming the file and the
key.
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cli.server_args import CommandError

CONFIG_DEST = "config"
"""The flag that names the file (not a key of the file itself)."""


def _read(path: Path) -> dict[str, Any]:
    """The file's table, or a `CommandError` in one line."""
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as exc:
        raise CommandError(f"cannot read config {path}: {(exc.strerror or str(exc)).lower()}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"config {path} is not TOML: {exc}") from None


def _flags(configure: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    """A parser of the command's flags alone (the one whose values the file may give)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=True)
    configure(parser)
    return parser


def given_on_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The destinations of the flags `argv` gives (its values are checked later by the command's own parser)."""
    for action in parser._actions:
        action.default = argparse.SUPPRESS
    try:
        given, _ = parser.parse_known_args(list(argv))
    except SystemExit:  # a usage mistake the command's own parse already reported (it never gets here)
        return set()
    return set(vars(given))


def _value(action: argparse.Action, key: str, raw: object, where: str) -> Any:
    """One value of the file converted and checked as the flag's own would be."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise CommandError(f"{where}: {key}: give a string or a number, not {type(raw).__name__} {raw!r}")
    text = str(raw)
    try:
        value = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        raise CommandError(f"{where}: {key}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise CommandError(f"{where}: {key}: {text!r} is not one of {choices}")
    return value


def apply_config(args: argparse.Namespace, configure: Callable[[argparse.ArgumentParser], None],
                 argv: Sequence[str], command: str) -> None:
    """Set on `args` the flags the file `args.config` gives and the command line `argv` (the command's own
    arguments) does not."""
    path = Path(args.config).expanduser()
    where = f"config {path}"
    table = _read(path)
    parser = _flags(configure)
    actions = {action.dest: action for action in parser._actions
               if action.option_strings and action.dest not in (CONFIG_DEST, argparse.SUPPRESS)}
    given = given_on_command_line(_flags(configure), argv)
    exclusive = [{action.dest for action in group._group_actions} for group in parser._mutually_exclusive_groups]
    for group in exclusive:
        both = [key for key in table if key.replace("-", "_") in group]
        if len(both) > 1:
            raise CommandError(f"{where}: give one of {', '.join(both)}, not both")
    for key, raw in table.items():
        dest = key.replace("-", "_")
        action = actions.get(dest)
        if action is None:
            raise CommandError(f"{where}: unknown key {key!r}: the keys are the flags of kalah {command} without "
                               f"their dashes (e.g. port = 8765; see kalah {command} --help)")
        rivals = next((group for group in exclusive if dest in group), {dest})
        if given & rivals:
            continue  # the command line gives it (or a flag it excludes): the command line wins
        if action.nargs == 0:  # a switch (store_true, store_false): true or false
            if not isinstance(raw, bool):
                raise CommandError(f"{where}: {key}: give true or false, not {raw!r}")
            setattr(args, dest, action.const if raw else not action.const)
        elif isinstance(action, argparse._AppendAction):
            items = raw if isinstance(raw, list) else [raw]
            setattr(args, dest, [_value(action, key, item, where) for item in items])
        elif isinstance(raw, list | dict):
            raise CommandError(f"{where}: {key}: give one value, not a {'list' if isinstance(raw, list) else 'table'}")
        else:
            setattr(args, dest, _value(action, key, raw, where))

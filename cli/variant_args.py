"""The variant flags shared by every subcommand that chooses a variant.

Every flag defaults to None (its help names the rule's default), so a command can tell a
flag given on the command line from one left out (`variant_given`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from protocol import Capture, Leftover, TimeControl, Variant, VariantError
from protocol.variant import MAX_SEEDS


def _same(value: Any) -> Any:
    """A flag's value as the variant field takes it."""
    return value


def _negated(value: Any) -> bool:
    """A `--no-...` flag as the field it turns off."""
    return not value


_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "houses": ("houses", _same), "seeds": ("seeds", _same), "capture": ("capture", Capture),
    "no_extra_turn": ("extra_turn", _negated), "clockwise": ("clockwise", _same), "relay": ("relay", _same),
    "leftover": ("leftover", Leftover), "majority_end": ("majority_end", _same), "pie": ("pie", _same),
    "opening_transfer": ("opening_transfer", _same), "clock": ("time_control", TimeControl.parse),
}
"""Flag dest -> the Variant field it sets, and how its value is read."""


def add_variant_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags for every variant option of RULES.md to `parser`."""
    g = parser.add_argument_group("variant")
    g.add_argument("-H", "--houses", type=int, default=None, help="houses per side, 1..12 (default: 6)")
    g.add_argument("-s", "--seeds", type=int, default=None,
                   help=f"seeds per house at the start, 1..{MAX_SEEDS} (default: 4)")
    g.add_argument("--capture", choices=[c.value for c in Capture], default=None,
                   help="what a sowing ending in an own empty house captures (default: standard)")
    g.add_argument("--no-extra-turn", action="store_true", default=None,
                   help="KalahAlt: turns strictly alternate (default: a sowing ending in the store moves again)")
    g.add_argument("--clockwise", action="store_true", default=None, help="sow clockwise (default: counter-clockwise)")
    g.add_argument("--relay", action="store_true", default=None, help='relay ("seed on") sowing (default: off)')
    g.add_argument("--leftover", choices=[x.value for x in Leftover], default=None,
                   help="who takes the seeds left when a side runs out (default: owner)")
    g.add_argument("--majority-end", action="store_true", default=None,
                   help="end once a store holds over half (default: off)")
    g.add_argument("--pie", action="store_true", default=None,
                   help="pie rule: North may swap on its first turn (default: off)")
    g.add_argument("--opening-transfer", action="store_true", default=None,
                   help="North may move one seed first (default: off)")
    g.add_argument("--clock", metavar="TC", default=None,
                   help="time control: BASE+INC seconds or N/move (default: untimed)")
    g.add_argument("--variant", metavar="TEXT", default=None,
                   help="a whole variant in text form, e.g. kalah(6,4,pie=on), instead of the flags above")


def variant_given(args: argparse.Namespace) -> bool:
    """Whether any variant flag was given on the command line."""
    return args.variant is not None or any(getattr(args, dest, None) is not None for dest in _FIELDS)


def variant_from_args(args: argparse.Namespace) -> Variant:
    """Build the `Variant` the flags describe (Kalah(6,4) where none is given); raises `VariantError`."""
    given = {dest: getattr(args, dest) for dest in _FIELDS if getattr(args, dest, None) is not None}
    if args.variant:
        if given:
            raise VariantError("give either --variant or the separate variant flags, not both")
        return Variant.parse(args.variant)
    try:
        options = {_FIELDS[dest][0]: _FIELDS[dest][1](value) for dest, value in given.items()}
        return Variant(**options)
    except (TypeError, ValueError) as exc:
        raise VariantError(str(exc)) from None

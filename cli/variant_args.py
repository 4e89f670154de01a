"""The variant flags shared by every subcommand that chooses a variant."""

from __future__ import annotations

import argparse

from protocol import Capture, Leftover, TimeControl, Variant, VariantError


def add_variant_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags for every variant option of RULES.md to `parser`."""
    g = parser.add_argument_group("variant")
    g.add_argument("-H", "--houses", type=int, default=6, help="houses per side (1..12)")
    g.add_argument("-s", "--seeds", type=int, default=4, help="seeds per house at the start (1..24)")
    g.add_argument("--capture", choices=[c.value for c in Capture], default="standard")
    g.add_argument("--no-extra-turn", action="store_true", help="KalahAlt: turns strictly alternate")
    g.add_argument("--clockwise", action="store_true", help="sow clockwise")
    g.add_argument("--relay", action="store_true", help='relay ("seed on") sowing')
    g.add_argument("--leftover", choices=[x.value for x in Leftover], default="owner")
    g.add_argument("--majority-end", action="store_true", help="end once a store holds over half")
    g.add_argument("--pie", action="store_true", help="pie rule: North may swap on its first turn")
    g.add_argument("--opening-transfer", action="store_true", help="North may move one seed first")
    g.add_argument("--clock", metavar="TC", help="time control: BASE+INC seconds or N/move")
    g.add_argument("--variant", metavar="TEXT", help="a whole variant in text form, e.g. kalah(6,4,pie=on)")


def variant_from_args(args: argparse.Namespace) -> Variant:
    """Build the `Variant` the flags describe; raises `VariantError` on bad values."""
    if args.variant:
        return Variant.parse(args.variant)
    try:
        return Variant(
            houses=args.houses,
            seeds=args.seeds,
            capture=Capture(args.capture),
            extra_turn=not args.no_extra_turn,
            clockwise=args.clockwise,
            relay=args.relay,
            leftover=Leftover(args.leftover),
            majority_end=args.majority_end,
            pie=args.pie,
            opening_transfer=args.opening_transfer,
            time_control=TimeControl.parse(args.clock) if args.clock else None,
        )
    except ValueError as exc:
        raise VariantError(str(exc)) from None

"""Argparse types of numbers within bounds: a value out of range is refused in one line naming the range, before
anything starts (rather than a server that refuses every connection, or a listing cut short without a word)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """The argparse type of a whole number of at least `low` (and at most `high`, if given)."""
    bound = f"at least {low}" if high is None else f"{low} to {high}"

    def parse(text: str) -> int:
        """`text` as such a number, or `ArgumentTypeError`."""
        try:
            value = int(text) if text.isascii() else low - 1  # not a look-alike digit (fullwidth, Arabic-Indic)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {bound}")
        return value

    return parse


def number(low: float = 0.0, *, above: bool = False) -> Callable[[str], float]:
    """The argparse type of a finite number of at least `low` (more than `low` when `above`)."""
    bound = f"more than {low:g}" if above else f"at least {low:g}"

    def parse(text: str) -> float:
        """`text` as such a number, or `ArgumentTypeError`."""
        try:
            value = float(text) if text.isascii() else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {bound}")
        return value

    return parse

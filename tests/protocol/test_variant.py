"""The Variant value: validation, defaults, text form."""

from __future__ import annotations

import pytest

from protocol import Capture, Leftover, TimeControl, Variant, VariantError


def test_default_is_kalah_6_4_standard() -> None:
    """The default variant is Kalah(6,4) with standard rules and prints as such."""
    v = Variant()
    assert (v.houses, v.seeds, v.capture, v.extra_turn, v.clockwise) == (6, 4, Capture.STANDARD, True, False)
    assert v.text() == "kalah(6,4)" and v.total_seeds == 48 and v.pits == 14


def test_full_text_round_trip() -> None:
    """Every option appears in the text form and parses back to an equal, hashable value."""
    v = Variant(houses=12, seeds=24, capture=Capture.EMPTY, extra_turn=False, clockwise=True,
                relay=True, leftover=Leftover.DISCARD, majority_end=True, pie=True,
                opening_transfer=True, time_control=TimeControl(base_ms=300_000, increment_ms=2500))
    text = v.text()
    assert text == ("kalah(12,24,capture=empty,extra=off,clockwise=on,relay=on,majority=on,pie=on,"
                    "transfer=on,leftover=discard,clock=300+2.5)")
    assert Variant.parse(text) == v and hash(Variant.parse(text)) == hash(v)
    assert eval(repr(v), {"Variant": Variant}) == v


def test_parse_is_lenient_on_spaces_and_case() -> None:
    """Spaces and upper case in a typed variant are accepted."""
    assert Variant.parse(" Kalah(6, 5, Capture=Empty) ") == Variant(seeds=5, capture=Capture.EMPTY)


@pytest.mark.parametrize("h", [0, 13, -1])
def test_houses_out_of_range(h: int) -> None:
    """h outside 1..12 is refused naming the field."""
    with pytest.raises(VariantError, match="houses"):
        Variant(houses=h)


@pytest.mark.parametrize("s", [0, 201, 1000])
def test_seeds_out_of_range(s: int) -> None:
    """s outside 1..200 is refused naming the field."""
    with pytest.raises(VariantError, match="seeds"):
        Variant(seeds=s)


@pytest.mark.parametrize(
    "text",
    ["kalah(6)", "kalah(6,4,capture=weird)", "kalah(6,4,foo=on)", "kalah(6,4,pie=yes)",
     "kalah(6,4,pie)", "kalah(6,4,pie=on,pie=off)", "oware(6,4)", "kalah(6,4,clock=abc)",
     "kalah(6,4,clock=0+5)", "kalah(6,4,leftover=nobody)", "kalah(99,4)", ""],
)
def test_bad_variant_texts(text: str) -> None:
    """Malformed or unknown options raise VariantError."""
    with pytest.raises(VariantError):
        Variant.parse(text)


def test_bad_field_types() -> None:
    """Wrong types are refused rather than coerced."""
    with pytest.raises(VariantError):
        Variant(houses="6")  # type: ignore[arg-type]
    with pytest.raises(VariantError):
        Variant(pie=1)  # type: ignore[arg-type]


def test_time_controls() -> None:
    """Base+increment and per-move limits parse, print and validate."""
    assert TimeControl.parse("60+1").text() == "60+1"
    assert TimeControl.parse("10/move") == TimeControl(per_move_ms=10_000)
    assert TimeControl.parse("0.5/move").text() == "0.5/move"
    with pytest.raises(VariantError):
        TimeControl(base_ms=1000, per_move_ms=1000)
    with pytest.raises(VariantError):
        TimeControl.parse("-5+1")


def test_can_repeat_only_for_clockwise_or_relay() -> None:
    """Only clockwise or relay sowing can repeat a position."""
    assert not Variant().can_repeat
    assert Variant(clockwise=True).can_repeat and Variant(relay=True).can_repeat

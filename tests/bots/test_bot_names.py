"""Canonical bot ids: one spelling per engine, everything else refused with a typed error."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from bots.names import ALPHABETA_DEPTHS, BotNameError, bot_id_shape, canonical_bot
from protocol.errors import UnknownBotError
from protocol.wire_base import Name

CANONICAL = ["random", "greedy", "strong", "perfect", *(f"alphabeta:{n}" for n in ALPHABETA_DEPTHS)]


@pytest.mark.parametrize("bot_id", CANONICAL)
def test_canonical_ids_are_accepted_as_they_are(bot_id: str) -> None:
    """Every canonical id is its own canonical form and is a valid wire name once prefixed `bot:`."""
    assert canonical_bot(bot_id) == bot_id
    assert bot_id_shape(bot_id) == bot_id
    assert TypeAdapter(Name).validate_python("bot:" + bot_id) == "bot:" + bot_id


@pytest.mark.parametrize(("text", "hint"), [
    ("Random ", "random"), ("random\t", "random"), ("GREEDY", "greedy"), (" perfect", "perfect"),
    ("Strong", "strong"), ("strong:3", None),
    ("Alphabeta:9", "alphabeta:9"), ("alphabeta:09", "alphabeta:9"), ("alphabeta: 7", "alphabeta:7"),
    ("alphabeta:\u0663", None), ("alphabeta:61", None), ("alphabeta:0", None), ("alphabeta:", None),
    ("alphabeta:+5", None), ("alphabeta:5\n", "alphabeta:5"), ("perfect:12", None), ("", None),
    ("r\u0430ndom", None), ("greedy\x00", None), ("minimax", None), ("x" * 5000, None),
])
def test_other_spellings_are_refused_with_a_hint(text: str, hint: str | None) -> None:
    """A near miss is refused (code unknown_bot) and the message suggests the canonical id; others just refused."""
    with pytest.raises(BotNameError) as info:
        canonical_bot(text)
    assert info.value.code == "unknown_bot" and isinstance(info.value, UnknownBotError)
    message = str(info.value)
    assert "random, greedy, alphabeta:N, strong, perfect" in message and len(message) < 300
    assert (f"did you mean {hint!r}" in message) if hint else "did you mean" not in message


@given(st.text(max_size=20))
def test_whatever_is_accepted_is_canonical_ascii(text: str) -> None:
    """No text outside the canonical ids is ever accepted (so what is stored can always be read back)."""
    try:
        bot_id = canonical_bot(text)
    except BotNameError:
        return
    assert bot_id == text and text in CANONICAL


@pytest.mark.parametrize("text", ["first", "slow", "my-bot:3", "alphabeta:7"])
def test_stand_in_ids_of_the_canonical_shape_pass(text: str) -> None:
    """Stand-in bots (tests, custom servers) may use any lower-case ASCII id of the same shape."""
    assert bot_id_shape(text) == text


@pytest.mark.parametrize("text", ["First", "slow ", "a:01", "", "-x", "\u0663", "x" * 29, "a:b"])
def test_stand_in_ids_outside_the_shape_are_refused(text: str) -> None:
    """Upper case, spaces, leading zeros, non-ASCII and over-long ids are refused for stand-ins too."""
    with pytest.raises(BotNameError):
        bot_id_shape(text)

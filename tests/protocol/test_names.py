"""Players' names (`protocol.names`): the canonical form a name is unique in, and the prefixes kept for bots and
engines."""

from __future__ import annotations

from protocol.names import BOT_PREFIX, ENGINE_PREFIX, is_reserved, name_key


def test_a_name_is_unique_in_its_normalised_case_folded_form() -> None:
    """Names that differ only in case or in Unicode compatibility forms share one key; different names do not."""
    assert name_key("Zoë") == name_key("ZOË") == name_key("Zoe\u0308") == "zoë"
    assert name_key("\ufb01sh") == name_key("FISH") == "fish"  # the "fi" ligature
    assert name_key("ann") != name_key("anne")


def test_names_of_bots_and_engines_are_reserved_in_any_case() -> None:
    """A name starting with a bot's or an engine's prefix, in any case or compatibility form, is reserved."""
    assert BOT_PREFIX == "bot:" and ENGINE_PREFIX == "engine:"
    assert is_reserved("bot:first") and is_reserved("BOT:first") and is_reserved("Engine:racer")
    assert is_reserved("\uff42\uff4f\uff54:wide")  # "bot" in full-width letters
    assert not is_reserved("robot") and not is_reserved("bot-first") and not is_reserved("engineer")

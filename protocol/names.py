"""Players' names: the canonical form under which a name is unique, and the prefixes kept for bots and engines."""

from __future__ import annotations

import unicodedata

BOT_PREFIX = "bot:"
"""Names starting with this (in any case) belong to the server's hosted bots."""
ENGINE_PREFIX = "engine:"
"""Names starting with this (in any case) belong to outside engines (the KGP gateway's accounts)."""


def name_key(name: str) -> str:
    """The form under which names are unique: Unicode-normalised (NFKC) and case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def is_reserved(name: str) -> bool:
    """Whether a new identity may not take `name` (it looks like a hosted bot's or an outside engine's)."""
    return name_key(name).startswith((BOT_PREFIX, ENGINE_PREFIX))

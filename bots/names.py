"""Canonical bot ids: the one spelling of each engine that is made, cached, stored and read back.

The ids are `random`, `greedy`, `alphabeta:N` (N a depth in sowings, 1..60, ASCII digits
without leading zeros), `strong` (deepening search) and `perfect` (proved moves). Nothing is
normalised: an id is accepted exactly as written or refused with `BotNameError` (wire code
`unknown_bot`), whose message suggests the canonical id when the text only differs by case,
spaces or leading zeros. So what a server stores is always an id it can make again and that
every wire model accepts.
"""

from __future__ import annotations

import re

from protocol.errors import UnknownBotError

ALPHABETA_DEPTHS = range(1, 61)
"""The depths of `alphabeta:N`."""

BOT_IDS = ("random", "greedy", "alphabeta:N", "strong", "perfect")
"""The forms of the canonical ids, for messages and documentation."""

MAX_BOT_ID = 28
"""The longest bot id (or stand-in bot name) a server accepts."""

_CANONICAL = re.compile(r"(random|greedy|strong|perfect|alphabeta:([1-9][0-9]?))")
_SHAPE = re.compile(r"[a-z][a-z0-9_-]*(:[1-9][0-9]*)?")
_LOOSE = re.compile(r"(random|greedy|strong|perfect|alphabeta\s*:\s*0*([0-9]+))")


class BotNameError(UnknownBotError):
    """A bot id that is not the canonical id of a bot: an unknown bot (wire code `unknown_bot`)."""


def _shown(text: str) -> str:
    """The text for an error message, cut short."""
    return repr(text if len(text) <= MAX_BOT_ID else text[:MAX_BOT_ID] + "...")


def _suggestion(text: str) -> str | None:
    """The canonical id a near miss (case, spaces, leading zeros) was probably meant as."""
    if not text.isascii() or len(text) > 2 * MAX_BOT_ID:
        return None
    found = _LOOSE.fullmatch(text.strip().lower())
    if found is None:
        return None
    if found.group(2) is None:
        return found.group(1)
    depth = int(found.group(2))
    return f"alphabeta:{depth}" if depth in ALPHABETA_DEPTHS else None


def canonical_bot(text: str) -> str:
    """The canonical bot id `text` spells, which must be exactly that id; else `BotNameError`."""
    found = _CANONICAL.fullmatch(text) if text.isascii() else None
    if found is not None and (found.group(2) is None or int(found.group(2)) in ALPHABETA_DEPTHS):
        return text
    hint = _suggestion(text)
    meant = f"; did you mean {hint!r}?" if hint is not None and hint != text else ""
    raise BotNameError(
        f"unknown bot {_shown(text)}: expected one of {', '.join(BOT_IDS)} "
        f"(N {ALPHABETA_DEPTHS.start}..{ALPHABETA_DEPTHS.stop - 1}, no spaces or leading zeros){meant}"
    )


def bot_id_shape(text: str) -> str:
    """`text` if it has the shape every bot id has (lower-case ASCII name, optional `:N`); else `BotNameError`.

    For servers run with stand-in bots of their own names: the ids stay storable and readable.
    """
    if text.isascii() and len(text) <= MAX_BOT_ID and _SHAPE.fullmatch(text):
        return text
    raise BotNameError(f"unknown bot {_shown(text)}: a bot id is a lower-case ASCII name, optionally ':N'")

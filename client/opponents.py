"""How the client names hosted bots when it creates a match against one."""

from __future__ import annotations

BOT_LEVELS = (1, 2, 3, 4, 5)
"""Bot levels offered in the create form, weakest first."""

DEFAULT_BOT_LEVEL = 1


def bot_opponent(level: int) -> str:
    """The `opponent` value of a `create` message asking for a hosted bot of `level`."""
    return f"bot:{level}"

"""How the client names hosted bots when it creates a match against one."""

from __future__ import annotations

BOTS: dict[int, tuple[str, str]] = {
    1: ("random", "random moves"),
    2: ("greedy", "best immediate gain"),
    3: ("alphabeta:4", "searches 4 plies"),
    4: ("alphabeta:8", "searches 8 plies"),
    5: ("perfect", "solver-backed"),
}
"""Bot level -> (bot name on the server, short description), weakest first."""

BOT_LEVELS = tuple(BOTS)
DEFAULT_BOT_LEVEL = 2


def bot_opponent(level: int) -> str:
    """The `opponent` value of a `create` message asking for a hosted bot of `level`."""
    return BOTS[level][0]


def bot_label(level: int) -> str:
    """`Bot level 2 (greedy: best immediate gain)` for menus."""
    name, about = BOTS[level]
    return f"Bot level {level} ({name}: {about})"

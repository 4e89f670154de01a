"""Where the client's look is set: the stylesheet file, and the width below which layouts narrow."""

from pathlib import Path

STYLESHEET = Path(__file__).with_name("kalah.tcss")
"""The client's Textual stylesheet (theme variables only, so it reads well in dark and light themes)."""

NARROW = 100
"""Terminal width below which the move list goes under the board."""

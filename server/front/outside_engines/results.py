"""What the gateway stores beside the arena's rows: why an engine forfeited, one row per forfeited match.

The row is written with the end of the match (`server.core.match.Match.prepare_forfeit`, one write);
it is read back here for tools and tests (the SQL lives in `server.storage.forfeits`).
"""

from server.storage.forfeits import Forfeit, forfeits

__all__ = ["Forfeit", "forfeits"]

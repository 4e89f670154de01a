"""What `kalah bridge` is asked to do, and why it may stop before it begins."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BridgeOptions:
    """What `kalah bridge` was asked to do."""

    server: str
    engine: str
    name: str | None = None
    token: str | None = None
    games: int = 1
    """Games to play before leaving (0: until interrupted)."""
    find: str = "seek"
    """How to find games: `seek`, `bot`, `open`, `accept` or `event`."""
    bot: str | None = None
    event: str | None = None
    """The event to enter (`find="event"`): its games come as the event pairs them."""
    variant: str = "kalah(6,4)"
    seat: str = "random"
    rated: bool = True
    move_s: float = 5.0
    margin_s: float = 0.5
    on_fault: str = "restart"
    max_faults: int = 3
    poll_s: float = 2.0
    pong_s: float = 20.0
    """Seconds the engine has to answer a `ping` after a state it did not yield (KGP's, go-kgp's)."""



class BridgeError(Exception):
    """Why the bridge stopped before playing its games (one line)."""

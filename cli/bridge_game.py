"""One arena match as `kalah bridge` follows it: the position, the clocks, and the engine's thinking time.

Pure bookkeeping, no I/O: a snapshot starts or resets it, numbered events advance it (an
event already seen is skipped; a gap asks for a resync), and `think_s` says how long the
engine may think so that the bridge's move reaches the server inside the clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.events import ActionEvent, Clocks, GameOverEvent, JoinedEvent
from protocol.kgp import Arg
from protocol.position import Position
from protocol.replies import Snapshot
from protocol.side import Side
from protocol.variant import Variant

MARGIN_S = 0.5
"""What the bridge keeps back of the engine's clock by default: the network both ways, stop, the server's commit."""
MIN_THINK_S = 0.05
"""The least an engine is given to answer, even with almost no time left."""
SHARE = 0.1
"""The part of a base-time clock left that one move may take (plus the increment)."""


def kgp_variant(text: str) -> Variant:
    """A variant a KGP engine can play (sowing only); `ValueError` for one with a pie rule or an opening transfer."""
    variant = Variant.parse(text)
    if variant.pie or variant.opening_transfer:
        raise ValueError(f"{variant.text()}: a KGP engine can only sow (no pie rule, no opening transfer)")
    return variant


@dataclass
class Ending:
    """How a match ended, from the bridge's side: `win`, `loss` or `draw`, why, and the margin if the board told."""

    outcome: str
    reason: str
    margin: int | None

    def text(self) -> str:
        """`win empty +4`, `loss resign`, `draw majority +0`."""
        tail = "" if self.margin is None else f" {self.margin:+d}"
        return f"{self.outcome} {self.reason}{tail}"


class Game:
    """The bridge's view of one match where it holds a seat."""

    def __init__(self, snapshot: Snapshot, now: float) -> None:
        assert snapshot.you is not None
        self.match_id = snapshot.match_id
        self.variant = Variant.parse(snapshot.variant)
        self.side = Side.SOUTH if snapshot.you == "south" else Side.NORTH
        self.ending: Ending | None = None
        self.reset(snapshot, now)

    def reset(self, snapshot: Snapshot, now: float) -> None:
        """Take the whole state from a snapshot (the first one, or one after a resync)."""
        self.seq = snapshot.seq
        self.status = snapshot.status
        self.position = Position.from_fen(self.variant, snapshot.position)
        self.names = {Side.SOUTH: snapshot.south, Side.NORTH: snapshot.north}
        self.clocks, self.clocks_at = snapshot.clocks, now
        if snapshot.status == "finished" and snapshot.reason is not None:
            self.ending = self._ending(str(snapshot.reason), snapshot.result, snapshot.winner)

    @property
    def opponent(self) -> str:
        """The other seat's name ('' while it is open)."""
        return self.names[self.side.other] or ""

    @property
    def our_turn(self) -> bool:
        """Whether the bridge's engine is to move in a live match."""
        return self.status == "live" and self.position.to_move == self.side and not self.position.end

    def advance(self, event: JoinedEvent | ActionEvent | GameOverEvent, now: float) -> bool | None:
        """Apply the next event: True if applied, False if already seen, None if events are missing (resync)."""
        if event.seq <= self.seq:
            return False
        if event.seq != self.seq + 1:
            return None
        self.seq = event.seq
        if event.clocks is not None:
            self.clocks, self.clocks_at = event.clocks, now
        if isinstance(event, JoinedEvent):
            self.names[Side.SOUTH if event.side == "south" else Side.NORTH] = event.player
            if all(self.names.values()):
                self.status = "live"
        elif isinstance(event, ActionEvent):
            self.position = Position.from_fen(self.variant, event.position)
        else:
            self.status = "finished"
            self.position = Position.from_fen(self.variant, event.position)
            self.ending = self._ending(str(event.reason), event.result, event.winner)
        return True

    def _ending(self, reason: str, result: int | None, winner: str | None) -> Ending:
        """The end from the bridge's side."""
        ours = "south" if self.side == Side.SOUTH else "north"
        outcome = "draw" if winner is None else "win" if winner == ours else "loss"
        margin = None if result is None else (result if self.side == Side.SOUTH else -result)
        return Ending(outcome, reason, margin)

    def left_s(self, side: Side, now: float) -> float | None:
        """Seconds left on `side`'s clock now, as last told by the server (None: untimed)."""
        c: Clocks = self.clocks
        ms = c.south_ms if side == Side.SOUTH else c.north_ms
        if ms is None:
            return None
        running = c.running == ("south" if side == Side.SOUTH else "north")
        return ms / 1000 - ((now - self.clocks_at) if running else 0.0)

    def think_s(self, now: float, move_s: float, margin_s: float) -> float:
        """How long the engine may think now, always inside its clock less the margin.

        Per-move clock: all of it. Base time: a `SHARE` of what is left plus the increment, at
        most `move_s` (so the clock lasts the game). Untimed: `move_s`.
        """
        control = self.variant.time_control
        left = self.left_s(self.side, now)
        if control is None or left is None:
            return move_s
        usable = left - margin_s
        if not control.per_move_ms:
            usable = min(usable, move_s, usable * SHARE + control.increment_ms / 1000)
        return max(MIN_THINK_S, usable)

    def time_options(self, think: float, now: float, margin_s: float) -> list[tuple[str, Arg]]:
        """The `time:*` options sent before a state (whole seconds).

        Per-move clock or untimed: `relative`, the seconds of this state (at least 1). Base time:
        `absolute`, the seconds left on the engine's clock less the margin, and the opponent's.
        """
        control = self.variant.time_control
        left = self.left_s(self.side, now)
        if control is None or control.per_move_ms or left is None:
            return [("time:mode", "relative"), ("time:clock", max(1, int(think)))]
        opponent = self.left_s(self.side.other, now) or 0.0
        return [("time:mode", "absolute"), ("time:clock", max(0, int(left - margin_s))),
                ("time:opclock", max(0, int(opponent)))]

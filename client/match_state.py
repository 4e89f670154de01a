"""The client's view of one match: built from a snapshot, advanced by numbered events.

Plain objects, no I/O and no Textual: screens hold a `MatchState` and hand its parts to
widgets as attributes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum

from client.stored_game import reason_text, replay
from protocol import EndReason, MoveEvent, Position, Side, Variant, winner_of
from protocol.messages import ActionEvent, Clocks, GameOverEvent, JoinedEvent, MatchEvent, Snapshot


class EventOutcome(Enum):
    """What applying an event did to the state."""

    APPLIED = "applied"
    STALE = "stale"  # already seen (a resent or replayed event)
    GAP = "gap"  # events are missing: ask the server for a sync


@dataclass(frozen=True, slots=True)
class LastAction:
    """The most recent action, for highlighting: who, what, the bins sown, capture, extra turn."""

    side: Side
    token: str
    path: tuple[int, ...] = ()
    captured_bin: int | None = None
    captured_seeds: int = 0
    extra_turn: bool = False

    @property
    def landed(self) -> int | None:
        """Bin where the last seed fell."""
        return self.path[-1] if self.path else None


def side_of(name: str | None) -> Side | None:
    """`Side` for a wire side name (`south`/`north`), None for None."""
    if name is None:
        return None
    return Side.SOUTH if name == "south" else Side.NORTH


@dataclass
class MatchState:
    """Everything the client knows about one match, as of event number `seq`."""

    match_id: str
    variant: Variant
    seq: int
    status: str
    positions: list[Position]
    record: list[str]
    south: str | None = None
    north: str | None = None
    you: Side | None = None
    clocks: Clocks = field(default_factory=Clocks)
    clocks_at: float = field(default_factory=time.monotonic)
    spectators: int = 0
    result: int | None = None
    reason: EndReason | None = None
    winner: Side | None = None
    last: LastAction | None = None
    away: frozenset[Side] = frozenset()
    """Seated sides whose player has no connection now (from presence messages)."""

    # --- building ---------------------------------------------------------------------

    @classmethod
    def from_snapshot(cls, snap: Snapshot) -> MatchState:
        """The state a snapshot describes; the record is replayed to recover every position."""
        variant = Variant.parse(snap.variant)
        positions, last = _positions(variant, snap.record)
        current = Position.from_fen(variant, snap.position)
        if positions[-1].fen() != current.fen():
            positions[-1] = current
        return cls(
            match_id=snap.match_id, variant=variant, seq=snap.seq, status=snap.status,
            positions=positions, record=list(snap.record), south=snap.south, north=snap.north,
            you=side_of(snap.you), clocks=snap.clocks, spectators=snap.spectators,
            result=snap.result, reason=snap.reason, winner=side_of(snap.winner), last=last,
        )

    def apply_event(self, ev: MatchEvent) -> EventOutcome:
        """Advance by one event; stale events are ignored and a gap is reported, not guessed."""
        if ev.seq <= self.seq:
            return EventOutcome.STALE
        if ev.seq != self.seq + 1:
            return EventOutcome.GAP
        self.seq = ev.seq
        if isinstance(ev, ActionEvent | JoinedEvent | GameOverEvent) and ev.clocks is not None:
            self.clocks = ev.clocks
            self.clocks_at = time.monotonic()
        if isinstance(ev, ActionEvent):
            self._apply_action(ev)
        elif isinstance(ev, JoinedEvent):
            self._seat(ev)
        elif isinstance(ev, GameOverEvent):
            self._apply_end(ev)
        return EventOutcome.APPLIED

    def _seat(self, ev: JoinedEvent) -> None:
        """Record who sits where after a `joined` event; with both seats taken the match is live."""
        if ev.side == "south":
            self.south = ev.player
        else:
            self.north = ev.player
        if self.status == "open" and self.south and self.north:
            self.status = "live"

    def _apply_end(self, ev: GameOverEvent) -> None:
        """Finish the match: result, reason, winner; the clocks stop."""
        self.status = "finished"
        self.result = ev.result
        self.reason = ev.reason
        self.winner = side_of(ev.winner)
        self.clocks = Clocks(south_ms=self.clocks.south_ms, north_ms=self.clocks.north_ms)
        self._set_current(ev.position)

    def _apply_action(self, ev: ActionEvent) -> None:
        """Append the server's position after an action, and the action's highlight from the event."""
        after = Position.from_fen(self.variant, ev.position)
        self.positions.append(after)
        self.record.append(ev.action)
        if ev.action == "swap":
            self.south, self.north = self.north, self.south
            if self.you is not None:
                self.you = self.you.other
        cap = ev.capture
        self.last = LastAction(Side.SOUTH if ev.side == "south" else Side.NORTH, ev.action, tuple(ev.path),
                               None if cap is None else cap.bin, 0 if cap is None else cap.seeds, ev.extra_turn)
        if self.status == "open":
            self.status = "live"
        if after.over:
            self.status = "finished"
            self.result = after.result
            self.reason = self.reason or after.end
            self.winner = winner_of(after.margin)

    def _set_current(self, fen: str) -> None:
        """Replace the current position by the server's, if it differs."""
        pos = Position.from_fen(self.variant, fen)
        if pos.fen() != self.position.fen():
            self.positions[-1] = pos

    def apply_presence(self, spectators: int, south_connected: bool, north_connected: bool) -> None:
        """Spectator count and who is connected (outside the numbered events)."""
        self.spectators = spectators
        away = set()
        if self.south is not None and not south_connected:
            away.add(Side.SOUTH)
        if self.north is not None and not north_connected:
            away.add(Side.NORTH)
        self.away = frozenset(away)

    # --- queries ----------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The current position."""
        return self.positions[-1]

    @property
    def ply(self) -> int:
        """Number of actions played."""
        return len(self.record)

    @property
    def over(self) -> bool:
        """Whether the match has finished (by the rules, resignation, time or forfeit)."""
        return self.status == "finished" or self.position.over

    @property
    def my_turn(self) -> bool:
        """Whether the viewer is a player and it is their turn in a live match."""
        return self.you is not None and not self.over and self.position.to_move == self.you

    @property
    def viewpoint(self) -> Side:
        """The side drawn at the bottom: the player's own side, South for spectators."""
        return self.you if self.you is not None else Side.SOUTH

    def player(self, side: Side) -> str | None:
        """Name of the player seated on `side`."""
        return self.south if side == Side.SOUTH else self.north

    def last_turn(self) -> list[str]:
        """The tokens of the last turn: the last actions made in a row by one side and the same player.

        A pie swap is a turn of its own: the side to move stays North, but the player behind it changes.
        """
        if not self.record:
            return []
        mover = self.positions[len(self.record) - 1].to_move
        turn: list[str] = []
        for i in range(len(self.record) - 1, -1, -1):
            if self.positions[i].to_move != mover or (turn and self.record[i] == "swap"):
                break
            turn.append(self.record[i])
            if self.record[i] == "swap":
                break
        return turn[::-1]

    def clock_ms(self, side: Side, now: float | None = None) -> int | None:
        """Milliseconds left on `side`'s clock now, counting down if it is running."""
        ms = self.clocks.south_ms if side == Side.SOUTH else self.clocks.north_ms
        if ms is None:
            return None
        if self.clocks.running == ("south" if side == Side.SOUTH else "north") and not self.over:
            elapsed = ((time.monotonic() if now is None else now) - self.clocks_at) * 1000
            return max(0, int(ms - elapsed))
        return ms


def _positions(variant: Variant, record: list[str]) -> tuple[list[Position], LastAction | None]:
    """Every position of a record, as far as it replays legally, and its last action."""
    game = replay(variant, record)
    return list(game.positions), (last_action(game.events[-1]) if game.events else None)


def last_action(move: MoveEvent) -> LastAction:
    """The highlight of a rules `MoveEvent`."""
    seeds = 0 if move.capture is None else move.capture[1]
    return LastAction(move.side, move.action.token(), move.path, move.captured_bin, seeds, move.extra_turn)


def result_parts(state: MatchState) -> tuple[str, str, str]:
    """The verdict in three parts: the winner's name (empty for none), who won and by how much after it, and why
    (` (…)`); joined they read `bob (North) wins by 4 (resignation)`."""
    why = reason_text(state.reason)
    winner = state.winner
    if winner is None and state.result:
        winner = winner_of(state.result)
    if winner is None:
        draw = state.result == 0 or (state.reason is not None and state.reason.on_board)
        return "", "Draw" if draw else "Game over", why
    by = f" by {abs(state.result)}" if state.result else ""
    return state.player(winner) or winner.name.title(), f" ({winner.name.title()}) wins{by}", why


def result_text(state: MatchState) -> str:
    """A one-line human verdict: who won, by how much, and why."""
    return "".join(result_parts(state))


def swap_text(south: str | None, north: str | None) -> str:
    """The pie swap in words, from the seats after it: North's player took over South and its opening."""
    taker = south or "North's player"
    other = north or "the opening player"
    return (f"Pie swap: {taker} took over South, with its opening move, and now plays South; "
            f"{other} now plays North.")


def describe_last(last: LastAction, turn: list[str] | None = None, over: bool = False,
                  seats: tuple[str | None, str | None] = (None, None)) -> str:
    """A notice for the last action (or the whole last turn's `turn` tokens), then capture or extra turn.

    `seats` are the players of South and North after the action (they name who took a pie swap).
    """
    who = last.side.name.title()
    if last.token == "swap":
        return swap_text(*seats)
    if last.token.startswith("t"):
        return f"{who} opening transfer: {last.token}."
    if turn is not None and len(turn) > 1:
        parts = [f"{who} played {' then '.join(turn)}."]
    else:
        parts = [f"{who} sowed bin {last.token}."]
    if last.captured_bin is not None:
        parts.append(f"Capture! {last.captured_seeds} seeds from bin {last.captured_bin} to the store.")
    if last.extra_turn and not over:
        parts.append(f"Extra turn: {who} moves again.")
    return " ".join(parts)

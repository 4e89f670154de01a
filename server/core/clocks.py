"""Server-side chess clocks of one match, per seat, driven by an injected time (seconds).

Base + increment: the running seat's elapsed time is deducted when it acts, then the
increment is added, up to `MAX_CLOCK_MS` (so a clock always fits the wire's 32-bit fields).
Per-move limit: every action (each sowing of an extra-turn chain too) must come within the
limit. Pure: the caller passes `now`; nothing reads a clock.
"""

from __future__ import annotations

from protocol.variant import MAX_CLOCK_MS, TimeControl


class Clocks:
    """Milliseconds left for seat 0 and seat 1, and which seat's clock runs since when."""

    __slots__ = ("control", "left_ms", "running", "since")

    def __init__(self, control: TimeControl | None, left_ms: tuple[int, int] | None = None) -> None:
        self.control = control
        base = 0 if control is None else (control.per_move_ms or control.base_ms)
        self.left_ms: list[int] = list(left_ms) if left_ms is not None else [base, base]
        self.running: int | None = None
        self.since = 0.0

    @property
    def enabled(self) -> bool:
        """Whether this match is timed at all."""
        return self.control is not None

    def start(self, seat: int, now: float) -> None:
        """Start `seat`'s clock (a per-move clock is reset to the full limit)."""
        if self.control is None:
            return
        if self.control.per_move_ms:
            self.left_ms[seat] = self.control.per_move_ms
        self.running = seat
        self.since = now

    def stop(self) -> None:
        """Stop every clock (game over), keeping what is left as of the last action."""
        self.running = None

    def left(self, seat: int, now: float) -> int:
        """Milliseconds `seat` has left at `now` (never below zero)."""
        left = self.left_ms[seat]
        if self.running == seat:
            left -= int((now - self.since) * 1000)
        return max(0, left)

    def expired(self, now: float) -> int | None:
        """The running seat if its time has run out at `now`, else None."""
        if self.running is None:
            return None
        return self.running if self.left(self.running, now) <= 0 else None

    def deadline(self) -> float | None:
        """When (in the caller's time) the running seat's flag falls, or None."""
        if self.running is None:
            return None
        return self.since + self.left_ms[self.running] / 1000

    def after_action(self, seat: int, now: float) -> tuple[int, int]:
        """Charge `seat` for its action at `now` and add the increment; returns both seats' ms."""
        if self.control is None:
            return (0, 0)
        left = list(self.left_ms)
        left[seat] = min(MAX_CLOCK_MS, self.left(seat, now) + self.control.increment_ms)
        return (left[0], left[1])

    def apply(self, left_ms: tuple[int, int], next_seat: int | None, now: float) -> None:
        """Take the charged values of `after_action` and start the next seat's clock."""
        if self.control is None:
            return
        self.left_ms = list(left_ms)
        if next_seat is None:
            self.stop()
        else:
            self.start(next_seat, now)

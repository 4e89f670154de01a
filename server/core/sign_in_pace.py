"""A bound on failed password sign-ins over the whole server, against credential stuffing from many networks.

The per-account and per-network throttle (`server.core.sign_in_throttle`) cannot stop an attacker who tries many
names once each from many networks: each network stays under its free failures. So the server also holds one budget
of password tries for everyone: `free` tries, refilled at `per_s` a second; each try takes one when it is admitted
(before its password is checked, so tries that arrive together cannot all pass on one unit), and a right password
gives its one back. While the budget lasts, nothing changes. Once it is spent (and while anyone waits), every password
try waits its turn in one line: the turns come `1 / per_s` apart, a network holds at most one place at a time (its
next try, while one waits, is refused at once), and the line is at most `max_wait_s` long (a try that would wait
longer is refused with the wait). So failures in all are at most `free + 1 + per_s * t` over any `t` seconds,
whatever the number of networks, and a right password is checked within `max_wait_s` while fewer than
`per_s * max_wait_s` networks try at once. Recovery codes and passkeys never pass here. Each node of a cluster
holds its own budget and line (they bound its own hashing), unlike the per-account throttle, which every node shares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import SignInThrottledError


@dataclass(frozen=True)
class PaceLimits:
    """Failed password sign-ins of the whole server: free ones, then tries paced at `per_s`, a line of `max_wait_s`."""

    free: int = 200
    per_s: float = 2.0
    max_wait_s: float = 30.0


class PasswordPace:
    """The server's budget of failed password sign-ins, and the line of tries once it is spent."""

    def __init__(self, clock: Callable[[], float], limits: PaceLimits | None = None) -> None:
        self.clock = clock
        self.limits = limits or PaceLimits()
        self._budget = float(self.limits.free)
        """Tries that may still come without a wait (below 1: spent; below 0: owed by paced tries)."""
        self._at = clock()
        self._next_turn = 0.0
        """When the next place in the line is due (in the past: nobody waits)."""
        self._waiting: dict[str, float] = {}
        """Network -> when its place in the line is due."""

    def admit(self, network: str) -> float:
        """Seconds a password try from `network` must wait before it is checked (0: at once), its unit of the budget
        taken; `SignInThrottledError` if its network already waits or the line is full."""
        now = self._refill()
        self._waiting = {n: at for n, at in self._waiting.items() if at > now}
        if self._budget >= 1 and self._next_turn <= now:
            self._budget -= 1
            return 0.0
        if network in self._waiting:
            raise SignInThrottledError(self._busy("your network's last sign-in still waits its turn"),
                                       self._waiting[network] - now)
        turn = max(now, self._next_turn)
        if turn - now > self.limits.max_wait_s:
            raise SignInThrottledError(self._busy("the line of sign-ins is full"), turn - now - self.limits.max_wait_s)
        self._next_turn = turn + 1 / self.limits.per_s
        self._waiting[network] = turn
        self._budget -= 1
        return turn - now

    def succeeded(self) -> None:
        """A try's password was right: its unit of the budget comes back (only failures spend it)."""
        self._refill()
        self._budget = min(float(self.limits.free), self._budget + 1)

    def _refill(self) -> float:
        """Add what the budget earned since the last look, up to `free`; the time now."""
        now = self.clock()
        self._budget = min(float(self.limits.free), self._budget + (now - self._at) * self.limits.per_s)
        self._at = now
        return now

    @staticmethod
    def _busy(why: str) -> str:
        """The refusal of a try while many fail: why, and what still signs in at once."""
        return (f"too many failed sign-ins on this server just now ({why}): try again in a moment, or sign in with "
                "a passkey or a recovery code")

"""Typed errors of the server: one class per refusal, each with its stable wire `code`.

Rule errors (`protocol.errors`) travel with their own codes (`illegal_move`, `out_of_turn`,
`swap_not_offered`, `bad_transfer`, `game_over`); these add the lobby, seat, ply, clock and
connection refusals.
"""

from __future__ import annotations

from protocol.errors import KalahError


class ServerError(KalahError):
    """Base of the server's own refusals."""

    code = "server_error"


class HelloFirstError(ServerError):
    """A request before the connection said hello."""

    code = "hello_first"


class BadTokenError(ServerError):
    """A hello with a token that matches no identity."""

    code = "bad_token"


class UnknownMatchError(ServerError):
    """A match id that names no open or live match."""

    code = "unknown_match"


class NotSeatedError(ServerError):
    """An action, resignation or claim in a match where the identity holds no seat."""

    code = "not_your_match"


class NotStartedError(ServerError):
    """An action in a match still waiting for its second player."""

    code = "not_started"


class MatchFullError(ServerError):
    """A join when no seat is open."""

    code = "match_full"


class AlreadySeatedError(ServerError):
    """A join by an identity already seated in the match."""

    code = "already_seated"


class StalePlyError(ServerError):
    """An action at a ply already played by a different action."""

    code = "stale_ply"


class FuturePlyError(ServerError):
    """An action at a ply beyond the current one."""

    code = "bad_ply"


class TimeOutError(ServerError):
    """An action after the mover's time ran out (the game ends on time)."""

    code = "time_out"


class ClaimRefusedError(ServerError):
    """A claim while the opponent is connected or still within the grace period."""

    code = "claim_refused"


class UnknownBotError(ServerError):
    """A match against a hosted bot the server does not know."""

    code = "unknown_bot"


class RateLimitedError(ServerError):
    """Too many messages on one connection."""

    code = "rate_limited"


class ShuttingDownError(ServerError):
    """The server is stopping and accepts no new actions."""

    code = "shutting_down"


class MatchExistsError(ServerError):
    """A match id chosen by the client is already taken."""

    code = "match_exists"

"""Every typed error of Kalah Arena, one class per kind of mistake, each with its wire `code`.

Rule and notation errors are raised by the rules; message errors by the wire decoder; the
refusals by the server. A refused request is answered with `error {code}`, and
`ERROR_CODES`, derived from these classes, is the complete list of codes a client can get.
"""

from __future__ import annotations

from typing import ClassVar


class KalahError(ValueError):
    """Base of every typed error; `code` is the stable wire code (a bare base is an internal fault)."""

    code: ClassVar[str] = "internal_error"
    retry_ms: int | None = None
    """For a refusal of load (`rate_limited`, `too_many`): when asking again may be served, in milliseconds."""


# --- the rules -----------------------------------------------------------------------------


class VariantError(KalahError):
    """A variant text or option value is unknown or out of range."""

    code = "bad_variant"


class NotationError(KalahError):
    """A move, record or position text cannot be parsed."""

    code = "bad_notation"


class ImpossiblePositionError(NotationError):
    """A well-formed position that no game of its variant can reach (seed total, an empty row not ended, ...)."""

    code = "impossible_position"


class IllegalMoveError(KalahError):
    """A well-formed action that the rules do not allow in this position."""

    code = "illegal_move"


class OutOfTurnError(IllegalMoveError):
    """An action by the side that is not to move."""

    code = "out_of_turn"


class SwapNotOfferedError(IllegalMoveError):
    """A pie-rule swap when the rules do not offer it now."""

    code = "swap_not_offered"


class TransferError(IllegalMoveError):
    """An opening transfer when none is due, or one that names bad houses."""

    code = "bad_transfer"


class GameOverError(IllegalMoveError):
    """An action in a game that has already ended."""

    code = "game_over"


class IllegalRecordError(IllegalMoveError):
    """A record holds an illegal move; names its index (0-based) and token."""

    code = "illegal_record"

    def __init__(self, index: int, token: str, cause: Exception) -> None:
        super().__init__(f"move {index + 1} ({token}): {cause}")
        self.index = index
        self.token = token
        self.cause = cause


# --- malformed messages --------------------------------------------------------------------


class MessageError(KalahError):
    """A message that is not valid JSON or does not match any message type."""


class MessageTooLargeError(MessageError):
    """A message longer than the size limit."""

    code = "too_large"


class InvalidJsonError(MessageError):
    """A message that is not one JSON object."""

    code = "bad_json"


class UnknownTypeError(MessageError):
    """A JSON object without a known `type`."""

    code = "unknown_type"


class BadFieldError(MessageError):
    """A known message type with a missing, unknown, mistyped or out-of-range field."""

    code = "bad_field"


# --- the server's refusals -----------------------------------------------------------------


class ServerError(KalahError):
    """Base of the server's own refusals: identity, lobby, seats, plies, clocks, limits."""


class HelloFirstError(ServerError):
    """A request before the connection said hello."""

    code = "hello_first"


class AlreadyHelloError(ServerError):
    """A second hello on one connection."""

    code = "already_hello"


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
    """Too many messages or reads from one connection or address (or from everyone at once)."""

    code = "rate_limited"

    def __init__(self, message: str, retry_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_ms = None if retry_s is None else retry_after_ms(retry_s)


class ShuttingDownError(ServerError):
    """The server is stopping and accepts no new actions."""

    code = "shutting_down"


class MatchExistsError(ServerError):
    """A match id chosen by the client is already taken."""

    code = "match_exists"


class TooManyError(ServerError):
    """A per-identity or per-address quota is full: open matches, exhibitions, analyses."""

    code = "too_many"

    def __init__(self, message: str, retry_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_ms = None if retry_s is None else retry_after_ms(retry_s)


class InPlayError(ServerError):
    """An analysis of the position a game the asker plays stands at: a player may not consult the solver during its
    own game (ask again once it has ended)."""

    code = "in_play"


MAX_RETRY_MS = 3_600_000
"""The longest retry hint an error carries (one hour)."""


def retry_after_ms(seconds: float) -> int:
    """A retry hint in whole milliseconds, at least 1 and at most an hour."""
    return max(1, min(MAX_RETRY_MS, int(seconds * 1000) + 1))


class UnavailableError(ServerError):
    """The database cannot store changes now (its disk is full, or it cannot be reached): nothing was stored."""

    code = "unavailable"

    def __init__(self, message: str, retry_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_ms = None if retry_s is None else retry_after_ms(retry_s)


class NameTakenError(ServerError):
    """A new identity under a name another identity holds (names compare case- and Unicode-folded)."""

    code = "name_taken"


class ReservedNameError(ServerError):
    """A name only the server may give (the `bot:` prefix of hosted bots)."""

    code = "reserved_name"


class NotOperatorError(ServerError):
    """A request only the server's operator may make (rated bot exhibitions): no or a wrong operator token."""

    code = "not_operator"


class ConflictError(ServerError):
    """A change another one stored first (another node's, or a key stored twice): look again, then retry."""

    code = "conflict"


class BadEventError(ServerError):
    """An event's settings that do not fit together (rounds for an arena, more rounds than a Swiss can pair, ...)."""

    code = "bad_event"


class UnknownEventError(ServerError):
    """No event has that id."""

    code = "unknown_event"


class UnknownPuzzleError(ServerError):
    """No proved puzzle has that id, or none is left for the asker to try."""

    code = "unknown_puzzle"


class EventFullError(ServerError):
    """An event that already holds its largest number of entrants."""

    code = "event_full"


class EventStartedError(ServerError):
    """Entering (or leaving the entry list of) a Swiss or round-robin event that has started or ended."""

    code = "event_started"


class NotEligibleError(ServerError):
    """An entrant the event's entry rule refuses (people only, engines only, a list of names, games against random)."""

    code = "not_eligible"


class BannedError(ServerError):
    """The operator banned this identity or network address: the connection is closed."""

    code = "banned"


class SignInError(ServerError):
    """A sign-in refused: a wrong password or recovery code, an unknown name, or a code already used (one answer
    for all, so the answer never tells whether a name is an account)."""

    code = "sign_in_failed"


class SignInThrottledError(ServerError):
    """Too many failed sign-ins lately for this account or from this network: wait `retry_ms`."""

    code = "sign_in_throttled"

    def __init__(self, message: str, retry_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_ms = None if retry_s is None else retry_after_ms(retry_s)


class BadSessionError(ServerError):
    """A session that is unknown, ended (signed out, revoked, the password changed) or mistyped."""

    code = "bad_session"


class NotSignedInError(ServerError):
    """A request only an account may make (sessions, sign-out, password) from a guest or before hello."""

    code = "not_signed_in"


class AlreadyAccountError(ServerError):
    """A registration from a connection already signed in to an account."""

    code = "already_account"


class InternalError(ServerError):
    """The server failed to serve a request (a fault of the server, not of the request)."""

    code = "internal_error"


def _codes(cls: type[KalahError]) -> list[str]:
    """The codes of `cls` and of every subclass, in definition order."""
    found = [cls.code]
    for sub in cls.__subclasses__():
        found += _codes(sub)
    return found


ERROR_CODES: tuple[str, ...] = tuple(dict.fromkeys(_codes(KalahError)))
"""Every code an `error` message can carry, one per error class above (bases share `internal_error`)."""

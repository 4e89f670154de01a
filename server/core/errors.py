"""The server's refusals, each with its stable wire `code`.

They are defined with every other error kind in `protocol.errors` (so that `ERROR_CODES`
lists every code a client can get) and named here for the server's modules. Rule errors
(`illegal_move`, `out_of_turn`, `swap_not_offered`, `bad_transfer`, `game_over`, ...) travel
with their own codes.
"""

from __future__ import annotations

from protocol.errors import (
    AlreadyHelloError,
    AlreadySeatedError,
    BadTokenError,
    ClaimRefusedError,
    ConflictError,
    FuturePlyError,
    HelloFirstError,
    InternalError,
    MatchExistsError,
    MatchFullError,
    NameTakenError,
    NotOperatorError,
    NotSeatedError,
    NotStartedError,
    RateLimitedError,
    ReservedNameError,
    ServerError,
    ShuttingDownError,
    StalePlyError,
    TimeOutError,
    TooManyError,
    UnknownBotError,
    UnknownMatchError,
)

__all__ = [
    "AlreadyHelloError", "AlreadySeatedError", "BadTokenError", "ClaimRefusedError", "ConflictError", "FuturePlyError",
    "HelloFirstError", "InternalError", "MatchExistsError", "MatchFullError", "NameTakenError",
    "NotOperatorError", "NotSeatedError", "NotStartedError", "RateLimitedError", "ReservedNameError",
    "ServerError", "ShuttingDownError", "StalePlyError", "TimeOutError", "TooManyError", "UnknownBotError",
    "UnknownMatchError",
]

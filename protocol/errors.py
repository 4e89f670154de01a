"""Typed errors of the Kalah rules: one class per kind of mistake, each with a wire code."""

from __future__ import annotations


class KalahError(ValueError):
    """Base of every rule or notation error; `code` is the stable wire error code."""

    code = "kalah_error"


class VariantError(KalahError):
    """A variant text or option value is unknown or out of range."""

    code = "bad_variant"


class NotationError(KalahError):
    """A move, record or position text cannot be parsed."""

    code = "bad_notation"


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


ERROR_CLASSES: tuple[type[KalahError], ...] = (
    KalahError,
    VariantError,
    NotationError,
    IllegalMoveError,
    OutOfTurnError,
    SwapNotOfferedError,
    TransferError,
    GameOverError,
)

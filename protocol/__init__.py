"""The shared truth of Kalah Arena: rules of every variant, notation, records, wire messages.

Pure: this package performs no I/O and imports no network, storage or UI library.
"""

from protocol.actions import Action, Sow, Swap, Transfer, format_actions, parse_action, parse_actions
from protocol.errors import (
    GameOverError,
    IllegalMoveError,
    IllegalRecordError,
    KalahError,
    NotationError,
    OutOfTurnError,
    SwapNotOfferedError,
    TransferError,
    VariantError,
)
from protocol.game import Game
from protocol.outcome import EndReason, seat_score, winner_of
from protocol.position import MoveEvent, Position, Side
from protocol.tables import Tables, compile_variant
from protocol.variant import Capture, Leftover, TimeControl, Variant

__all__ = [
    "Action", "Capture", "EndReason", "Game", "GameOverError", "IllegalMoveError", "IllegalRecordError",
    "KalahError", "Leftover", "MoveEvent", "NotationError", "OutOfTurnError", "Position",
    "Side", "Sow", "Swap", "SwapNotOfferedError", "Tables", "TimeControl", "Transfer",
    "TransferError", "Variant", "VariantError", "compile_variant", "format_actions",
    "parse_action", "parse_actions", "seat_score", "winner_of",
]

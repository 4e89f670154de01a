"""A game: the positions and actions so far, with the threefold-repetition rule."""

from __future__ import annotations

from collections import Counter

from protocol.actions import Action, format_actions, parse_actions
from protocol.errors import IllegalMoveError, IllegalRecordError
from protocol.outcome import EndReason
from protocol.position import MoveEvent, Position, Side
from protocol.variant import Variant

REPETITION_LIMIT = 3


class Game:
    """A game in progress or finished: a list of positions joined by actions."""

    __slots__ = ("_seen", "actions", "events", "positions", "variant")

    def __init__(self, variant: Variant | None = None, start: Position | None = None) -> None:
        self.variant = variant or (start.variant if start else Variant())
        first = start or Position.initial(self.variant)
        self.positions: list[Position] = [first]
        self.actions: list[Action] = []
        self.events: list[MoveEvent] = []
        self._seen: Counter[tuple[object, ...]] = Counter([first.key()])

    @classmethod
    def from_record(cls, variant: Variant, record: str | list[Action]) -> Game:
        """Replay a record (text or actions); raises `IllegalRecordError` naming the bad move."""
        game = cls(variant)
        actions = parse_actions(record) if isinstance(record, str) else record
        for index, action in enumerate(actions):
            try:
                game.play(action)
            except IllegalMoveError as exc:
                raise IllegalRecordError(index, action.token(), exc) from exc
        return game

    @property
    def position(self) -> Position:
        """The current position."""
        return self.positions[-1]

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.position.over

    @property
    def result(self) -> int | None:
        """South's store minus North's store at the end, or None while playing."""
        return self.position.result

    @property
    def ply(self) -> int:
        """Number of actions played."""
        return len(self.actions)

    def preview(self, action: Action, side: Side | None = None) -> tuple[Position, MoveEvent]:
        """The position and event `action` would lead to, repetition rule included; changes nothing."""
        pos, event = self.position.apply_event(action, side)
        if pos.end is None and self.variant.can_repeat and self._seen[pos.key()] + 1 >= REPETITION_LIMIT:
            pos = pos.finish(EndReason.REPETITION)
            event = MoveEvent(event.action, event.side, event.ply, event.segments, event.path,
                              event.capture, event.extra_turn, EndReason.REPETITION)
        return pos, event

    def play(self, action: Action, side: Side | None = None) -> MoveEvent:
        """Apply an action (checking the mover if `side` is given) and return what happened."""
        pos, event = self.preview(action, side)
        self.push(action, pos, event)
        return event

    def push(self, action: Action, pos: Position, event: MoveEvent) -> None:
        """Append what `preview(action)` returned for the current position (validated already)."""
        if pos.ply != self.position.ply + 1:
            raise ValueError("push() takes the preview of the current position")
        if self.variant.can_repeat:
            self._seen[pos.key()] += 1
        self.positions.append(pos)
        self.actions.append(action)
        self.events.append(event)

    def record(self) -> str:
        """The game record: space-separated notation tokens."""
        return format_actions(self.actions)


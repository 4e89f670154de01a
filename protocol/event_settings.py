"""What an event is: its kind, who may enter, and its settings, a validated value with a JSON text form."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from protocol.errors import BadEventError
from protocol.wire_base import Name, check_variant

MAX_ENTRANTS = 256
"""The most entrants any event holds."""
MAX_SWISS_ENTRANTS = 64
"""The most entrants of a Swiss: the Dutch pairing is a matching over every pair, a second or more beyond this."""
MAX_ROUND_ROBIN_ENTRANTS = 16
"""The most entrants of a round-robin: 16 make 15 rounds (30 when each pairing is played with both colours)."""
MAX_ROUNDS = 30
"""The most rounds of a Swiss."""
MIN_ARENA_SECONDS, MAX_ARENA_SECONDS = 10, 24 * 3600
"""An arena lasts from ten seconds (tests, demonstrations) to a day."""
MAX_SANITY_GAMES = 20
"""The most games against `random` an event may ask of an engine before it enters."""
MAX_START_AT = 2.0**32
"""The latest start time any event may have (UNIX seconds, in 2106); a server allows far less (it bounds how far
ahead an event may start: `event_start_ahead_s`)."""

EventName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9 _.:'()-]+$")]


class EventKind(StrEnum):
    """How an event pairs its entrants."""

    ARENA = "arena"
    """A fixed duration; whoever finished a game is paired again with someone who finished too."""
    SWISS = "swiss"
    """A fixed number of rounds; pairings by score (FIDE Dutch), no repeat pairing, a bye for the odd entrant."""
    ROUND_ROBIN = "round_robin"
    """Every entrant meets every other, `cycles` times (two: once with each side)."""


class Entry(StrEnum):
    """Who may enter an event."""

    ANYONE = "anyone"
    PEOPLE = "people"
    ENGINES = "engines"
    LISTED = "listed"
    """Only the names in `EventSettings.names`."""


class EventSettings(BaseModel):
    """An event's settings: strict, frozen, checked as a whole; `text()` and `parse()` round-trip."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: EventName
    kind: Annotated[EventKind, Field(strict=False)]
    variant: str = "kalah(6,4,clock=60+1)"
    """Any variant the server plays (pie rule included), with its clock."""
    rated: bool = False
    rounds: Annotated[int, Field(ge=1, le=MAX_ROUNDS)] | None = None
    """A Swiss's number of rounds."""
    cycles: Annotated[int, Field(ge=1, le=2)] = 2
    """How often a round-robin's entrants meet: 2 plays each pairing once with each side."""
    duration_s: Annotated[int, Field(ge=MIN_ARENA_SECONDS, le=MAX_ARENA_SECONDS)] | None = None
    """An arena's length in seconds."""
    start_at: Annotated[float, Field(ge=0, le=MAX_START_AT, allow_inf_nan=False, strict=False)] | None = None
    """When the event starts (UNIX seconds, finite); None: as soon as `min_entrants` have joined."""
    min_entrants: Annotated[int, Field(ge=2, le=MAX_ENTRANTS)] = 2
    max_entrants: Annotated[int, Field(ge=2, le=MAX_ENTRANTS)] = 32
    entry: Annotated[Entry, Field(strict=False)] = Entry.ANYONE
    names: Annotated[tuple[Name, ...], Field(max_length=MAX_ENTRANTS, strict=False)] = ()
    """Who may enter when `entry` is `listed`."""
    sanity_games: Annotated[int, Field(ge=0, le=MAX_SANITY_GAMES)] = 0
    """Games an engine must have won against `random` before it may enter (the KGP server's sanity stage)."""
    streak: bool = True
    """An arena's streak bonus: after two wins in a row, wins and draws count double until the streak breaks."""

    _variant = field_validator("variant")(check_variant)

    @model_validator(mode="before")
    @classmethod
    def _default_limit(cls, data: object) -> object:
        """Without `max_entrants`, a round-robin takes its most (16); other kinds 32."""
        if isinstance(data, dict) and "max_entrants" not in data and data.get("kind") in ("round_robin",
                                                                                        EventKind.ROUND_ROBIN):
            return {**data, "max_entrants": MAX_ROUND_ROBIN_ENTRANTS}
        return data

    @model_validator(mode="after")
    def _fits_kind(self) -> Self:
        """Refuse settings of another kind, and an entry limit the kind cannot pair."""
        kind = self.kind
        if (self.rounds is not None) != (kind is EventKind.SWISS):
            raise ValueError("a Swiss needs rounds, and only a Swiss has them")
        if (self.duration_s is not None) != (kind is EventKind.ARENA):
            raise ValueError("an arena needs duration_s, and only an arena has one")
        limit = {EventKind.SWISS: MAX_SWISS_ENTRANTS, EventKind.ROUND_ROBIN: MAX_ROUND_ROBIN_ENTRANTS}.get(
            kind, MAX_ENTRANTS)
        if self.max_entrants > limit:
            raise ValueError(f"a {kind.value} holds at most {limit} entrants")
        if self.min_entrants > self.max_entrants:
            raise ValueError("min_entrants is more than max_entrants")
        if kind is EventKind.SWISS and self.rounds is not None and self.rounds >= self.max_entrants + 1:
            raise ValueError(f"{self.rounds} rounds need more than {self.max_entrants} entrants: no repeat pairing")
        if bool(self.names) != (self.entry is Entry.LISTED):
            raise ValueError("names go with entry 'listed', and 'listed' needs names")
        return self

    @classmethod
    def checked(cls, **fields: object) -> EventSettings:
        """Settings from keyword values, or `BadEventError` naming the first thing wrong."""
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            raise BadEventError(_first_problem(exc)) from None

    def text(self) -> str:
        """The settings as compact JSON, leaving out what is at its default; `parse` reads it back."""
        return self.model_dump_json(exclude_defaults=True)

    @classmethod
    def parse(cls, text: str) -> EventSettings:
        """Settings from their `text()` form, or `BadEventError`."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise BadEventError(_first_problem(exc)) from None

    def __repr__(self) -> str:
        return f"EventSettings.parse({self.text()!r})"

    __str__ = text


def _first_problem(exc: ValidationError) -> str:
    """One line for the first error pydantic found: the field, then what is wrong."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"event {where}: {message}" if where else f"event: {message}"

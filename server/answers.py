"""Public reads' answers, encoded once and shared: every client asking the same while the server is busy gets
the answer made for the first, at most `max_age` seconds old.

The lobby's match list and a page of stored games are the same for everyone who asks alike, and
making them (walking every room, reading and encoding hundreds of games) is the work a flood of
public reads multiplies. While the event loop keeps up each read is answered fresh; while it is
overloaded (see `server.admission`) a read is answered with the kept text, so the work no longer
grows with the number of askers. The rows an answer holds are still charged to the asker's budgets.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

MAX_AGE_S = 1.0
MAX_ANSWERS = 32
"""Different reads kept at once (the least recently made forgotten first)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One read's encoded reply, how many rows it holds, and when it was made."""

    text: bytes
    rows: int
    made: float


class Answers:
    """Encoded answers by the read they answer (a hashable key), bounded in number."""

    def __init__(self, max_age: float = MAX_AGE_S, max_answers: int = MAX_ANSWERS,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self.max_answers = max_answers
        self.now = now
        self.kept: OrderedDict[Hashable, Answer] = OrderedDict()
        self.made = 0
        """Answers made (not served from those kept): the work public reads cost."""

    def fresh(self, key: Hashable) -> Answer | None:
        """The answer kept for `key` if it is at most `max_age` old, else None."""
        answer = self.kept.get(key)
        return answer if answer is not None and self.now() - answer.made <= self.max_age else None

    def rows(self, key: Hashable) -> int:
        """The rows of the last answer to `key`, however old (0 if none): what the next one will likely cost."""
        answer = self.kept.get(key)
        return 0 if answer is None else answer.rows

    def keep(self, key: Hashable, text: bytes, rows: int) -> Answer:
        """Keep a new answer to `key`."""
        self.made += 1
        answer = Answer(text, rows, self.now())
        self.kept.pop(key, None)
        self.kept[key] = answer
        while len(self.kept) > self.max_answers:
            self.kept.popitem(last=False)
        return answer

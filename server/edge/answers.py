"""Public reads' answers, encoded once and shared: every client asking the same while the server is busy, or
while many ask it, gets the answer made for the first, at most `max_age` seconds old.

The lobby's match list and a page of stored games are the same for everyone who asks alike, and
making them (walking every room, reading and encoding hundreds of games) is the work a flood of
public reads multiplies. A read asked now and then is answered fresh; one asked more than
`popular` times within `max_age`, or any while the server is overloaded (see `server.front.admission`),
is answered with the kept text, so the work no longer grows with the number of askers. The rows
an answer holds are still charged to the asker's budgets.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

MAX_AGE_S = 1.0
STALE_S = 5.0
"""While a new answer to a read is being made, how old the last one may be and still be shared."""
POPULAR = 50
"""Askers of one read within `max_age` past which they share its answer, however quiet the server is."""
MAX_ANSWERS = 32
"""Different reads kept at once (the least recently made forgotten first)."""


@dataclass(slots=True)
class Answer:
    """One read's encoded reply, how many rows it holds, when it was made, and how often the read was asked since
    `since` (a window of `max_age`) and in the window before."""

    text: bytes
    rows: int
    made: float
    since: float
    asked: int = 0
    before: int = 0


class Answers:
    """Encoded answers by the read they answer (a hashable key), bounded in number."""

    def __init__(self, max_age: float = MAX_AGE_S, max_answers: int = MAX_ANSWERS, popular: int = POPULAR,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.max_age = max_age
        self.popular = popular
        self.max_answers = max_answers
        self.now = now
        self.kept: OrderedDict[Hashable, Answer] = OrderedDict()
        self.made = 0
        """Answers made (not served from those kept): the work public reads cost."""
        self.in_making: Counter[Hashable] = Counter()
        """Reads whose new answer is being made (by how many askers)."""

    def shared(self, key: Hashable, busy: bool) -> Answer | None:
        """The answer kept for `key` to send again, if it is at most `max_age` old and the server is `busy` or
        the read is popular (counting this ask); else None (make a fresh one)."""
        answer = self.kept.get(key)
        if answer is None:
            return None
        now = self.now()
        if now - answer.since > self.max_age:  # a new window: the last one's count is kept if it just ended
            answer.before = answer.asked if now - answer.since <= 2 * self.max_age else 0
            answer.since, answer.asked = now, 0
        answer.asked += 1
        age = now - answer.made
        fresh = age <= self.max_age or (key in self.in_making and age <= STALE_S)  # not everyone makes it anew
        return answer if fresh and (busy or answer.asked + answer.before > self.popular) else None

    @contextmanager
    def making(self, key: Hashable) -> Iterator[None]:
        """While a new answer to `key` is being made (askers meanwhile may share the last one)."""
        self.in_making[key] += 1
        try:
            yield
        finally:
            self.in_making[key] -= 1
            if not self.in_making[key]:
                del self.in_making[key]

    def rows(self, key: Hashable) -> int:
        """The rows of the last answer to `key`, however old (0 if none): what the next one will likely cost."""
        answer = self.kept.get(key)
        return 0 if answer is None else answer.rows

    def keep(self, key: Hashable, text: bytes, rows: int) -> Answer:
        """Keep a new answer to `key`."""
        self.made += 1
        now = self.now()
        old = self.kept.pop(key, None)
        answer = Answer(text, rows, now, now) if old is None else Answer(text, rows, now, old.since, old.asked,
                                                                         old.before)
        self.kept[key] = answer
        while len(self.kept) > self.max_answers:
            self.kept.popitem(last=False)
        return answer

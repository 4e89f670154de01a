"""Shared answers of public reads: made fresh while few ask, shared while many ask or the server is busy."""

from __future__ import annotations

from server.edge.answers import Answers
from tests.helpers.wire import FakeClock


def ask(answers: Answers, busy: bool = False) -> bool:
    """One ask of the read `list`: whether the kept answer was shared (else a fresh one is made and kept)."""
    if answers.shared("list", busy) is not None:
        return True
    answers.keep("list", b"{}", 3)
    return False


def test_a_read_few_ask_is_made_fresh_each_time() -> None:
    """Below `popular` asks a window, each ask gets a fresh answer; the rows of the last one are known."""
    clock = FakeClock()
    answers = Answers(max_age=1.0, popular=5, now=clock)
    assert [ask(answers) for _ in range(5)] == [False] * 5
    assert answers.made == 5 and answers.rows("list") == 3 and answers.rows("games") == 0


def test_a_popular_read_stays_shared_into_the_next_window() -> None:
    """Past `popular` asks the answer is shared until it is `max_age` old; in the next window the read is still
    popular (the last window's asks count), so it is made once, not `popular` times, per window."""
    clock = FakeClock()
    answers = Answers(max_age=1.0, popular=5, now=clock)
    assert [ask(answers) for _ in range(8)] == [False] * 6 + [True] * 2  # the first ask finds none to count
    clock.advance(1.5)
    assert [ask(answers) for _ in range(4)] == [False, True, True, True]
    clock.advance(5.0)  # quiet for long: the read is no longer popular
    assert [ask(answers) for _ in range(2)] == [False, False]


def test_a_busy_server_shares_any_read_and_keeps_a_bounded_number() -> None:
    """While busy every read within `max_age` is shared; at most `max_answers` reads are kept."""
    clock = FakeClock()
    answers = Answers(max_age=1.0, max_answers=2, now=clock)
    assert [ask(answers, busy=True) for _ in range(3)] == [False, True, True]
    for key in ("a", "b", "c"):
        answers.keep(key, b"{}", 1)
    assert list(answers.kept) == ["b", "c"]


def test_while_an_answer_is_made_a_popular_read_shares_the_last_one() -> None:
    """While one asker makes a new answer, the others of a popular read get the last one (up to 5 s old) instead
    of each making their own; once it is kept, they get the new one."""
    clock = FakeClock()
    answers = Answers(max_age=1.0, popular=1, now=clock)
    assert [ask(answers) for _ in range(3)] == [False, False, True]
    clock.advance(2.0)
    assert answers.shared("list", False) is None  # too old: this asker makes the new one
    with answers.making("list"):
        assert ask(answers)  # the last one, 2 s old, while the new one is made
        clock.advance(4.0)
        assert answers.shared("list", False) is None  # 6 s old: too old even so
    answers.keep("list", b"[]", 0)
    kept = answers.shared("list", False)
    assert kept is not None and kept.text == b"[]"

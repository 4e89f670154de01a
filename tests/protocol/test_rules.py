"""Each rule and each option of RULES.md on hand-made positions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protocol import IllegalMoveError, Sow, Variant, compile_variant
from protocol.sowing import sow
from tests.conftest import NORTH, SOUTH, pos

K64 = "kalah(6,4)"


def test_capture_takes_opposite_and_last_seed() -> None:
    """Landing in an own empty house captures it and the opposite house."""
    p = pos(K64, [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 5, 0, 0])
    after, event = p.apply_event(Sow(1))
    assert after.pits == (0, 0, 0, 0, 0, 1, 6, 1, 0, 0, 0, 0, 0, 0)
    assert event.capture == (11, 6) and event.captured_bin == 12
    assert after.to_move == NORTH and not event.extra_turn


def test_standard_capture_needs_opposite_seeds() -> None:
    """Under the standard rule an empty opposite house means no capture."""
    p = pos(K64, [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 5, 0])
    after, event = p.apply_event(Sow(1))
    assert event.capture is None
    assert after.pits == (0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 5, 0)


def test_empty_capture_takes_last_seed_alone() -> None:
    """Under empty capture the last seed goes to the store even with an empty opposite."""
    p = pos("kalah(6,4,capture=empty)", [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 5, 0])
    after, event = p.apply_event(Sow(1))
    assert event.capture == (11, 1)
    assert after.pits == (0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 5, 0)


def test_no_capture_option() -> None:
    """With capture=none nothing is captured."""
    p = pos("kalah(6,4,capture=none)", [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 5, 0, 0])
    after, event = p.apply_event(Sow(1))
    assert event.capture is None
    assert after.pits[1] == 1 and after.pits[11] == 5 and after.pits[6] == 0


def test_landing_in_opponent_empty_house_captures_nothing() -> None:
    """Only the mover's own empty houses capture."""
    p = pos(K64, [1, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0, 0])
    after, event = p.apply_event(Sow(6))
    assert event.capture is None and after.pits[7] == 1 and after.pits[6] == 1


def test_sowing_skips_opponent_store() -> None:
    """South's seeds skip North's store (bin 14) and go on into South's own row."""
    p = pos(K64, [0, 1, 0, 0, 0, 9, 0, 1, 1, 1, 1, 1, 1, 0])
    after, event = p.apply_event(Sow(6))
    assert event.path == (7, 8, 9, 10, 11, 12, 13, 1, 2)
    assert after.pits[13] == 0 and after.pits[6] == 1 and after.pits[1] == 2


def test_north_skips_south_store() -> None:
    """North's seeds skip South's store (bin 7)."""
    p = pos(K64, [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 3, 0], "N")
    _, event = p.apply_event(Sow(13))
    assert event.path == (14, 1, 2)
    p = pos(K64, [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 9, 0], "N")
    _, event = p.apply_event(Sow(13))
    assert event.path == (14, 1, 2, 3, 4, 5, 6, 8, 9)


def test_lap_passes_emptied_house() -> None:
    """Thirteen seeds go round once and the last lands in the emptied start house."""
    p = pos(K64, [13, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    after, event = p.apply_event(Sow(1))
    assert len(event.path) == 13 and event.path[-1] == 1
    # bin 1 received the last seed into an empty house: it captures bin 13 (1 seed).
    assert event.capture == (12, 2)
    assert sum(after.pits) == 15


def test_many_laps() -> None:
    """Thirty seeds make two full laps plus four."""
    p = pos(K64, [0, 0, 30, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    after, event = p.apply_event(Sow(3))
    assert len(event.path) == 30
    assert after.pits[2] == 2  # the start house got a seed on each full lap
    assert after.pits[13] == 0 and sum(after.pits) == 31


def test_extra_turn_and_chain() -> None:
    """A last seed in the own store gives another turn, any number of times."""
    p = pos(K64, [4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0])
    after, event = p.apply_event(Sow(3))
    assert event.extra_turn and after.to_move == SOUTH
    after, event = after.apply_event(Sow(6))
    assert not event.extra_turn and after.to_move == NORTH


def test_no_extra_turn_option() -> None:
    """KalahAlt: a last seed in the store ends the turn."""
    p = pos("kalah(6,4,extra=off)", [4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0])
    after, event = p.apply_event(Sow(3))
    assert not event.extra_turn and after.to_move == NORTH and after.pits[6] == 1


@pytest.mark.parametrize(
    ("leftover", "stores"),
    [("owner", (10, 38)), ("emptier", (48, 0)), ("discard", (10, 0))],
)
def test_end_sweep_leftover_rules(leftover: str, stores: tuple[int, int]) -> None:
    """When South's houses empty, the leftover rule decides where North's seeds go."""
    v = f"kalah(6,4,leftover={leftover})"
    p = pos(v, [0, 0, 0, 0, 0, 1, 9, 8, 8, 8, 7, 7, 0, 0])
    after = p.apply(Sow(6))
    assert after.over and after.end == "empty"
    assert after.stores == stores
    assert after.result == stores[0] - stores[1]
    assert all(after.pits[i] == 0 for i in range(13) if i != 6)


def test_majority_end() -> None:
    """With majority end the game stops once a store holds more than half the seeds."""
    pits = [1, 0, 0, 0, 0, 1, 24, 1, 0, 0, 0, 1, 0, 20]
    p = pos("kalah(6,4,majority=on)", pits)
    after = p.apply(Sow(6))  # 25 > 24
    assert after.over and after.end == "majority"
    assert after.stores == (26, 22)
    plain = pos(K64, pits).apply(Sow(6))
    assert not plain.over


def test_majority_end_with_emptier_falls_back_to_owner() -> None:
    """When neither side is empty at a majority end, leftovers go to their owner."""
    p = pos("kalah(6,4,majority=on,leftover=emptier)", [1, 0, 0, 0, 0, 1, 24, 1, 0, 0, 0, 1, 0, 20])
    assert p.apply(Sow(6)).stores == (26, 22)


def test_relay_chain() -> None:
    """Relay: a last seed in an occupied house lifts it and sowing goes on."""
    p = pos("kalah(6,4,relay=on)", [2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0])
    after, event = p.apply_event(Sow(1))
    # bin 1 (2 seeds) -> 2, 3 (now 2): lift 3 -> 4, 5 (empty): stop.
    assert event.segments == ((0, 2), (2, 2))
    assert event.path == (2, 3, 4, 5)
    assert after.pits[:7] == (0, 1, 0, 1, 1, 0, 0)
    assert event.capture is None and after.to_move == NORTH


def test_relay_never_captures_and_can_cross_sides() -> None:
    """Relay continues from an opponent's house and ends in the own store with an extra turn."""
    p = pos("kalah(6,4,relay=on)", [0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0])
    after, event = p.apply_event(Sow(6))
    # 6 -> 7, 8 (now 2): lift 8 -> 9, 10 (empty): stop.
    assert event.segments == ((5, 2), (7, 2)) and after.to_move == NORTH
    q = pos("kalah(6,4,relay=on)", [0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])
    after, event = q.apply_event(Sow(4))  # 4 -> 5 (empty) stop, no capture under relay
    assert event.capture is None and after.pits[4] == 1


def test_relay_into_store_gives_extra_turn() -> None:
    """Relay ends in the own store: extra turn."""
    p = pos("kalah(6,4,relay=on)", [0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    after, event = p.apply_event(Sow(4))  # 4 -> 5 (now 2): lift -> 6, 7 store
    assert event.extra_turn and after.to_move == SOUTH and after.pits[6] == 1


def test_clockwise_paths() -> None:
    """Clockwise: own houses toward bin 1, then the opponent's row, then the own store."""
    v = "kalah(6,4,clockwise=on)"
    p = pos(v, [4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0])
    _, event = p.apply_event(Sow(3))
    assert event.path == (2, 1, 13, 12)
    big = pos(v, [0, 0, 10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    _, event = big.apply_event(Sow(3))
    assert event.path == (2, 1, 13, 12, 11, 10, 9, 8, 7, 6)
    north = pos(v, [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0], "N")
    _, event = north.apply_event(Sow(10))
    assert event.path == (9, 8, 6, 5)


def test_clockwise_store_and_capture() -> None:
    """Clockwise sowing still scores in the own store and captures the same opposite house."""
    v = "kalah(6,4,clockwise=on)"
    p = pos(v, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0])
    after, event = p.apply_event(Sow(2))  # 2 -> 1 (empty, opposite 13 has 3)
    assert event.capture == (12, 4) and after.pits[6] == 4


def test_illegal_moves_are_refused_untouched() -> None:
    """Moves from the wrong side, empty houses, stores or off the board raise typed errors."""
    p = pos(K64, [4, 0, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0])
    for bad in (2, 7, 8, 14, 0, 15):
        with pytest.raises(IllegalMoveError):
            p.apply(Sow(bad))
    assert p.pits == (4, 0, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0)


def test_relay_stops_when_a_state_repeats() -> None:
    """The relay guard: a chain that comes back to a state it was in ends the turn there.

    Real boards rarely cycle within one turn, so the tables are bent into a two-pit loop.
    """
    real = compile_variant(Variant.parse("kalah(1,1,relay=on)"))
    loop = ((2,), (), (0,), ())  # South's lap from pit 0 is just pit 2, and from pit 2 just pit 0
    tables = replace(real, laps=(loop, real.laps[1]))
    pits = [1, 0, 1, 0]
    segments, capture, extra = sow(tables, pits, 0, 0)
    assert segments == [(0, 1), (2, 2), (0, 2)]
    assert pits == [0, 0, 2, 0] and capture is None and not extra
